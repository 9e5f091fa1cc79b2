"""Mixed scalar instructions: arithmetic, casts, comparisons, constants, builtins, barrier."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from tinyc.diagnostics import Span
from tinyc.ir.checks import (
    cast_problem, constant_problem, expect_result, expect_scalar, expect_type, inst_error,
    is_bool, is_complex, is_float, is_int, is_scalar, operand_error,
    result_error,
)
from tinyc.ir.addressing import IntegerFacts, IntOp
from tinyc.ir.core import Instruction, Kind, Value, no_addressing, no_integer_facts, no_memory_access
from tinyc.ir.types import BoolType, CoopMatrixType, ScalarType, Type, bool_, coopmatrix_type, i32, index
from tinyc.std import Std

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


def is_integral(t: Type) -> bool:
    """An integer scalar or a bool: the types whose values `integer_facts` describe."""
    return isinstance(t, BoolType) or (isinstance(t, ScalarType) and t.is_int)


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


class BuiltinName(Enum):
    """A builtin value; one member per mode of the newest language's 3-D builtins.

    GROUP_ID and GROUP_SIZE are the seed's `builtin.group_id` and
    `builtin.group_size`: the group id and group count along the batch,
    which the newest language calls `group_id.x` and `num_groups.x`.
    NUM_SUBGROUPS (seed, all subgroups of the work-group) is the newest
    `num_subgroups.x` times `num_subgroups.y`; SUBGROUP_ID (seed) is the
    newest `subgroup_linear_id`.
    """

    GROUP_ID = "group_id"
    GROUP_ID_Y = "group_id_y"
    GROUP_ID_Z = "group_id_z"
    GROUP_SIZE = "group_size"
    NUM_GROUPS_Y = "num_groups_y"
    NUM_GROUPS_Z = "num_groups_z"
    NUM_SUBGROUPS = "num_subgroups"
    NUM_SUBGROUPS_X = "num_subgroups_x"
    NUM_SUBGROUPS_Y = "num_subgroups_y"
    NUM_SUBGROUPS_Z = "num_subgroups_z"
    SUBGROUP_SIZE = "subgroup_size"
    SUBGROUP_ID = "subgroup_id"
    SUBGROUP_ID_X = "subgroup_id_x"
    SUBGROUP_ID_Y = "subgroup_id_y"
    SUBGROUP_ID_Z = "subgroup_id_z"
    SUBGROUP_LOCAL_ID = "subgroup_local_id"

    @property
    def seed(self) -> str | None:
        """The seed spelling (`builtin.group_id`), None for builtins only the newest has."""
        return f"builtin.{self.value}" if self.value in _SEED_BUILTINS else None

    @property
    def newest(self) -> str | None:
        """The newest spelling (`group_id.x`), None for the seed's `builtin.num_subgroups`."""
        return _NEWEST_BUILTINS.get(self)


_SEED_BUILTINS = frozenset({"group_id", "group_size", "num_subgroups", "subgroup_size",
                            "subgroup_id", "subgroup_local_id"})
_NEWEST_BUILTINS = {
    BuiltinName.GROUP_ID: "group_id.x", BuiltinName.GROUP_ID_Y: "group_id.y",
    BuiltinName.GROUP_ID_Z: "group_id.z", BuiltinName.GROUP_SIZE: "num_groups.x",
    BuiltinName.NUM_GROUPS_Y: "num_groups.y", BuiltinName.NUM_GROUPS_Z: "num_groups.z",
    BuiltinName.NUM_SUBGROUPS_X: "num_subgroups.x", BuiltinName.NUM_SUBGROUPS_Y: "num_subgroups.y",
    BuiltinName.NUM_SUBGROUPS_Z: "num_subgroups.z", BuiltinName.SUBGROUP_SIZE: "subgroup_size",
    BuiltinName.SUBGROUP_ID: "subgroup_linear_id", BuiltinName.SUBGROUP_ID_X: "subgroup_id.x",
    BuiltinName.SUBGROUP_ID_Y: "subgroup_id.y", BuiltinName.SUBGROUP_ID_Z: "subgroup_id.z",
    BuiltinName.SUBGROUP_LOCAL_ID: "subgroup_local_id",
}


_INTERIM_BUILTINS = {f"builtin.{spelling}": name for name, spelling in _NEWEST_BUILTINS.items()
                     if "." in spelling or spelling == "subgroup_linear_id"}
"""The reference between the two versions (2024/25) spelled the 3-D builtins with the seed's
prefix (`builtin.group_id.x`, `builtin.subgroup_linear_id`): they mean the newest builtins."""


SPMD_BUILTINS = frozenset({BuiltinName.SUBGROUP_ID, BuiltinName.SUBGROUP_ID_X,
                           BuiltinName.SUBGROUP_ID_Y, BuiltinName.SUBGROUP_ID_Z,
                           BuiltinName.SUBGROUP_LOCAL_ID})


BUILTIN_TYPES: dict[BuiltinName, Type] = {
    name: index if name.value.startswith(("group_", "num_groups")) else i32 for name in BuiltinName
}
"""The result type of each builtin (spec: builtin tables): group ids and counts are index."""

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
            else IntegerFacts()

    def float_arithmetic(self) -> tuple[str, tuple[Value, ...]] | None:
        """A real f32/f64 product or sum (the fp_contract option fuses them into fma)."""
        t = self.result.type
        if self.op in (ArithBinaryOp.MUL, ArithBinaryOp.ADD) and isinstance(t, ScalarType) \
                and t.name in ("f32", "f64"):
            return self.op.value, tuple(self.operands)
        return None

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
        return IntegerFacts()

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


class Barrier(Instruction):
    """Work-group control barrier with optional global/local memory fences."""

    opname = "barrier"
    keywords = ("barrier",)
    syntax = "global_fence? local_fence?"
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

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
    """Group ids and counts, subgroup counts and size (mixed); see BuiltinName."""

    opname = "builtin"
    keywords = {**{name.seed: name for name in BuiltinName if name.seed},
                **{name.newest: name for name in BuiltinName if name.newest},
                **{name: builtin for name, builtin in _INTERIM_BUILTINS.items()}}
    versions = {**{name.seed: Std.SEED for name in BuiltinName if name.seed},
                **{name.newest: Std.NEWEST for name in BuiltinName if name.newest},
                **{name: Std.NEWEST for name in _INTERIM_BUILTINS}}
    syntax = '":" integer_type'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """The builtin by its name (BuiltinName values)."""
        return IntegerFacts(IntOp(self.builtin.value))

    def __init__(self, builtin: BuiltinName, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__((), [type], span=span, result_names=[name])
        self.builtin = builtin

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Builtin":
        """subgroup_id and subgroup_local_id are SPMD: their class is SpmdBuiltin."""
        name = s.selected(cls.keywords)
        return (SpmdBuiltin if name in SPMD_BUILTINS else Builtin)(name, s.type)

    @property
    def title(self) -> str:
        return self.spelling or self.builtin.seed or str(self.builtin.newest)

    def format(self, p: "Printer") -> str:
        t = self.result.type
        if p.newest and self.builtin is BuiltinName.NUM_SUBGROUPS:
            # the seed's count of all subgroups: the newest language counts per mode
            x, y = p.fresh("num_subgroups_x"), p.fresh("num_subgroups_y")
            p.prelude(f"{x} = num_subgroups.x : {t}")
            p.prelude(f"{y} = num_subgroups.y : {t}")
            return f"mul {x}, {y} : {t}"
        return f"{p.spell(self, self.builtin.seed, self.builtin.newest)} : {t}"

    def verify(self, ctx: "VerifyContext") -> None:
        """The result type is fixed by the builtin (index or i32)."""
        expect_result(ctx, self, BUILTIN_TYPES[self.builtin])


class SpmdBuiltin(Builtin):
    """subgroup_id and subgroup_local_id: per-work-item values (spelled, and parsed, as `builtin`)."""

    kind = Kind.SPMD


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
            else IntegerFacts()

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


class Constant(Instruction):
    """A constant scalar, bool, or coopmatrix with all entries equal.

    `value` is a Python bool, int, float or complex as written in the source.
    """

    opname = "constant"
    keywords = ("constant",)
    syntax = 'literal ":" value_type'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """An integer or bool constant."""
        if isinstance(self.value, (bool, int)) and is_integral(self.result.type):
            return IntegerFacts(IntOp("constant", (self.value,)))
        return IntegerFacts()

    def __init__(self, value: bool | int | float | complex, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__((), [type], span=span, result_names=[name])
        self.value = value

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Constant":
        return cls(s.literals[0], s.type)

    def format(self, p: "Printer") -> str:
        try:
            text = format_constant(self.value, newest=p.newest)
        except ValueError as err:
            p.cannot(self, str(err))
            text = format_constant(self.value, newest=True)
        return f"constant {text} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """The literal's kind and range fit the (component) type."""
        problem = constant_problem(self.value, self.result.type)
        if problem:
            result_error(ctx, self, problem)


def format_float(x: float, newest: bool = True) -> str:
    """A float in the grammar's syntax that reads back to the same double.

    Infinities and NaN are `inf`, `-inf`, `nan` in the newest language; the
    seed has no spelling for them (ValueError).
    """
    text = repr(float(x))
    if text in ("inf", "-inf", "nan") and not newest:
        raise ValueError(f"the constant '{text}'")
    return text


def format_constant(value: bool | int | float | complex, newest: bool = True) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, complex):
        return f"[{format_float(value.real, newest)}, {format_float(value.imag, newest)}]"
    return format_float(value, newest)


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


