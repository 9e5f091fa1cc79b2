"""work-group-size: choose each kernel's subgroup size S and work-group size (X, Y).

X tiles rows and Y columns (spec: function attributes); X is a multiple of
S, subgroups are formed along X. Results go to `fn.attrs["subgroup_size"]`
and `fn.attrs["work_group_size"] = [X, Y]`.

Overrides, strongest first: the function's `subgroup_size` and
`work_group_size` attributes, then the caller's `subgroup_size`
(`tinyc.compile(subgroup_size=)`). They are checked against the device here
(the verifier only knows the union of all targets); a violation is a
CompilationError at the function.

Defaults when nothing is forced:

- S = 16 for every element type: the width of an AVX-512 vector of f32 on
  the CPU device and the native SIMD width of Intel's data-centre GPUs.
  Measured on the CPU device (batched gemm, kernel time, best of 3): 8 lanes
  for f64 were no faster than 16 (16x16x16: 1.18 vs 1.14 ms), and f16 at 32
  lanes was 4x slower than at 16, so the element type does not change S.
  Coopmatrix types in the kernel narrow the choice to sizes that divide the
  rows of every matrix_a and matrix_acc (but for matrices with fewer rows
  than any size, such as a column reduction's 1×N, which pad at any size).
  The supported size nearest to 16 (on a log scale; the larger on a tie) is
  taken — nearest to 8 when every gemm/gemv/ger output has at most 8 rows,
  known at compile time (rows go across lanes: 16 lanes would leave half of
  each vector idle). The `subgroup_size` schedule knob and the autotuner try
  the others.
- With a `work_group_size` attribute but no subgroup size, S is the
  supported divisor of X nearest to 16, so `work_group_size=[32, 2]` means
  four subgroups of 16 whatever the device, as a user of the attribute
  expects.
- CPU device: (X, Y) = (S, 1). A work-group runs on one hardware thread, so
  more subgroups only add barrier context switches.
- Other devices: X = S and Y = the column tiles (of S columns) of the
  largest collective instruction's output, at most MAX_COLUMN_SUBGROUPS.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

from tinyc.diagnostics import CompilationError, Diagnostic
from tinyc.ir.core import Function
from tinyc.ir.instructions import BlasInstruction
from tinyc.ir.types import DYNAMIC, CoopMatrixType, MatrixUse, MemrefType
from tinyc.std import DEFAULT, Std, Version
from tinyc.target.device_info import DeviceInfo, device_of

if TYPE_CHECKING:
    from tinyc.passes import PassOptions

DEFAULT_SUBGROUP_SIZE = 16
MAX_COLUMN_SUBGROUPS = 4          # Y cap on GPU-like devices
_UNKNOWN_COLUMNS = 1 << 20        # a `?` column count: as many tiles as allowed


def choose_work_group_size(fn: Function, options: "PassOptions | None" = None) -> None:
    """Record `subgroup_size` and `work_group_size` in the function's attributes."""
    device = device_of(options)
    version = getattr(options, "version", None) or Version(DEFAULT, "default")
    multiples = [(size, what, inst) for inst in fn.walk()
                 for size, what in inst.subgroup_multiples(version.std)]
    sgs = _forced_subgroup_size(fn, options, device)
    wgs = fn.attrs.get("work_group_size")
    allowed = [s for s in device.subgroup_sizes if all(size % s == 0 for size, _, _ in multiples)]
    if sgs is not None or not allowed:
        _check_multiples(fn, multiples, sgs, device, version)
    if wgs is not None:
        rows, cols = _checked_work_group_size(fn, wgs, sgs, device)
        if sgs is None:
            sgs = preferred_subgroup_size(fn, device, [s for s in allowed if rows % s == 0]
                                          or [s for s in device.subgroup_sizes if rows % s == 0])
    else:
        if sgs is None:
            sgs = preferred_subgroup_size(fn, device, allowed, preferred=_rows_preference(fn))
        rows, cols = default_work_group_size(fn, sgs, device)
    fn.attrs["subgroup_size"] = sgs
    fn.attrs["work_group_size"] = [rows, cols]
    check_subgroup_rules(fn, sgs)


def check_subgroup_rules(fn: Function, sgs: int) -> None:
    """Rules that depend on the subgroup size (coopmatrix layouts: extract/insert indices).

    The verifier checks them when the `subgroup_size` attribute gives the size;
    otherwise they can only be checked here, once the size is chosen.
    """
    for inst in fn.walk():
        rule = getattr(inst, "subgroup_size_problem", None)
        problem = rule(sgs) if rule is not None else None
        if problem:
            raise CompilationError(Diagnostic(f"{inst.title}: {problem}", inst.span))


def _check_multiples(fn: Function, multiples: list, sgs: int | None, device: DeviceInfo,
                     version: Version) -> None:
    """Sizes that must be multiples of the subgroup size (`Instruction.subgroup_multiples`)."""
    for size, what, inst in multiples:
        if sgs is not None and size % sgs == 0:
            continue
        rule = version.rule() if inst.subgroup_multiples(Std.SEED) == [] else ""
        wanted = f"the subgroup size ({sgs})" if sgs is not None else \
            f"a subgroup size the device supports ({_sizes_text(device)}) that fits the kernel"
        raise CompilationError(Diagnostic(f"{inst.title}: {what} ({size}) must be a multiple of "
                                          f"{wanted}{rule}", inst.span))


def _error(fn: Function, message: str) -> CompilationError:
    """Worded like the verifier's attribute errors, located at the function."""
    return CompilationError(Diagnostic(f"function '@{fn.name}': {message}", fn.span))


def _sizes_text(device: DeviceInfo) -> str:
    return ", ".join(map(str, device.subgroup_sizes))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _forced_subgroup_size(fn: Function, options: Any, device: DeviceInfo) -> int | None:
    """The attribute, else the caller's request; checked against the device."""
    if "subgroup_size" in fn.attrs:
        sgs, origin = fn.attrs["subgroup_size"], "subgroup_size"
        requested = getattr(options, "subgroup_size", None)
        if requested is not None and requested != sgs and options is not None:
            options.warnings.append(Diagnostic(
                f"function '@{fn.name}': its subgroup_size attribute ({sgs}) overrides the "
                f"requested subgroup size {requested}", fn.span, severity="warning",
                warning="subgroup-size-override"))
    elif getattr(options, "subgroup_size", None) is not None:
        sgs, origin = options.subgroup_size, "the subgroup size requested by the caller"
    else:
        return None
    if not _is_int(sgs):
        raise _error(fn, f"subgroup_size must be an integer, got {sgs!r}")
    if sgs not in device.subgroup_sizes:
        what = f"subgroup_size {sgs}" if origin == "subgroup_size" else f"{origin} ({sgs})"
        raise _error(fn, f"{what} is not supported by the device; use one of {_sizes_text(device)}")
    return sgs


def _checked_work_group_size(fn: Function, wgs: Any, sgs: int | None,
                             device: DeviceInfo) -> tuple[int, int]:
    if not isinstance(wgs, (list, tuple)) or len(wgs) != 2 or not all(map(_is_int, wgs)):
        raise _error(fn, f"work_group_size must be an array of 2 integers, got {wgs!r}")
    rows, cols = wgs
    if rows < 1 or cols < 1:
        raise _error(fn, f"work_group_size entries must be positive, got [{rows}, {cols}]")
    if sgs is not None and rows % sgs:
        forced = "subgroup_size" if "subgroup_size" in fn.attrs else \
            "subgroup size requested by the caller"
        raise _error(fn, f"the first work_group_size mode ({rows}) must be a multiple of the "
                         f"{forced} ({sgs})")
    if sgs is None and not any(rows % s == 0 for s in device.subgroup_sizes):
        raise _error(fn, f"the first work_group_size mode ({rows}) must be a multiple of a "
                         f"subgroup size supported by the device ({_sizes_text(device)})")
    if rows * cols > device.max_work_group_size:
        raise _error(fn, f"work_group_size {rows}x{cols} has {rows * cols} work-items; the device "
                         f"allows at most {device.max_work_group_size}")
    return rows, cols


def _nearest(candidates: list[int], preferred: int) -> int:
    """The candidate closest to `preferred` on a log scale; the larger one on a tie."""
    return min(candidates, key=lambda s: (abs(math.log2(s) - math.log2(preferred)), -s))


def preferred_subgroup_size(fn: Function, device: DeviceInfo, allowed: Sequence[int] | None = None,
                            preferred: int = DEFAULT_SUBGROUP_SIZE) -> int:
    """The size in `allowed` (default: the device's) nearest to `preferred` that suits the
    kernel's coopmatrix shapes."""
    candidates = list(device.subgroup_sizes if allowed is None else allowed)
    smallest = min(candidates, default=1)
    rows = [r for r in _coopmatrix_rows(fn) if r >= smallest]  # fewer rows pad at any size
    fitting = [s for s in candidates if all(r % s == 0 for r in rows)]
    return _nearest(fitting or candidates, preferred)


SMALL_ROWS = 8


def _rows_preference(fn: Function) -> int:
    """8 when every matmul's output has at most 8 rows, known at compile time; else 16.

    The matmul lowerings put C's rows across the lanes, so 16 lanes on an 8×8
    gemm leave half of each vector idle (the OpenCL C baselines ran 2-4x
    faster with 8-lane sub-groups at n = 8, benchmarks/README.md).
    """
    rows = [shape.M for inst in fn.walk() if inst.knobs and (shape := inst.matmul()) is not None]
    if rows and all(r is not None and r <= SMALL_ROWS for r in rows):
        return SMALL_ROWS
    return DEFAULT_SUBGROUP_SIZE


def _coopmatrix_rows(fn: Function) -> set[int]:
    """Row counts of the matrix_a and matrix_acc coopmatrices the kernel uses."""
    rows: set[int] = set()
    for inst in fn.walk():
        for value in (*inst.operands, *inst.results):
            t = value.type
            if isinstance(t, CoopMatrixType) and t.use in (MatrixUse.A, MatrixUse.ACC):
                rows.add(t.rows)
    return rows


def default_work_group_size(fn: Function, sgs: int, device: DeviceInfo) -> tuple[int, int]:
    """(S, 1) on a CPU; on other devices Y from the largest collective's column tiles."""
    if device.is_cpu:
        return sgs, 1
    cols = _largest_output_columns(fn)
    tiles = max(1, min(MAX_COLUMN_SUBGROUPS, -(-cols // sgs)))
    while tiles > 1 and sgs * tiles > device.max_work_group_size:
        tiles -= 1
    return sgs, tiles


def _largest_output_columns(fn: Function) -> int:
    """Columns of the output with the most elements among the collective BLAS instructions."""
    best, best_cols = -1, 1
    for inst in fn.walk():
        if not isinstance(inst, BlasInstruction) or not isinstance(inst.output.type, MemrefType):
            continue
        shape = inst.output.type.shape
        rows = shape[0] if len(shape) > 0 else 1
        cols = shape[1] if len(shape) > 1 else 1
        rows, cols = (_UNKNOWN_COLUMNS if s == DYNAMIC else s for s in (rows, cols))
        if rows * cols > best:
            best, best_cols = rows * cols, cols
    return best_cols
