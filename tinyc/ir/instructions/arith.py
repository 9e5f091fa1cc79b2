"""Mixed scalar arithmetic: arith (binary and unary), comparisons, casts and math functions, on
scalars and (component-wise) coopmatrices; their operation enums and the spec's type tables."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from tinyc.diagnostics import Span
from tinyc.ir.checks import (
    cast_problem, expect_result, expect_scalar, expect_type, inst_error, is_bool, is_complex, is_float,
    is_int, is_scalar, operand_error, result_error,
)
from tinyc.ir.addressing import NO_INTEGER_FACTS, IntegerFacts, IntOp
from tinyc.ir.core import Instruction, Value, no_addressing, no_integer_facts, no_memory_access
from tinyc.ir.instructions.scalar import Constant, is_integral
from tinyc.ir.types import CoopMatrixType, ScalarType, Type, bool_, coopmatrix_type
from tinyc.std import Std

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

    @property
    def newest(self) -> str:
        """The newest language's spelling: `less_than` for `cmp.lt`."""
        return _CMP_NEWEST[self]


_CMP_NEWEST = {CmpCond.EQ: "equal", CmpCond.NE: "not_equal", CmpCond.GT: "greater_than",
               CmpCond.GE: "greater_than_equal", CmpCond.LT: "less_than",
               CmpCond.LE: "less_than_equal"}


class MathUnaryOp(Enum):
    """Unary math functions; the seed has exp and native_exp (as `math.exp`)."""

    COS = "cos"
    SIN = "sin"
    EXP = "exp"
    EXP2 = "exp2"
    LOG = "log"
    LOG2 = "log2"
    NATIVE_COS = "native_cos"
    NATIVE_SIN = "native_sin"
    NATIVE_EXP = "native_exp"
    NATIVE_EXP2 = "native_exp2"
    NATIVE_LOG = "native_log"
    NATIVE_LOG2 = "native_log2"

    @property
    def native(self) -> bool:
        """Implementation-defined error allowed (OpenCL's native_ functions)."""
        return self.value.startswith("native_")

    @property
    def function(self) -> str:
        """The function without `native_`: cos, sin, exp, exp2, log, log2."""
        return self.value.removeprefix("native_")

    @property
    def takes_complex(self) -> bool:
        """Spec (newest): exp and exp2 take complex operands, the others floating only."""
        return self.function in ("exp", "exp2")


SEED_MATH = (MathUnaryOp.EXP, MathUnaryOp.NATIVE_EXP)
"""The math functions the seed spec has (`math.exp`, `math.native_exp`); the seed's
implementation took `math.<function>` for the others too (`math.cos`), and so does tinyc."""


_NUMBER = (is_scalar, "a scalar or coopmatrix type", "a scalar type")
_REAL_SCALAR = (lambda t: is_scalar(t) and not t.is_complex, "a non-complex scalar type",
                "a non-complex scalar type")
_INTEGER = (is_int, "an integer type", "an integer type")
_LOGICAL = (lambda t: is_bool(t) or is_int(t), "bool or an integer type", "an integer type")
_COMPLEX = (is_complex, "a complex type", "a complex type")

_BINARY_ALLOWED = {
    ArithBinaryOp.ADD: _NUMBER, ArithBinaryOp.SUB: _NUMBER,
    ArithBinaryOp.MUL: _NUMBER, ArithBinaryOp.DIV: _NUMBER,
    ArithBinaryOp.REM: _REAL_SCALAR, ArithBinaryOp.MIN: _REAL_SCALAR, ArithBinaryOp.MAX: _REAL_SCALAR,
    ArithBinaryOp.SHL: _INTEGER, ArithBinaryOp.SHR: _INTEGER,
    ArithBinaryOp.AND: _LOGICAL, ArithBinaryOp.OR: _LOGICAL, ArithBinaryOp.XOR: _LOGICAL,
}
"""Spec: arithmetic (binary) table — the scalar types allowed, their wording, and the wording of
the component types a coopmatrix may have (the newest language: every operation works on
coopmatrices, component-wise)."""

_UNARY_ALLOWED = {
    ArithUnaryOp.ABS: (is_scalar, "a scalar or coopmatrix type", "a scalar type"),
    ArithUnaryOp.NEG: _NUMBER, ArithUnaryOp.NOT: _LOGICAL, ArithUnaryOp.CONJ: _COMPLEX,
    ArithUnaryOp.IM: _COMPLEX, ArithUnaryOp.RE: _COMPLEX,
}
"""Spec: arithmetic (unary) table; `not` also takes bool (DESIGN.md)."""


SEED_COOPMATRIX_ARITHMETIC = frozenset({ArithBinaryOp.ADD, ArithBinaryOp.SUB, ArithBinaryOp.MUL,
                                        ArithBinaryOp.DIV, ArithUnaryOp.NEG})
"""The seed's arithmetic on coopmatrices (its tables list coopmatrix-type for these only);
the newest language does every operation component-wise."""


def _seed_coopmatrix_problem(ctx: "VerifyContext", op: Enum, t: Type) -> str | None:
    """The seed's rule on arithmetic with coopmatrices, for a program in the seed language."""
    if not isinstance(t, CoopMatrixType) or op in SEED_COOPMATRIX_ARITHMETIC \
            or ctx.version.newest_extensions:
        return None
    return (f"the seed language does arithmetic on coopmatrices with add, sub, mul, div and neg "
            f"only, got {t}{ctx.version.rule()}")


def _mark_newest_coopmatrix_arithmetic(s: "Parsed", op: Enum, t: Type | None) -> None:
    """Arithmetic on coopmatrices that only the newest language has: evidence of its version."""
    if isinstance(t, CoopMatrixType) and op not in SEED_COOPMATRIX_ARITHMETIC:
        s.mark(Std.NEWEST, f"'{op.value}' on a coopmatrix")


def _type_problem(rule: tuple, t: Type) -> str | None:
    """Why `t` is not allowed by a (predicate, wording, component wording) rule, or None."""
    allowed, wording, component_wording = rule
    if isinstance(t, CoopMatrixType):
        if allowed(t.component):
            return None
        return f"the component type of {t} must be {component_wording}"
    return None if allowed(t) else f"must be {wording}, got {t}"


_ORDERED_CONDS = frozenset({CmpCond.GT, CmpCond.GE, CmpCond.LT, CmpCond.LE})


class ArithBinary(Instruction):
    """Binary arithmetic on scalars, bools or coopmatrices (component-wise)."""

    opname = "arith"
    keywords = {**{f"arith.{op.value}": op for op in ArithBinaryOp},
                **{op.value: op for op in ArithBinaryOp}}
    versions = {**{f"arith.{op.value}": Std.SEED for op in ArithBinaryOp},
                **{op.value: Std.NEWEST for op in ArithBinaryOp}}
    syntax = 'LOCAL_ID "," LOCAL_ID ":" value_type'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """Its integer (or bool) result, for index arithmetic and guards."""
        return IntegerFacts(IntOp(self.op.value, tuple(self.operands))) if is_integral(self.result.type) \
            else NO_INTEGER_FACTS

    def float_arithmetic(self) -> tuple[str, tuple[Value, ...]] | None:
        """A real f32/f64 product or sum (the fp_contract option fuses them into fma)."""
        t = self.result.type
        if self.op in (ArithBinaryOp.MUL, ArithBinaryOp.ADD) and isinstance(t, ScalarType) \
                and t.name in ("f32", "f64"):
            return self.op.value, tuple(self.operands)
        return None

    def run_flops(self) -> float:
        """add, sub, mul, div of floating-point values: 1 flop per real component operation
        (a complex add 2, a complex mul 6, a complex div 11); per element of a coopmatrix.
        min, max and rem are not counted (comparisons, a library call)."""
        return _arith_flops(self.op, self.result.type)

    def __init__(self, op: ArithBinaryOp, a: Value, b: Value, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([a, b], [type], span=span, result_names=[name])
        self.op = op

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "ArithBinary":
        op = s.selected(cls.keywords)
        _mark_newest_coopmatrix_arithmetic(s, op, s.type)
        return cls(op, *s.operands, s.type)

    @property
    def title(self) -> str:
        return self.spelling or f"arith.{self.op.value}"

    def format(self, p: "Printer") -> str:
        a, b = self.operands
        word = p.spell(self, f"arith.{self.op.value}", self.op.value)
        return f"{word} {p.v(a)}, {p.v(b)} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """The type is allowed for the operation; both operands have exactly that type."""
        t = self.result.type
        problem = _type_problem(_BINARY_ALLOWED[self.op], t) or _seed_coopmatrix_problem(
            ctx, self.op, t)
        if problem:
            result_error(ctx, self, problem if problem.startswith("the") else f"type {problem}")
        expect_type(ctx, self, 0, "first operand", t, " (the result type)")
        expect_type(ctx, self, 1, "second operand", t, " (the result type)")
        if self.op in (ArithBinaryOp.DIV, ArithBinaryOp.REM) and is_int(t) \
                and known_integer(self.operands[1]) == 0:
            operand_error(ctx, self, 1, "integer division by zero (the divisor is always 0)")


_COMPLEX_FLOPS = {ArithBinaryOp.ADD: 2, ArithBinaryOp.SUB: 2, ArithBinaryOp.MUL: 6, ArithBinaryOp.DIV: 11}
"""The operations counted as flops, with their count on complex values (1 on real ones)."""


def element_flops(op: ArithBinaryOp, is_complex: bool) -> int:
    """Flops of one add, sub, mul or div of two elements: 1, or the complex count above (the
    coopmatrix instructions count their multiplies and adds with it too)."""
    return _COMPLEX_FLOPS[op] if is_complex else 1


def _arith_flops(op: ArithBinaryOp, t: Type) -> float:
    """ArithBinary.run_flops: flops of `op` on one value of type `t`."""
    elements = 1
    if isinstance(t, CoopMatrixType):
        elements, t = t.rows * t.cols, t.component
    if not isinstance(t, ScalarType) or op not in _COMPLEX_FLOPS or not (t.is_float or t.is_complex):
        return 0.0
    return float(elements * element_flops(op, t.is_complex))


def known_integer(value: Value, depth: int = 0) -> int | None:
    """The integer a value always has, where constants decide it; else None.

    Follows integer constants through add/sub/mul and a multiplication by a
    constant 0, as the reference's constant propagation does before it
    rejects a division by zero.
    """
    owner = value.owner
    if depth > 16 or not isinstance(owner, Instruction):
        return None
    if isinstance(owner, Constant):
        return owner.value if isinstance(owner.value, int) and not isinstance(owner.value, bool) \
            else None
    if isinstance(owner, ArithBinary) and owner.op in (ArithBinaryOp.ADD, ArithBinaryOp.SUB,
                                                       ArithBinaryOp.MUL):
        a, b = (known_integer(v, depth + 1) for v in owner.operands)
        if owner.op is ArithBinaryOp.MUL and 0 in (a, b):
            return 0
        if a is not None and b is not None:
            return {ArithBinaryOp.ADD: a + b, ArithBinaryOp.SUB: a - b,
                    ArithBinaryOp.MUL: a * b}[owner.op]
    return None


class ArithUnary(Instruction):
    """Unary arithmetic on scalars or coopmatrices; abs/im/re of a complex give its real type."""

    opname = "arith"
    keywords = {**{f"arith.{op.value}": op for op in ArithUnaryOp},
                **{op.value: op for op in ArithUnaryOp}}
    versions = {**{f"arith.{op.value}": Std.SEED for op in ArithUnaryOp},
                **{op.value: Std.NEWEST for op in ArithUnaryOp}}
    syntax = 'LOCAL_ID ":" value_type'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """abs, neg and not of an integer (or bool)."""
        if is_integral(self.result.type) and self.op in (ArithUnaryOp.ABS, ArithUnaryOp.NEG, ArithUnaryOp.NOT):
            return IntegerFacts(IntOp(self.op.value, tuple(self.operands)))
        return NO_INTEGER_FACTS

    def __init__(self, op: ArithUnaryOp, a: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])
        self.op = op

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "ArithUnary":
        op = s.selected(cls.keywords)
        _mark_newest_coopmatrix_arithmetic(s, op, s.operands[0].type if s.operands else None)
        return cls(op, *s.operands, s.type)

    @property
    def title(self) -> str:
        return self.spelling or f"arith.{self.op.value}"

    def format(self, p: "Printer") -> str:
        word = p.spell(self, f"arith.{self.op.value}", self.op.value)
        return f"{word} {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Operand type per the table; abs/im/re of a complex give its component type."""
        a = self.operands[0].type
        problem = _type_problem(_UNARY_ALLOWED[self.op], a) or _seed_coopmatrix_problem(
            ctx, self.op, a)
        if problem:
            operand_error(ctx, self, 0, problem if problem.startswith("the") else
                          f"operand {problem.replace('must be', 'must have', 1)}")
            return
        scalar = a.component if isinstance(a, CoopMatrixType) else a
        if is_complex(scalar) and self.op in (ArithUnaryOp.ABS, ArithUnaryOp.IM, ArithUnaryOp.RE):
            real = scalar.component
            if isinstance(a, CoopMatrixType):
                want = coopmatrix_type(real, a.rows, a.cols, a.use)
                expect_result(ctx, self, want, f" (a coopmatrix of the component type of {scalar})")
            else:
                expect_result(ctx, self, real, f" (the component type of {a})")
        else:
            expect_result(ctx, self, a, " (the operand type)")


class Cast(Instruction):
    """Conversion of a scalar or coopmatrix to another (component) type."""

    opname = "cast"
    keywords = ("cast",)
    syntax = 'LOCAL_ID ":" value_type'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """A conversion to an integer type."""
        return IntegerFacts(IntOp("cast", tuple(self.operands))) if is_integral(self.result.type) \
            else NO_INTEGER_FACTS

    def __init__(self, a: Value, type: Type, span: Span | None = None, name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Cast":
        src = s.operands[0].type if s.operands else None
        if src is not None and cast_problem(src, s.type, newest=False) and not cast_problem(src, s.type):
            s.mark(Std.NEWEST, "a cast from matrix_acc to another use")  # the newest language's
        return cls(*s.operands, s.type)

    def format(self, p: "Printer") -> str:
        return f"cast {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Spec: cast table; no bool, no complex to real; coopmatrix shape kept, use kept or acc->a/b."""
        src, dst = self.operands[0].type, self.result.type
        problem = cast_problem(src, dst, ctx.version.newest_extensions)
        if problem:
            rule = ctx.version.rule() if cast_problem(src, dst) is None else ""
            result_error(ctx, self, problem + rule, [self.operands[0]])


class Cmp(Instruction):
    """Scalar comparison giving a bool."""

    opname = "cmp"
    keywords = {**{f"cmp.{cond.value}": cond for cond in CmpCond},
                **{cond.newest: cond for cond in CmpCond}}
    versions = {**{f"cmp.{cond.value}": Std.SEED for cond in CmpCond},
                **{cond.newest: Std.NEWEST for cond in CmpCond}}
    syntax = 'LOCAL_ID "," LOCAL_ID ":" bool_type'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """A comparison, for guards."""
        return IntegerFacts(IntOp(self.cond.value, tuple(self.operands)))

    def __init__(self, cond: CmpCond, a: Value, b: Value, span: Span | None = None,
                 name: str | None = None, type: Type = bool_):
        super().__init__([a, b], [type], span=span, result_names=[name])
        self.cond = cond

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Cmp":
        return cls(s.selected(cls.keywords), *s.operands, type=s.type)

    @property
    def title(self) -> str:
        return self.spelling or f"cmp.{self.cond.value}"

    def format(self, p: "Printer") -> str:
        a, b = self.operands
        word = p.spell(self, f"cmp.{self.cond.value}", self.cond.newest)
        return f"{word} {p.v(a)}, {p.v(b)} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Two operands of one scalar type (no ordering of complex); a bool result."""
        a = expect_scalar(ctx, self, 0, "first operand")
        if a is not None:
            expect_type(ctx, self, 1, "second operand", a, " (the type of the first operand)")
            if a.is_complex and self.cond in _ORDERED_CONDS:
                eq, ne = ((CmpCond.EQ.newest, CmpCond.NE.newest) if self.title in _CMP_NEWEST.values()
                          else ("cmp.eq", "cmp.ne"))
                inst_error(ctx, self, f"complex operands ({a}) cannot be ordered; only {eq} and "
                                      f"{ne} accept complex types", self.operands[:1])
        expect_result(ctx, self, bool_)


class MathUnary(Instruction):
    """cos, sin, exp, exp2, log, log2 and their native forms of a floating (exp: or complex) scalar."""

    opname = "math"
    keywords = {**{f"math.{op.value}": op for op in MathUnaryOp},
                **{op.value: op for op in MathUnaryOp}}
    versions = {**{f"math.{op.value}": Std.SEED for op in MathUnaryOp},
                **{op.value: Std.NEWEST for op in MathUnaryOp}}
    syntax = 'LOCAL_ID ":" scalar_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, op: MathUnaryOp, a: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])
        self.op = op

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "MathUnary":
        return cls(s.selected(cls.keywords), *s.operands, s.type)

    @property
    def title(self) -> str:
        return self.spelling or f"math.{self.op.value}"

    def format(self, p: "Printer") -> str:
        word = p.spell(self, f"math.{self.op.value}", self.op.value)
        return f"{word} {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A floating (exp, exp2: or complex) operand of the result type."""
        a = self.operands[0].type
        if self.op.takes_complex and not (is_float(a) or is_complex(a)):
            operand_error(ctx, self, 0, f"operand must have a floating-point or complex type, got {a}")
            return
        if not self.op.takes_complex and not is_float(a):
            operand_error(ctx, self, 0, f"operand must have a floating-point type, got {a}")
            return
        expect_result(ctx, self, a, " (the operand type)")
