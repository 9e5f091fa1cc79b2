"""A NumPy reference interpreter of checked tensor-language IR: the oracle of `tinyc run --check`.

    from tinyc.reference import run
    run(fn, [alpha, A, B, C, D], batch=1000, groups=[0, 17, 999])

`fn` is one function of a parsed and verified program, normally *before* the
passes (lowering rewrites it in place; parse the source again for the
reference). Lowered IR runs too, which checks a lowering without a device.
Arguments follow the kernel's Python API and arrays are updated in place.
The interpreter follows the spec instruction by instruction and shares no
code with the compiler's lowering, so a disagreement points at one of them.

How it executes
  * Collective code runs once per work-group with uniform values (NumPy
    scalars of the IR type's dtype; index -> int64, c32 -> complex64, ...).
  * SPMD regions run vectorised in lock-step: a value is an array with one
    entry per lane. `parallel` has one lane per work-item (X·Y from
    `work_group_size`, subgroups of S consecutive lanes along x); `foreach`
    has one lane per iteration, the first loop variable fastest, in chunks of
    65536. Divergent `if` runs both paths under masks; loops with per-lane
    trip counts run until every lane is done. Lock-step execution is one
    valid schedule, so a barrier is a check (all work-items reach it) only.
  * Geometry: `run(..., work_group_size=, subgroup_size=)`, else the
    function's attributes, else subgroups of 16 and a work-group of (16, 1).

Numerics (decisions where the spec is silent)
  * Integers wrap; div truncates toward zero and rem has the dividend's sign
    (C); shr is arithmetic; shift counts are taken modulo the bit width (as
    OpenCL C and the compiled kernels). Float rem is fmod; min/max are fmin/fmax (a NaN
    operand loses), as OpenCL.std. Casts follow the spec's table; float to
    integer truncates.
  * f16 arithmetic rounds after every operation (NumPy float16). bf16
    registers are float32 values rounded to bf16 (nearest even) after every
    operation; bf16 memory holds uint16 bit patterns.
  * Collectives compute in the output's element type (16-bit floats
    accumulate in f32) and round once to it; beta = 0 does not read the
    output (NaN there does not leak). `.atomic` variants equal the plain ones.
  * math.native_exp is computed like math.exp; compare it with a tolerance.
  * Subgroup scans and reductions fold in subgroup-local-id order, rounding
    each partial result to the operand type.
  * Coopmatrix values (lowered IR) are one whole matrix per subgroup; their
    operands must be subgroup-uniform. mul_add accumulates like gemm.
  * A collective-region `store.atomic_add` runs on every work-item, so it
    adds X·Y times; a plain store writes once (all work-items write the same).
  * Local memory (alloca) starts as NaN (integers: 0xA5 bytes) and is
    scribbled over again at `lifetime_stop`, so reads of undefined memory show.

Errors
  * ReferenceFault: behaviour the spec leaves undefined for these inputs:
    out-of-bounds load/store/subview/group index, expand or fuse whose
    dynamic sizes or strides do not fit, integer division by zero,
    float-to-integer casts of NaN or out-of-range values, a barrier in divergent control flow, a non-uniform
    subgroup_broadcast lane.
  * ReferenceUnsupported: subgroup operations, subgroup builtins and
    coopmatrix instructions inside `foreach` (no defined work-item) or with
    only part of a subgroup active (divergent control flow in a subgroup).
  * tinyc.LaunchError: arguments that do not fit the signature (group
    members are checked when a work-group loads them).
"""

from tinyc.reference.errors import ReferenceFault, ReferenceUnsupported

__all__ = ["Geometry", "ReferenceFault", "ReferenceUnsupported", "geometry_of", "run"]

_LAZY = {"run": "tinyc.reference.interpreter", "geometry_of": "tinyc.reference.interpreter",
         "Geometry": "tinyc.reference.state"}
"""Loaded on first use: `tinyc run` without --check (and the tuner, which only copies
arguments with `reference.arguments`) need no interpreter."""


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tinyc.reference' has no attribute '{name}'")
