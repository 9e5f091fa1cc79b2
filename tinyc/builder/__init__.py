"""Build tensor-language programs from Python: `tinyc.builder`.

    from tinyc.builder import Program, f32, memref, group

    prog = Program()
    fn = prog.function("fused_kernel", alpha=f32, A=group(memref(f32, 16, 8)),
                       B=memref(f32, 8, 8), C=memref(f32, 8, 16), D=memref(f32, 16, 16, None))
    alpha, A, B, C, D = fn.params
    i = fn.group_id()
    a = fn.load(A, [i])
    d = fn.subview(D, (slice(None), slice(None), i))
    tmp = fn.alloca(memref(f32, 16, 8, local=True))
    fn.gemm(1.0, a, B, 0.0, tmp, transpose_b=True)
    fn.gemm(alpha, tmp, C, 1.0, d)
    kernel = tinyc.compile(prog)["fused_kernel"]

Every instruction of the language has a method (see docs/builder.md); the
regions of for/if/foreach/parallel are `with` blocks. `str(prog)` is source
text that parses back to the same IR, and verifier errors on built IR point
at the Python line that built the offending instruction.
"""

from tinyc.builder.function import FunctionBuilder, instruction_classes
from tinyc.builder.regions import Branch, Loop
from tinyc.builder.program import Program
from tinyc.builder.types import (
    DYNAMIC, bf16, bool_, c32, c64, coopmatrix, f16, f32, f64, group, i8, i16, i32, i64, index,
    memref, scalar,
)
from tinyc.ir.core import Value

__all__ = [
    "Program", "FunctionBuilder", "Loop", "Branch", "Value", "instruction_classes",
    "DYNAMIC", "memref", "group", "coopmatrix", "scalar",
    "bool_", "i8", "i16", "i32", "i64", "index", "bf16", "f16", "f32", "f64", "c32", "c64",
]
