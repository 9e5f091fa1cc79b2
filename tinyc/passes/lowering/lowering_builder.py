"""The builder the lowerings use: Builder plus naming, folding and typed constants.

Lowered IR is read by people (`tinyc compile --emit lowered`), so values the
lowering makes get short meaningful names (`acc`, `m0`, `lane`), unique in
the function (see session.py) so the printed text parses back. Index
arithmetic on constants folds at build time, so static shapes give
straight-line IR without a folding pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from tinyc.ir.insertion import Builder
from tinyc.ir.core import Instruction, Region, Value
from tinyc.ir.instructions import (
    ArithBinaryOp,
    BuiltinName,
    CmpCond,
    Constant,
    Expand,
    SubgroupBroadcast,
    SubgroupMode,
    SubgroupOp,
    SubgroupOperation,
)
from tinyc.ir.types import (
    DYNAMIC,
    MemrefType,
    ScalarType,
    Type,
    element_type,
    i32,
    index,
    memref_type,
)
from tinyc.passes.lowering.session import Session, constant_value


def static(v: Value) -> int | None:
    """The value of an integer constant (not a bool), None when known only at run time."""
    c = constant_value(v)
    return c if isinstance(c, int) and not isinstance(c, bool) else None


def is_constant(v: Value, number: int) -> bool:
    """`v` is a constant equal to `number` (0 or 1 for alpha/beta rules)."""
    c = constant_value(v)
    return c is not None and not isinstance(c, bool) and c == number


def typed_number(number: int, t: ScalarType) -> int | float | complex:
    """`number` spelled as the constant syntax of `t` wants it (0, 0.0, [0.0, 0.0])."""
    if t.is_complex:
        return complex(number, 0)
    if t.is_float:
        return float(number)
    return int(number)


class LoweringBuilder(Builder):
    """Builder with names, folded index arithmetic and typed constants."""

    def __init__(self, region: Region, position: int | None, span, session: Session):
        super().__init__(region, position, span)
        self.session = session

    @classmethod
    def before_inst(cls, inst: Instruction, session: Session) -> LoweringBuilder:
        region = inst.parent
        assert region is not None, "instruction is not in a region"
        return cls(region, region.instructions.index(inst), inst.span, session)

    def named(self, value: Value, hint: str) -> Value:
        """Give a compiler-made value a readable unique name (constants stay unnamed)."""
        if value.name is None and not isinstance(value.owner, Constant):
            value.name = self.session.fresh(hint)
        return value

    def constant(self, value: bool | complex, type: Type) -> Value:
        """A constant, remembered so that `Session.tidy` can merge duplicates."""
        inst = Constant(value, type)
        self.insert(inst)
        self.session.constants.append(inst)
        return inst.result

    # -- typed constants ------------------------------------------------------
    def number(self, number: int, t: Type) -> Value:
        """The constant `number` of scalar or coopmatrix type `t`."""
        scalar = element_type(t)
        assert scalar is not None
        return self.constant(typed_number(number, scalar), t)

    def zero(self, t: Type) -> Value:
        return self.number(0, t)

    def int_const(self, n: int, t: Type = index) -> Value:
        return self.constant(int(n), t)

    # -- folded integer arithmetic --------------------------------------------
    def _fold(self, op: ArithBinaryOp, a: Value, b: Value) -> Value:
        ca, cb = static(a), static(b)
        if ca is not None and cb is not None:
            if op is ArithBinaryOp.ADD:
                return self.int_const(ca + cb, a.type)
            if op is ArithBinaryOp.SUB:
                return self.int_const(ca - cb, a.type)
            if op is ArithBinaryOp.MUL:
                return self.int_const(ca * cb, a.type)
            if op is ArithBinaryOp.MIN:
                return self.int_const(min(ca, cb), a.type)
            if op is ArithBinaryOp.MAX:
                return self.int_const(max(ca, cb), a.type)
            if ca >= 0 and cb > 0 and op is ArithBinaryOp.DIV:
                return self.int_const(ca // cb, a.type)
            if ca >= 0 and cb > 0 and op is ArithBinaryOp.REM:
                return self.int_const(ca % cb, a.type)
        if op in (ArithBinaryOp.ADD, ArithBinaryOp.SUB) and cb == 0:
            return a
        if op is ArithBinaryOp.ADD and ca == 0:
            return b
        if op in (ArithBinaryOp.MUL, ArithBinaryOp.DIV) and cb == 1:
            return a
        if op is ArithBinaryOp.MUL and ca == 1:
            return b
        if op is ArithBinaryOp.MUL and 0 in (ca, cb):
            return self.int_const(0, a.type)
        if op is ArithBinaryOp.REM and cb == 1:
            return self.int_const(0, a.type)
        return self.arith(op, a, b)

    def iadd(self, a: Value, b: Value | int) -> Value:
        return self._fold(ArithBinaryOp.ADD, a, self._as_value(b, a.type))

    def isub(self, a: Value, b: Value | int) -> Value:
        return self._fold(ArithBinaryOp.SUB, a, self._as_value(b, a.type))

    def imul(self, a: Value, b: Value | int) -> Value:
        return self._fold(ArithBinaryOp.MUL, a, self._as_value(b, a.type))

    def idiv(self, a: Value, b: Value | int) -> Value:
        return self._fold(ArithBinaryOp.DIV, a, self._as_value(b, a.type))

    def irem(self, a: Value, b: Value | int) -> Value:
        return self._fold(ArithBinaryOp.REM, a, self._as_value(b, a.type))

    def imin(self, a: Value, b: Value | int) -> Value:
        return self._fold(ArithBinaryOp.MIN, a, self._as_value(b, a.type))

    def imax(self, a: Value, b: Value | int) -> Value:
        return self._fold(ArithBinaryOp.MAX, a, self._as_value(b, a.type))

    def ceil_div(self, a: Value, b: int) -> Value:
        """⌈a / b⌉ for non-negative a and a positive constant b."""
        return self.idiv(self.iadd(a, b - 1), b)

    def round_down(self, a: Value, b: int) -> Value:
        """The largest multiple of b not above a."""
        return self.imul(self.idiv(a, b), b)

    def _as_value(self, x: Value | int, t: Type) -> Value:
        return x if isinstance(x, Value) else self.int_const(x, t)

    def lt(self, a: Value, b: Value | int) -> Value:
        return self.cmp(CmpCond.LT, a, self._as_value(b, a.type))

    def le(self, a: Value, b: Value | int) -> Value:
        return self.cmp(CmpCond.LE, a, self._as_value(b, a.type))

    def eq(self, a: Value, b: Value | int) -> Value:
        return self.cmp(CmpCond.EQ, a, self._as_value(b, a.type))

    def all_of(self, conditions: Sequence[Value]) -> Value:
        """Conjunction of bools (at least one)."""
        result = conditions[0]
        for c in conditions[1:]:
            result = self.arith(ArithBinaryOp.AND, result, c)
        return result

    # -- shapes ----------------------------------------------------------------
    def dim(self, memref: Value, mode: int) -> Value:
        """Size of a mode: a constant when the type knows it, else `size`."""
        t = memref.type
        assert isinstance(t, MemrefType)
        if t.shape[mode] != DYNAMIC:
            return self.int_const(t.shape[mode])
        return self.size(memref, mode)

    def as_column(self, vector: Value) -> Value:
        """A vector viewed as an n×1 matrix (`expand`), for the coopmatrix matmul."""
        t = vector.type
        assert isinstance(t, MemrefType) and t.order == 1
        n, s = t.shape[0], t.stride[0]
        stride2 = DYNAMIC if DYNAMIC in (n, s) else n * s
        result = memref_type(t.element, (n, 1), (s, stride2), t.space)
        dynamic = [self.size(vector, 0)] if n == DYNAMIC else []
        return self.insert(Expand(vector, 0, [n, 1], dynamic, result)).result

    # -- SPMD -----------------------------------------------------------------
    def subgroup_add(self, mode: SubgroupMode, x: Value) -> Value:
        return self.insert(SubgroupOperation(SubgroupOp.ADD, mode, x, x.type)).result

    def subgroup_broadcast(self, x: Value, lane: int) -> Value:
        return self.insert(SubgroupBroadcast(x, self.int_const(lane, i32), x.type)).result

    def lane_id(self, t: Type = index) -> Value:
        """This work-item's index in its subgroup, as type `t`."""
        lane = self.named(self.builtin(BuiltinName.SUBGROUP_LOCAL_ID, i32), "lane")
        return self.cast(lane, t)

    def subgroup_id(self, num_subgroups: int, t: Type = index) -> Value:
        """This subgroup's index in the work-group; a constant 0 when there is one."""
        if num_subgroups == 1:
            return self.int_const(0, t)
        sg = self.named(self.builtin(BuiltinName.SUBGROUP_ID, i32), "sg")
        return self.cast(sg, t)
