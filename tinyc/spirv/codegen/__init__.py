"""SPIR-V code generation: lowered IR program -> SPIR-V 1.4 module + kernel metadata.

    binary, kernels = generate(program)

One Kernel entry point per function (OpenCL memory model, Physical64). The
package is split by concern; every emitter module registers its instruction
classes with `dispatch.emits` on import:

    kernel      entry points and the kernel ABI     analysis   ParamInfo facts
    types       IR types -> SPIR-V types            scalar     arithmetic per type
    arith       arith/cast/cmp/constant/math/builtin
    memref      descriptors, load/store, views, alloca
    control     for/if/parallel/foreach/barrier     atomics    atomic loads, stores, updates
    subgroup    broadcast, reductions, scans        coopmatrix per-lane matrices
    coopmatrix_elements  apply, extract, insert, reduce, prefetch
"""

from __future__ import annotations

from tinyc.ir.core import Program
from tinyc.signature import KernelInfo
from tinyc.spirv.codegen import (  # noqa: F401 (register emitters)
    arith, atomics, control, coopmatrix, coopmatrix_elements, memref, subgroup,
)
from tinyc.spirv.codegen.context import CodegenError
from tinyc.spirv.codegen.kernel import emit_kernel
from tinyc.spirv.module import Module
from tinyc.std import BATCH_AXIS

__all__ = ["CodegenError", "generate"]


def generate(program: Program, check_bounds: bool = False,
             fp_contract: bool = False) -> tuple[bytes, dict[str, KernelInfo]]:
    """The SPIR-V binary of every function, and per kernel what the runtime needs.

    `check_bounds`: the variant that checks every access (codegen/bounds.py);
    `fp_contract`: a real add of a single-use product as one fma (kernel.py)."""
    m = Module((1, 4))
    axis = BATCH_AXIS[program.std]
    kernels = {fn.name: emit_kernel(m, fn, axis, check_bounds, fp_contract) for fn in program.functions}
    binary = m.assemble()
    m.release()
    return binary, kernels
