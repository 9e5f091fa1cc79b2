"""Mixed scalar instructions: arithmetic, casts, comparisons, constants, builtins, barrier."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from tinyc.diagnostics import Span
from tinyc.ir.checks import (
    cast_problem, constant_problem, expect_result, expect_scalar, expect_type, inst_error,
    is_bool, is_complex, is_coop, is_float, is_int, is_scalar, operand_error,
    result_error,
)
from tinyc.ir.core import Instruction, Value, no_memory_access
from tinyc.ir.types import Type, bool_, i32, index

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


class ArithBinaryOp(Enum):
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    REM = "rem"
    MIN = "min"
    MAX = "max"
    SHL = "shl"
    SHR = "shr"
    AND = "and"
    OR = "or"
    XOR = "xor"


class ArithUnaryOp(Enum):
    ABS = "abs"
    NEG = "neg"
    NOT = "not"
    CONJ = "conj"
    IM = "im"
    RE = "re"


class CmpCond(Enum):
    EQ = "eq"
    NE = "ne"
    GT = "gt"
    GE = "ge"
    LT = "lt"
    LE = "le"


class MathUnaryOp(Enum):
    EXP = "exp"
    NATIVE_EXP = "native_exp"


class BuiltinName(Enum):
    GROUP_ID = "group_id"
    GROUP_SIZE = "group_size"
    NUM_SUBGROUPS = "num_subgroups"
    SUBGROUP_SIZE = "subgroup_size"
    SUBGROUP_ID = "subgroup_id"
    SUBGROUP_LOCAL_ID = "subgroup_local_id"


SPMD_BUILTINS = frozenset({BuiltinName.SUBGROUP_ID, BuiltinName.SUBGROUP_LOCAL_ID})


BUILTIN_TYPES: dict[BuiltinName, Type] = {
    BuiltinName.GROUP_ID: index, BuiltinName.GROUP_SIZE: index,
    BuiltinName.NUM_SUBGROUPS: i32, BuiltinName.SUBGROUP_SIZE: i32,
    BuiltinName.SUBGROUP_ID: i32, BuiltinName.SUBGROUP_LOCAL_ID: i32,
}
"""The result type of each builtin (spec: builtin tables)."""

_SCALAR_OR_COOP = (lambda t: is_scalar(t) or is_coop(t), "a scalar or coopmatrix type")
_REAL_SCALAR = (lambda t: is_scalar(t) and not t.is_complex, "a non-complex scalar type")
_INTEGER = (is_int, "an integer type")
_LOGICAL = (lambda t: is_bool(t) or is_int(t), "bool or an integer type")
_COMPLEX = (is_complex, "a complex type")

_BINARY_ALLOWED = {
    ArithBinaryOp.ADD: _SCALAR_OR_COOP, ArithBinaryOp.SUB: _SCALAR_OR_COOP,
    ArithBinaryOp.MUL: _SCALAR_OR_COOP, ArithBinaryOp.DIV: _SCALAR_OR_COOP,
    ArithBinaryOp.REM: _REAL_SCALAR, ArithBinaryOp.MIN: _REAL_SCALAR, ArithBinaryOp.MAX: _REAL_SCALAR,
    ArithBinaryOp.SHL: _INTEGER, ArithBinaryOp.SHR: _INTEGER,
    ArithBinaryOp.AND: _LOGICAL, ArithBinaryOp.OR: _LOGICAL, ArithBinaryOp.XOR: _LOGICAL,
}
"""Spec: arithmetic (binary) table — a predicate and its wording per operation."""

_UNARY_ALLOWED = {
    ArithUnaryOp.ABS: (is_scalar, "a scalar type"), ArithUnaryOp.NEG: _SCALAR_OR_COOP,
    ArithUnaryOp.NOT: _LOGICAL, ArithUnaryOp.CONJ: _COMPLEX, ArithUnaryOp.IM: _COMPLEX,
    ArithUnaryOp.RE: _COMPLEX,
}
"""Spec: arithmetic (unary) table; `not` also takes bool (DESIGN.md)."""

_ORDERED_CONDS = frozenset({CmpCond.GT, CmpCond.GE, CmpCond.LT, CmpCond.LE})


class ArithBinary(Instruction):
    """Binary arithmetic on scalars, bools or coopmatrices (component-wise)."""

    opname = "arith"
    keywords = {f"arith.{op.value}": op for op in ArithBinaryOp}
    syntax = 'LOCAL_ID "," LOCAL_ID ":" value_type'
    memory_accesses = no_memory_access

    def __init__(self, op: ArithBinaryOp, a: Value, b: Value, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([a, b], [type], span=span, result_names=[name])
        self.op = op

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "ArithBinary":
        return cls(s.selected(cls.keywords), *s.operands, s.type)

    @property
    def title(self) -> str:
        return f"arith.{self.op.value}"

    def format(self, p: "Printer") -> str:
        a, b = self.operands
        return f"{self.title} {p.v(a)}, {p.v(b)} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """The type is allowed for the operation; both operands have exactly that type."""
        t = self.result.type
        allowed, wording = _BINARY_ALLOWED[self.op]
        if not allowed(t):
            result_error(ctx, self, f"type must be {wording}, got {t}")
        expect_type(ctx, self, 0, "first operand", t, " (the result type)")
        expect_type(ctx, self, 1, "second operand", t, " (the result type)")


class ArithUnary(Instruction):
    """Unary arithmetic; abs/im/re of a complex give its real component type."""

    opname = "arith"
    keywords = {f"arith.{op.value}": op for op in ArithUnaryOp}
    syntax = 'LOCAL_ID ":" value_type'
    memory_accesses = no_memory_access

    def __init__(self, op: ArithUnaryOp, a: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])
        self.op = op

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "ArithUnary":
        return cls(s.selected(cls.keywords), *s.operands, s.type)

    @property
    def title(self) -> str:
        return f"arith.{self.op.value}"

    def format(self, p: "Printer") -> str:
        return f"{self.title} {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Operand type per the table; abs/im/re of a complex give its component type."""
        a = self.operands[0].type
        allowed, wording = _UNARY_ALLOWED[self.op]
        if not allowed(a):
            operand_error(ctx, self, 0, f"operand must have {wording}, got {a}")
            return
        if is_complex(a) and self.op in (ArithUnaryOp.ABS, ArithUnaryOp.IM, ArithUnaryOp.RE):
            expect_result(ctx, self, a.component, f" (the component type of {a})")
        else:
            expect_result(ctx, self, a, " (the operand type)")


class Barrier(Instruction):
    """Work-group control barrier with optional global/local memory fences."""

    opname = "barrier"
    keywords = ("barrier",)
    syntax = "global_fence? local_fence?"
    memory_accesses = no_memory_access

    def __init__(self, global_fence: bool = False, local_fence: bool = False,
                 span: Span | None = None):
        super().__init__(span=span)
        self.global_fence = global_fence
        self.local_fence = local_fence

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Barrier":
        return cls(global_fence=".global" in s.modifiers, local_fence=".local" in s.modifiers)

    def format(self, p: "Printer") -> str:
        return "barrier" + (".global" if self.global_fence else "") + (".local" if self.local_fence else "")


class Builtin(Instruction):
    """group_id, group_size, num_subgroups, subgroup_size (mixed)."""

    opname = "builtin"
    keywords = {f"builtin.{name.value}": name for name in BuiltinName}
    syntax = '":" integer_type'
    memory_accesses = no_memory_access

    def __init__(self, builtin: BuiltinName, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__((), [type], span=span, result_names=[name])
        self.builtin = builtin

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Builtin":
        """subgroup_id and subgroup_local_id are SPMD: their class is SpmdBuiltin."""
        from tinyc.ir.instructions.spmd import SpmdBuiltin

        name = s.selected(cls.keywords)
        return (SpmdBuiltin if name in SPMD_BUILTINS else Builtin)(name, s.type)

    @property
    def title(self) -> str:
        return f"builtin.{self.builtin.value}"

    def format(self, p: "Printer") -> str:
        return f"{self.title} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """The result type is fixed by the builtin (index or i32)."""
        expect_result(ctx, self, BUILTIN_TYPES[self.builtin])


class Cast(Instruction):
    """Conversion of a scalar or coopmatrix to another (component) type."""

    opname = "cast"
    keywords = ("cast",)
    syntax = 'LOCAL_ID ":" value_type'
    memory_accesses = no_memory_access

    def __init__(self, a: Value, type: Type, span: Span | None = None, name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Cast":
        return cls(*s.operands, s.type)

    def format(self, p: "Printer") -> str:
        return f"cast {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Spec: cast table; no bool, no complex to real, coopmatrix shape and use kept."""
        problem = cast_problem(self.operands[0].type, self.result.type)
        if problem:
            result_error(ctx, self, problem, [self.operands[0]])


class Cmp(Instruction):
    """Scalar comparison giving a bool."""

    opname = "cmp"
    keywords = {f"cmp.{cond.value}": cond for cond in CmpCond}
    syntax = 'LOCAL_ID "," LOCAL_ID ":" bool_type'
    memory_accesses = no_memory_access

    def __init__(self, cond: CmpCond, a: Value, b: Value, span: Span | None = None,
                 name: str | None = None, type: Type = bool_):
        super().__init__([a, b], [type], span=span, result_names=[name])
        self.cond = cond

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Cmp":
        return cls(s.selected(cls.keywords), *s.operands, type=s.type)

    @property
    def title(self) -> str:
        return f"cmp.{self.cond.value}"

    def format(self, p: "Printer") -> str:
        a, b = self.operands
        return f"{self.title} {p.v(a)}, {p.v(b)} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Two operands of one scalar type (no ordering of complex); a bool result."""
        a = expect_scalar(ctx, self, 0, "first operand")
        if a is not None:
            expect_type(ctx, self, 1, "second operand", a, " (the type of the first operand)")
            if a.is_complex and self.cond in _ORDERED_CONDS:
                inst_error(ctx, self, f"complex operands ({a}) cannot be ordered; only cmp.eq and "
                                      f"cmp.ne accept complex types", self.operands[:1])
        expect_result(ctx, self, bool_)


class Constant(Instruction):
    """A constant scalar, bool, or coopmatrix with all entries equal.

    `value` is a Python bool, int, float or complex as written in the source.
    """

    opname = "constant"
    keywords = ("constant",)
    syntax = 'literal ":" value_type'
    memory_accesses = no_memory_access

    def __init__(self, value: bool | int | float | complex, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__((), [type], span=span, result_names=[name])
        self.value = value

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Constant":
        return cls(s.literals[0], s.type)

    def format(self, p: "Printer") -> str:
        return f"constant {format_constant(self.value)} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """The literal's kind and range fit the (component) type."""
        problem = constant_problem(self.value, self.result.type)
        if problem:
            result_error(ctx, self, problem)


def format_float(x: float) -> str:
    """A float in the grammar's syntax that reads back to the same double."""
    text = repr(float(x))
    if text in ("inf", "-inf", "nan"):
        raise ValueError(f"{text} has no spelling in the tensor language")
    return text


def format_constant(value: bool | int | float | complex) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, complex):
        return f"[{format_float(value.real)}, {format_float(value.imag)}]"
    return format_float(value)


class MathUnary(Instruction):
    """exp / native_exp of a floating or complex scalar."""

    opname = "math"
    keywords = {f"math.{op.value}": op for op in MathUnaryOp}
    syntax = 'LOCAL_ID ":" scalar_type'
    memory_accesses = no_memory_access

    def __init__(self, op: MathUnaryOp, a: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])
        self.op = op

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "MathUnary":
        return cls(s.selected(cls.keywords), *s.operands, s.type)

    @property
    def title(self) -> str:
        return f"math.{self.op.value}"

    def format(self, p: "Printer") -> str:
        return f"{self.title} {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A floating or complex operand of the result type."""
        a = self.operands[0].type
        if not (is_float(a) or is_complex(a)):
            operand_error(ctx, self, 0, f"operand must have a floating-point or complex type, got {a}")
            return
        expect_result(ctx, self, a, " (the operand type)")


