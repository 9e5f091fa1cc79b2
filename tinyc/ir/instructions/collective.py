"""Collective instructions: the work-group executes them together.

Their operands are uniform; the compiler distributes the work (see
tinyc/passes for the lowering of each).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.core import Instruction, Kind, Region, Value
from tinyc.ir.types import Type, index

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer


def _transpose_suffix(transposed: bool) -> str:
    return ".t" if transposed else ".n"


class Alloca(Instruction):
    """Work-group local scratch memory, freed at the end of its region."""

    opname = "alloca"
    kind = Kind.COLLECTIVE

    def __init__(self, type: Type, attrs: dict | None = None, span: Span | None = None,
                 name: str | None = None):
        super().__init__((), (type,), span=span, result_names=[name])
        self.attrs = dict(attrs or {})

    def format(self, p: "Printer") -> str:
        attrs = f" {p.attrs(self.attrs)}" if self.attrs else ""
        return f"alloca{attrs} : {self.result.type}"


class BlasInstruction(Instruction):
    """Shared shape of the BLAS-like collectives: alpha, inputs..., beta, output."""

    kind = Kind.COLLECTIVE
    n_inputs = 1

    def __init__(self, alpha: Value, inputs: Sequence[Value], beta: Value, output: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__([alpha, *inputs, beta, output], span=span)
        self.atomic = atomic

    @property
    def alpha(self) -> Value:
        return self.operands[0]

    @property
    def inputs(self) -> list[Value]:
        return self.operands[1:-2]

    @property
    def beta(self) -> Value:
        return self.operands[-2]

    @property
    def output(self) -> Value:
        return self.operands[-1]

    def modifiers(self) -> str:
        return ".atomic" if self.atomic else ""

    def format(self, p: "Printer") -> str:
        return f"{self.opname}{self.modifiers()} " + ", ".join(p.v(v) for v in self.operands)


class Axpby(BlasInstruction):
    """B := alpha op(A) + beta B."""

    opname = "axpby"

    def __init__(self, transpose: bool, alpha: Value, A: Value, beta: Value, B: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A], beta, B, atomic, span)
        self.transpose = transpose

    def modifiers(self) -> str:
        return _transpose_suffix(self.transpose) + super().modifiers()


class Cumsum(BlasInstruction):
    """B := alpha A ×_n L + beta B: inclusive prefix sum along mode n."""

    opname = "cumsum"

    def __init__(self, alpha: Value, A: Value, mode: int, beta: Value, B: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A], beta, B, atomic, span)
        self.mode = mode

    def format(self, p: "Printer") -> str:
        a, A, beta, B = (p.v(v) for v in self.operands)
        return f"cumsum{self.modifiers()} {a}, {A}, {self.mode}, {beta}, {B}"


class Gemm(BlasInstruction):
    """C := alpha op1(A) op2(B) + beta C."""

    opname = "gemm"

    def __init__(self, transpose_a: bool, transpose_b: bool, alpha: Value, A: Value, B: Value,
                 beta: Value, C: Value, atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A, B], beta, C, atomic, span)
        self.transpose_a = transpose_a
        self.transpose_b = transpose_b

    def modifiers(self) -> str:
        return (_transpose_suffix(self.transpose_a) + _transpose_suffix(self.transpose_b)
                + super().modifiers())


class Gemv(BlasInstruction):
    """c := alpha op(A) b + beta c."""

    opname = "gemv"

    def __init__(self, transpose: bool, alpha: Value, A: Value, b: Value, beta: Value,
                 c: Value, atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A, b], beta, c, atomic, span)
        self.transpose = transpose

    def modifiers(self) -> str:
        return _transpose_suffix(self.transpose) + super().modifiers()


class Ger(BlasInstruction):
    """C := alpha a b^T + beta C."""

    opname = "ger"

    def __init__(self, alpha: Value, a: Value, b: Value, beta: Value, C: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [a, b], beta, C, atomic, span)


class HadamardProduct(BlasInstruction):
    """c := alpha a ∘ b + beta c (element-wise product)."""

    opname = "hadamard_product"

    def __init__(self, alpha: Value, a: Value, b: Value, beta: Value, c: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [a, b], beta, c, atomic, span)


class Sum(BlasInstruction):
    """b := alpha op(A) 1 + beta b (row sums, or the sum of a vector)."""

    opname = "sum"

    def __init__(self, transpose: bool, alpha: Value, A: Value, beta: Value, B: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A], beta, B, atomic, span)
        self.transpose = transpose

    def modifiers(self) -> str:
        return _transpose_suffix(self.transpose) + super().modifiers()


class Foreach(Instruction):
    """A multi-dimensional loop whose iterations are spread over the work-items.

    Operands are the lower bounds then the upper bounds; the body is an SPMD
    region whose arguments are the loop variables.
    """

    opname = "foreach"
    kind = Kind.COLLECTIVE

    def __init__(self, loop_vars: Sequence[Value], lower: Sequence[Value], upper: Sequence[Value],
                 body: Region | None = None, loop_type: Type = index, span: Span | None = None):
        region = body if body is not None else Region()
        region.args = list(loop_vars)
        for v in loop_vars:
            v.owner = region
        super().__init__([*lower, *upper], regions=[region], span=span)
        self.loop_type = loop_type

    @property
    def dims(self) -> int:
        return len(self.operands) // 2

    @property
    def lower(self) -> list[Value]:
        return self.operands[: self.dims]

    @property
    def upper(self) -> list[Value]:
        return self.operands[self.dims:]

    @property
    def body(self) -> Region:
        return self.regions[0]

    def format(self, p: "Printer") -> str:
        loop_vars = ", ".join(p.v(v) for v in self.body.args)
        ty = "" if self.loop_type is index else f":{self.loop_type}"
        lower = ", ".join(p.v(v) for v in self.lower)
        upper = ", ".join(p.v(v) for v in self.upper)
        return f"foreach ({loop_vars}){ty} = ({lower}), ({upper}) {p.region(self.body)}"


class Parallel(Instruction):
    """Runs its SPMD region on every work-item of the work-group."""

    opname = "parallel"
    kind = Kind.COLLECTIVE

    def __init__(self, body: Region | None = None, span: Span | None = None):
        super().__init__(regions=[body if body is not None else Region()], span=span)

    @property
    def body(self) -> Region:
        return self.regions[0]

    def format(self, p: "Printer") -> str:
        return f"parallel {p.region(self.body)}"
