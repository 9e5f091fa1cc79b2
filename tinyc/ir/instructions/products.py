"""The BLAS-like products: gemm, gemv, ger and hadamard_product (base class in blas.py)."""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir import knobs as k
from tinyc.ir.knobs import Knob, MatmulShape
from tinyc.ir.checks import check_shapes_equal, check_size_match, expect_order, op_shape
from tinyc.ir.addressing import SizeRule
from tinyc.ir.core import Value
from tinyc.ir.instructions.blas import (
    SCHEDULE_SYNTAX, BlasInstruction, ShapeOf, blas_memrefs, is_atomic, op_mode, op_of, static_size,
    transpose_suffix, transpose_syntax, transposes_of, with_schedule,
)
from tinyc.std import Std

if TYPE_CHECKING:
    import numpy as np

    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


class Gemm(BlasInstruction):
    """C := alpha op1(A) op2(B) + beta C."""

    opname = "gemm"
    keywords = ("gemm",)
    syntax = (transpose_syntax(2) + ' LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID'
              + SCHEDULE_SYNTAX)
    knobs = k.knobs(
        k.tile("register tile of C per subgroup step: [row blocks of S rows, columns]",
               k.TILE_ROWS, k.IntRange(1, 32)),
        k.k_unroll("K step: columns of op(A) per multiply-add step (the K loop unrolled by it)",
                   16, (1, 2, 4, 8, 16)),
        k.MATMUL_STAGE, k.MATMUL_VECTOR, k.MATMUL_TRANSPOSE,
        Knob("swap", "compute Cᵀ = op(B)ᵀ op(A)ᵀ and store it transposed (then `tile`, `stage` "
                     "and `vector_width` apply to that product, whose rows are C's columns); "
                     "stage must be false", k.Choice((False, True)), (False, True)))

    def matmul(self, swap: bool = False) -> MatmulShape:
        """C (M×N) += op(A) op(B); with `swap`, the product the lowering computes instead:
        Cᵀ = op(B)ᵀ op(A)ᵀ, whose rows are C's columns and whose first operand is B."""
        (a, b), c = (v.type for v in self.inputs), self.output.type
        if swap:
            return MatmulShape(static_size(c, 1), static_size(c, 0), static_size(b, 1 if self.transpose_b else 0),
                               c.element, b.element, not self.transpose_b, b, not self.transpose_a)
        return MatmulShape(static_size(c, 0), static_size(c, 1), static_size(a, 0 if self.transpose_a else 1),
                           c.element, a.element, self.transpose_a, a, self.transpose_b)

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """op(A) op(B)."""
        A, B = inputs
        return op_of(A, self.transpose_a) @ op_of(B, self.transpose_b)

    def summed_terms(self, shapes: Sequence[tuple[int, ...]]) -> int:
        return shapes[0][0 if self.transpose_a else 1]

    def __init__(self, transpose_a: bool, transpose_b: bool, alpha: Value, A: Value, B: Value,
                 beta: Value, C: Value, atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A, B], beta, C, atomic, span)
        self.transpose_a = transpose_a
        self.transpose_b = transpose_b

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Gemm":
        ta, tb = transposes_of(s, 2)
        return with_schedule(cls(ta, tb, *s.operands, atomic=is_atomic(s)), s)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """2·M·N·K."""
        a = shape_of(self.inputs[0])
        return 2.0 * prod(shape_of(self.output)) * (a[0] if self.transpose_a else a[1])

    def modifiers(self, newest: bool = False) -> str:
        t = transpose_suffix(self.transpose_a) + transpose_suffix(self.transpose_b)
        return super().modifiers() + t if newest else t + super().modifiers()

    def verify(self, ctx: "VerifyContext") -> None:
        """Matrices whose shapes chain: op(A) is MxK, op(B) is KxN, C is MxN."""
        types = blas_memrefs(ctx, self, ("A", "B", "C"))
        if types is None:
            return
        ok = all([expect_order(ctx, self, 1, "A", types[0], (2,)),
                  expect_order(ctx, self, 2, "B", types[1], (2,)),
                  expect_order(ctx, self, 4, "C", types[2], (2,))])
        if not ok:
            return
        (m, k), (k2, n) = op_shape(types[0], self.transpose_a), op_shape(types[1], self.transpose_b)
        rows, cols = types[2].shape
        mats = [self.operands[1], self.operands[2], self.operands[4]]
        check_size_match(ctx, self, "columns of op(A)", k, "rows of op(B)", k2, mats)
        check_size_match(ctx, self, "rows of C", rows, "rows of op(A)", m, mats)
        check_size_match(ctx, self, "columns of C", cols, "columns of op(B)", n, mats)

    def size_rules(self) -> list[SizeRule]:
        """op(A) is MxK, op(B) KxN, C MxN."""
        ta, tb = self.transpose_a, self.transpose_b
        return [SizeRule((1, op_mode(ta, 1)), (2, op_mode(tb, 0)), "columns of op(A) = rows of op(B)"),
                SizeRule((4, 0), (1, op_mode(ta, 0)), "rows of C = rows of op(A)"),
                SizeRule((4, 1), (2, op_mode(tb, 1)), "columns of C = columns of op(B)")]


class Gemv(BlasInstruction):
    """c := alpha op(A) b + beta c."""

    opname = "gemv"
    keywords = ("gemv",)
    syntax = (transpose_syntax(1) + ' LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID'
              + SCHEDULE_SYNTAX)
    knobs = k.knobs(
        k.tile("register tile of c per subgroup step: [row blocks of S rows, 1]", k.TILE_ROWS, k.ONE),
        k.k_unroll("K step: columns of op(A) per multiply-add step", 16, (1, 2, 4, 8, 16)),
        k.MATMUL_STAGE, k.MATMUL_VECTOR, k.MATMUL_TRANSPOSE)

    def matmul(self, swap: bool = False) -> MatmulShape:
        """c (M×1) += op(A) (M×K) b (K×1)."""
        (a, _), c = (v.type for v in self.inputs), self.output.type
        return MatmulShape(static_size(c, 0), 1, static_size(a, 0 if self.transpose else 1), c.element,
                           a.element, self.transpose, a)

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """op(A) b."""
        A, b = inputs
        return op_of(A, self.transpose) @ b

    def summed_terms(self, shapes: Sequence[tuple[int, ...]]) -> int:
        return shapes[0][0 if self.transpose else 1]

    def __init__(self, transpose: bool, alpha: Value, A: Value, b: Value, beta: Value,
                 c: Value, atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A, b], beta, c, atomic, span)
        self.transpose = transpose

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Gemv":
        return with_schedule(cls(transposes_of(s, 1)[0], *s.operands, atomic=is_atomic(s)), s)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """2·M·K: a multiply-add per element of A."""
        return 2.0 * prod(shape_of(self.inputs[0]))

    def modifiers(self, newest: bool = False) -> str:
        t = transpose_suffix(self.transpose)
        return super().modifiers() + t if newest else t + super().modifiers()

    def verify(self, ctx: "VerifyContext") -> None:
        """op(A) is MxK, b has K rows, c has M rows."""
        types = blas_memrefs(ctx, self, ("A", "b", "c"))
        if types is None:
            return
        ok = all([expect_order(ctx, self, 1, "A", types[0], (2,)),
                  expect_order(ctx, self, 2, "b", types[1], (1,)),
                  expect_order(ctx, self, 4, "c", types[2], (1,))])
        if not ok:
            return
        m, k = op_shape(types[0], self.transpose)
        vals = [self.operands[1], self.operands[2], self.operands[4]]
        check_size_match(ctx, self, "columns of op(A)", k, "rows of b", types[1].shape[0], vals)
        check_size_match(ctx, self, "rows of c", types[2].shape[0], "rows of op(A)", m, vals)

    def size_rules(self) -> list[SizeRule]:
        """op(A) is MxK, b has K rows, c M rows."""
        t = self.transpose
        return [SizeRule((1, op_mode(t, 1)), (2, 0), "columns of op(A) = rows of b"),
                SizeRule((4, 0), (1, op_mode(t, 0)), "rows of c = rows of op(A)")]


class Ger(BlasInstruction):
    """C := alpha a b^T + beta C."""

    opname = "ger"
    keywords = ("ger",)
    syntax = 'atomic? LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID' + SCHEDULE_SYNTAX
    knobs = k.knobs(
        k.tile("register tile of C per subgroup step: [row blocks of S rows, columns]",
               k.TILE_ROWS, k.IntRange(1, 32)),
        k.fixed("k_unroll", "K is 1 in a rank-1 update", 1),
        k.fixed("stage", "a is a vector read once per tile: nothing to stage", False),
        k.fixed("vector_width", "a is read across lanes (contiguous), b as uniform values", 1))

    def matmul(self, swap: bool = False) -> MatmulShape:
        """C (M×N) += a (M×1) bᵀ (1×N)."""
        (a, _), c = (v.type for v in self.inputs), self.output.type
        return MatmulShape(static_size(c, 0), static_size(c, 1), 1, c.element, a.element, False, a)

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """a bᵀ."""
        a, b = inputs
        return a[:, None] * b[None, :]

    def __init__(self, alpha: Value, a: Value, b: Value, beta: Value, C: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [a, b], beta, C, atomic, span)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Ger":
        return with_schedule(cls(*s.operands, atomic=is_atomic(s)), s)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """One multiply a_i·b_j per element of C."""
        return float(prod(shape_of(self.output)))

    def verify(self, ctx: "VerifyContext") -> None:
        """Vectors a (M) and b (N), matrix C (MxN)."""
        types = blas_memrefs(ctx, self, ("a", "b", "C"))
        if types is None:
            return
        ok = all([expect_order(ctx, self, 1, "a", types[0], (1,)),
                  expect_order(ctx, self, 2, "b", types[1], (1,)),
                  expect_order(ctx, self, 4, "C", types[2], (2,))])
        if not ok:
            return
        vals = [self.operands[1], self.operands[2], self.operands[4]]
        rows, cols = types[2].shape
        check_size_match(ctx, self, "rows of C", rows, "rows of a", types[0].shape[0], vals)
        check_size_match(ctx, self, "columns of C", cols, "rows of b", types[1].shape[0], vals)

    def size_rules(self) -> list[SizeRule]:
        """C is MxN for a of M rows and b of N rows."""
        return [SizeRule((4, 0), (1, 0), "rows of C = rows of a"),
                SizeRule((4, 1), (2, 0), "columns of C = rows of b")]


class HadamardProduct(BlasInstruction):
    """c := alpha a ∘ b + beta c (element-wise product)."""

    opname = "hadamard_product"
    keywords = ("hadamard_product", "hadamard")
    versions = {"hadamard_product": Std.SEED}
    syntax = 'atomic? LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID' + SCHEDULE_SYNTAX
    knobs = k.ELEMENTWISE
    fixed_defaults = k.ONE_PER_LANE

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """a ∘ b."""
        a, b = inputs
        return a * b

    def __init__(self, alpha: Value, a: Value, b: Value, beta: Value, c: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [a, b], beta, c, atomic, span)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "HadamardProduct":
        return with_schedule(cls(*s.operands, atomic=is_atomic(s)), s)

    @property
    def title(self) -> str:
        return self.spelling or self.opname

    def format(self, p: "Printer") -> str:
        """`hadamard` in the newest language; the seed spec's `hadamard_product` otherwise
        (the seed's implementation read `hadamard` too, and so does tinyc)."""
        word = "hadamard" if p.newest else "hadamard_product"
        return f"{word}{self.modifiers()} " + ", ".join(p.v(v) for v in self.operands)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """One multiply per element."""
        return float(prod(shape_of(self.output)))

    def verify(self, ctx: "VerifyContext") -> None:
        """a, b, c of one order (1 or 2) and one shape."""
        types = blas_memrefs(ctx, self, ("a", "b", "c"))
        if types is None:
            return
        a, b, c = types
        if not expect_order(ctx, self, 1, "a", a, (1, 2)):
            return
        vals = [self.operands[1], self.operands[2], self.operands[4]]
        check_shapes_equal(ctx, self, "b", b.shape, "a", a.shape, vals)
        check_shapes_equal(ctx, self, "c", c.shape, "a", a.shape, vals)

    def size_rules(self) -> list[SizeRule]:
        """a, b and c of one shape."""
        order = self.output.type.order
        return ([SizeRule((2, k), (1, k), f"mode {k} of b = mode {k} of a") for k in range(order)]
                + [SizeRule((4, k), (1, k), f"mode {k} of c = mode {k} of a") for k in range(order)])
