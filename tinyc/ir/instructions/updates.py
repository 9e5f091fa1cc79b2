"""The BLAS-like updates of one input: axpby, sum and cumsum (base classes in blas.py)."""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir import knobs as k
from tinyc.ir.checks import check_shapes_equal, check_size_match, expect_order, inst_error, op_shape
from tinyc.ir.addressing import SizeRule
from tinyc.ir.core import Value
from tinyc.ir.instructions.blas import (
    SCHEDULE_SYNTAX, BlasInstruction, ShapeOf, TransposedUpdate, blas_memrefs, is_atomic, op_mode, op_of,
    transpose_syntax, with_schedule,
)

if TYPE_CHECKING:
    import numpy as np

    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


class Axpby(TransposedUpdate):
    """B := alpha op(A) + beta B."""

    opname = "axpby"
    keywords = ("axpby",)
    syntax = transpose_syntax(1) + ' LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID' + SCHEDULE_SYNTAX
    knobs = k.ELEMENTWISE
    fixed_defaults = k.ONE_PER_LANE

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """op(A)."""
        return op_of(inputs[0], self.transpose)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """op(A) itself costs nothing; the update does the work."""
        return 0.0

    def verify(self, ctx: "VerifyContext") -> None:
        """B := alpha op(A) + beta B with shape(B) = shape(op(A)), order(B) <= 2."""
        types = blas_memrefs(ctx, self, ("A", "B"))
        if types is None:
            return
        A, B = types
        if expect_order(ctx, self, 3, "B", B, (0, 1, 2)):
            check_shapes_equal(ctx, self, "B", B.shape, "op(A)", op_shape(A, self.transpose),
                               [self.operands[1], self.operands[3]])

    def size_rules(self) -> list[SizeRule]:
        """shape(B) = shape(op(A))."""
        order = self.output.type.order
        transposed = self.transpose and order == 2
        return [SizeRule((3, k), (1, op_mode(transposed, k)), f"mode {k} of B = mode {k} of op(A)")
                for k in range(order)]


class Cumsum(BlasInstruction):
    """B := alpha A ×_n L + beta B: inclusive prefix sum along mode n."""

    opname = "cumsum"
    keywords = ("cumsum",)
    syntax = 'atomic? LOCAL_ID "," LOCAL_ID "," INTEGER "," LOCAL_ID "," LOCAL_ID' + SCHEDULE_SYNTAX
    knobs = k.knobs(
        k.tile("[chunks of S elements scanned per loop step along mode 0, 1] (the carry runs "
               "through them in order)", k.TILE_ROWS, k.ONE),
        k.fixed("k_unroll", "a scan step depends on the previous one", 1),
        k.NOTHING_TO_STAGE, k.NEIGHBOURS)
    fixed_defaults = k.ONE_PER_LANE

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """Inclusive prefix sums of A along mode n."""
        return inputs[0].cumsum(axis=self.mode)

    def summed_terms(self, shapes: Sequence[tuple[int, ...]]) -> int:
        return shapes[0][self.mode]

    def accumulators(self, tile: Sequence[int]) -> int:
        """The running sum and the scan of each line."""
        return 2 * tile[1]

    def __init__(self, alpha: Value, A: Value, mode: int, beta: Value, B: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A], beta, B, atomic, span)
        self.mode = mode

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Cumsum":
        alpha, A, beta, B = s.operands
        return with_schedule(cls(alpha, A, s.literals[0], beta, B, atomic=is_atomic(s)), s)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """One add per element of A."""
        return float(prod(shape_of(self.inputs[0])))

    def format(self, p: "Printer") -> str:
        a, A, beta, B = (p.v(v) for v in self.operands)
        return f"cumsum{self.modifiers(p.newest)} {a}, {A}, {self.mode}, {beta}, {B}{self.schedule_text(p)}"

    def verify(self, ctx: "VerifyContext") -> None:
        """order(A) >= 1, shape(A) = shape(B), summation mode in range (from 0)."""
        types = blas_memrefs(ctx, self, ("A", "B"))
        if types is None:
            return
        A, B = types
        if A.order < 1:
            inst_error(ctx, self, f"A must have order 1 or more, got order 0 ({A})", [self.operands[1]])
            return
        if not 0 <= self.mode < A.order:
            inst_error(ctx, self, f"summation mode {self.mode} is out of range for A of order "
                                  f"{A.order} (modes count from 0)", [self.operands[1]])
        check_shapes_equal(ctx, self, "B", B.shape, "A", A.shape, [self.operands[1], self.operands[3]])

    def size_rules(self) -> list[SizeRule]:
        """shape(B) = shape(A)."""
        return [SizeRule((3, k), (1, k), f"mode {k} of B = mode {k} of A")
                for k in range(self.output.type.order)]


class Sum(TransposedUpdate):
    """b := alpha op(A) 1 + beta b (row sums, or the sum of a vector)."""

    opname = "sum"
    keywords = ("sum",)
    syntax = transpose_syntax(1) + ' LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID' + SCHEDULE_SYNTAX
    knobs = k.knobs(
        k.tile("[independent partial sums per lane, 1] (more than 1 changes the order of the "
               "additions)", k.TILE_ROWS, k.ONE),
        k.k_unroll("elements added to each partial sum per loop step (in order)", 8, (1, 2, 4, 8)),
        k.NOTHING_TO_STAGE, k.NEIGHBOURS)
    fixed_defaults = k.ONE_PER_LANE
    order_changing = ("tile",)

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """The row sums of op(A), or the sum of a vector."""
        (A,) = inputs
        return A.sum() if A.ndim == 1 else op_of(A, self.transpose).sum(axis=1)

    def summed_terms(self, shapes: Sequence[tuple[int, ...]]) -> int:
        (shape,) = shapes
        return shape[0] if len(shape) == 1 else shape[0 if self.transpose else 1]

    def accumulators(self, tile: Sequence[int]) -> int:
        """One partial sum per tile row."""
        return tile[0]

    def term_flops(self, shape_of: ShapeOf) -> float:
        """One add per element of A."""
        return float(prod(shape_of(self.inputs[0])))

    def verify(self, ctx: "VerifyContext") -> None:
        """b of order 0 or 1, A of order(b) + 1, rows(b) = rows(op(A))."""
        types = blas_memrefs(ctx, self, ("A", "b"))
        if types is None:
            return
        A, b = types
        if not expect_order(ctx, self, 3, "b", b, (0, 1)):
            return
        if not expect_order(ctx, self, 1, "A", A, (b.order + 1,)):
            return
        if b.order == 1:
            check_size_match(ctx, self, "rows of b", b.shape[0], "rows of op(A)",
                             op_shape(A, self.transpose)[0], [self.operands[1], self.operands[3]])

    def size_rules(self) -> list[SizeRule]:
        """rows(b) = rows(op(A)) when b is a vector."""
        if self.output.type.order != 1:
            return []
        transposed = self.transpose and self.inputs[0].type.order == 2
        return [SizeRule((3, 0), (1, op_mode(transposed, 0)), "rows of b = rows of op(A)")]
