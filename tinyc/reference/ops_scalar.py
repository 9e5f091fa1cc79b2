"""Scalar instructions: arith, cmp, cast, constant, math, builtins.

Every function works on uniform NumPy scalars and on per-lane arrays alike.
Integers use fixed-width NumPy arithmetic, so they wrap; division truncates
toward zero and `rem` takes the dividend's sign, like C; float `rem` is C
fmod and min/max are C fmin/fmax (a NaN operand loses), as OpenCL.std.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyc.ir.instructions import (
    ArithBinary, ArithBinaryOp, ArithUnary, ArithUnaryOp, Builtin, BuiltinName, Cast, Cmp,
    CmpCond, Constant, MathUnary, SPMD_BUILTINS, SpmdBuiltin,
)
from tinyc.ir.core import Instruction
from tinyc.ir.types import BoolType, CoopMatrixType, ScalarType, Type
from tinyc.reference.errors import ReferenceFault, ReferenceUnsupported
from tinyc.reference.ops_coopmatrix import coop_constant
from tinyc.reference.scalars import CoopMatrix, coerce, int_range, make_constant
from tinyc.reference.state import State, evaluates

Binary = Callable[[Any, Any, Any, Instruction], Any]  # (a, b, fault checker, instruction)


class _ActiveSubgroups:
    """Stands in for State in fault checks on coopmatrix data (subgroups, rows, cols)."""

    def __init__(self, st: State, what: str):
        self.active = st.subgroups(what)[2]

    def any_active(self, cond: Any) -> bool:
        cond = np.asarray(cond)
        return bool(cond[self.active].any()) if cond.ndim else bool(cond)


def _on_components(t: Type, values: list[Any], st: State, what: str) -> tuple[list[Any], Any, Any]:
    """Unwrap coopmatrix operands: (component values, component type, fault checker)."""
    if isinstance(t, CoopMatrixType):
        return [v.data for v in values], t.component, _ActiveSubgroups(st, what)
    return values, t, st


def _wrap(x: Any, t: Type) -> Any:
    return coerce(CoopMatrix(x), t) if isinstance(t, CoopMatrixType) else coerce(x, t)


# ---------------------------------------------------------------- integer helpers

def _check_divisor(b: Any, st: Any, inst: Instruction) -> None:
    if st.any_active(b == 0):
        raise ReferenceFault(f"{inst.title}: integer division by zero")


def _int_div(a: Any, b: Any, st: Any, inst: Instruction) -> Any:
    """C division: the quotient truncated toward zero."""
    _check_divisor(b, st, inst)
    safe = np.where(b == 0, 1, b).astype(np.result_type(b))
    q = np.floor_divide(a, safe)
    r = a - q * safe
    return q + ((r != 0) & ((a < 0) != (safe < 0))).astype(q.dtype)


def _int_rem(a: Any, b: Any, st: Any, inst: Instruction) -> Any:
    """C remainder: same sign as the dividend."""
    _check_divisor(b, st, inst)
    return np.fmod(a, np.where(b == 0, 1, b).astype(np.result_type(b)))


def _shift(op: Callable[[Any, Any], Any]) -> Binary:
    """Shift counts modulo the bit width, as OpenCL C and tinyc's codegen (docs/decisions.md)."""
    def shift(a: Any, b: Any, st: Any, inst: Instruction) -> Any:
        bits = np.dtype(np.result_type(a)).itemsize * 8
        return op(a, np.bitwise_and(b, bits - 1).astype(np.result_type(a)))
    return shift


def _plain(op: Callable[[Any, Any], Any]) -> Binary:
    return lambda a, b, st, inst: op(a, b)


_INT_BINARY: dict[ArithBinaryOp, Binary] = {
    ArithBinaryOp.ADD: _plain(np.add), ArithBinaryOp.SUB: _plain(np.subtract),
    ArithBinaryOp.MUL: _plain(np.multiply), ArithBinaryOp.DIV: _int_div,
    ArithBinaryOp.REM: _int_rem, ArithBinaryOp.MIN: _plain(np.minimum),
    ArithBinaryOp.MAX: _plain(np.maximum), ArithBinaryOp.SHL: _shift(np.left_shift),
    ArithBinaryOp.SHR: _shift(np.right_shift), ArithBinaryOp.AND: _plain(np.bitwise_and),
    ArithBinaryOp.OR: _plain(np.bitwise_or), ArithBinaryOp.XOR: _plain(np.bitwise_xor),
}
_FLOAT_BINARY: dict[ArithBinaryOp, Binary] = {
    ArithBinaryOp.ADD: _plain(np.add), ArithBinaryOp.SUB: _plain(np.subtract),
    ArithBinaryOp.MUL: _plain(np.multiply), ArithBinaryOp.DIV: _plain(np.true_divide),
    ArithBinaryOp.REM: _plain(np.fmod), ArithBinaryOp.MIN: _plain(np.fmin),
    ArithBinaryOp.MAX: _plain(np.fmax),
}
_COMPLEX_BINARY: dict[ArithBinaryOp, Binary] = {
    op: _FLOAT_BINARY[op] for op in (ArithBinaryOp.ADD, ArithBinaryOp.SUB, ArithBinaryOp.MUL,
                                     ArithBinaryOp.DIV)
}
_BOOL_BINARY: dict[ArithBinaryOp, Binary] = {
    ArithBinaryOp.AND: _plain(np.logical_and), ArithBinaryOp.OR: _plain(np.logical_or),
    ArithBinaryOp.XOR: _plain(np.logical_xor),
}


def _table(t: Type) -> dict:
    if isinstance(t, BoolType):
        return _BOOL_BINARY
    assert isinstance(t, ScalarType)
    return _INT_BINARY if t.is_int else _COMPLEX_BINARY if t.is_complex else _FLOAT_BINARY


@evaluates(ArithBinary)
def arith_binary(inst: ArithBinary, st: State) -> None:
    """Operands already hold their type's register dtype (both have the result type)."""
    t = inst.result.type
    a, b = st.env[inst.operands[0]], st.env[inst.operands[1]]
    checker: Any = st
    if type(t) is CoopMatrixType:
        (a, b), t_component, checker = _on_components(t, [a, b], st, inst.title)
    else:
        t_component = t
    fn = _table(t_component).get(inst.op)
    if fn is None:
        raise ReferenceUnsupported(f"{inst.title} on {t}")
    st.set(inst.result, _wrap(fn(a, b, checker, inst), t))


# ---------------------------------------------------------------- unary

def _unary(op: ArithUnaryOp, x: Any, t: ScalarType | BoolType) -> Any:
    if op is ArithUnaryOp.NOT:
        return np.logical_not(x) if isinstance(t, BoolType) else np.invert(x)
    if op is ArithUnaryOp.NEG:
        return np.negative(x)
    if op is ArithUnaryOp.ABS:
        return np.abs(x)
    if op is ArithUnaryOp.CONJ:
        return np.conj(x)
    if op is ArithUnaryOp.RE:
        return np.real(x)
    if op is ArithUnaryOp.IM:
        return np.imag(x)
    raise ReferenceUnsupported(f"arith.{op.value}")


@evaluates(ArithUnary)
def arith_unary(inst: ArithUnary, st: State) -> None:
    a = inst.operands[0]
    (x,), component, _ = _on_components(a.type, [st.get(a)], st, inst.title)
    st.set(inst.result, _wrap(_unary(inst.op, x, component), inst.result.type))


# ---------------------------------------------------------------- cmp, cast, constant, math

_CMP = {CmpCond.EQ: np.equal, CmpCond.NE: np.not_equal, CmpCond.GT: np.greater,
        CmpCond.GE: np.greater_equal, CmpCond.LT: np.less, CmpCond.LE: np.less_equal}


@evaluates(Cmp)
def cmp(inst: Cmp, st: State) -> None:
    st.set(inst.result, _CMP[inst.cond](st.get(inst.operands[0]), st.get(inst.operands[1])))


@evaluates(Cast)
def cast(inst: Cast, st: State) -> None:
    (x,), source, checker = _on_components(inst.operands[0].type, [st.get(inst.operands[0])], st, "cast")
    target = inst.result.type
    component = target.component if isinstance(target, CoopMatrixType) else target
    assert isinstance(source, ScalarType) and isinstance(component, ScalarType)
    if source.is_complex and not component.is_complex:
        raise ReferenceUnsupported(f"cast from {source} to {component} (forbidden by the spec)")
    if source.is_float and component.is_int:
        x = _float_to_int(x, component, checker)
    st.set(inst.result, _wrap(x, target))


def _float_to_int(x: Any, target: ScalarType, st: Any) -> Any:
    """OpConvertFToS: truncate toward zero; NaN and out-of-range values are undefined."""
    wide = np.trunc(np.asarray(x, dtype=np.float64))
    low, high = int_range(target)
    bad = ~((wide >= low) & (wide <= high))  # NaN compares false
    if st.any_active(bad):
        raise ReferenceFault(f"cast: {x if np.ndim(x) == 0 else x[bad][0]} does not fit {target} "
                             "(the conversion is undefined)")
    wide = np.where(bad, 0, wide)
    return wide.astype(np.int64)[()] if wide.ndim == 0 else wide.astype(np.int64)


@evaluates(Constant)
def constant(inst: Constant, st: State) -> None:
    t = inst.result.type
    if isinstance(t, CoopMatrixType):
        st.set(inst.result, coop_constant(inst.value, t, st))
    else:
        st.set(inst.result, make_constant(inst.value, t))


_MATH = {"cos": np.cos, "sin": np.sin, "exp": np.exp, "exp2": np.exp2, "log": np.log,
         "log2": np.log2}


@evaluates(MathUnary)
def math_unary(inst: MathUnary, st: State) -> None:
    """cos, sin, exp, exp2, log, log2; the reference computes the native_ forms accurately too."""
    t = inst.result.type
    st.set(inst.result, coerce(_MATH[inst.op.function](st.get(inst.operands[0])), t))


# ---------------------------------------------------------------- builtins

@evaluates(Builtin)
def builtin(inst: Builtin, st: State) -> None:
    """Group mode x is the batch; a batch has one group along y and z."""
    which = inst.builtin
    if which in SPMD_BUILTINS:
        spmd_builtin(inst, st)
        return
    g = st.geometry
    value = {BuiltinName.GROUP_ID: st.group_id, BuiltinName.GROUP_ID_Y: 0,
             BuiltinName.GROUP_ID_Z: 0, BuiltinName.GROUP_SIZE: st.batch,
             BuiltinName.NUM_GROUPS_Y: 1, BuiltinName.NUM_GROUPS_Z: 1,
             BuiltinName.NUM_SUBGROUPS: g.num_subgroups,
             BuiltinName.NUM_SUBGROUPS_X: g.x // g.subgroup_size,
             BuiltinName.NUM_SUBGROUPS_Y: g.y, BuiltinName.NUM_SUBGROUPS_Z: 1,
             BuiltinName.SUBGROUP_SIZE: g.subgroup_size}[which]
    st.set(inst.result, coerce(np.int64(value), inst.result.type))


@evaluates(SpmdBuiltin)
def spmd_builtin(inst: Builtin | SpmdBuiltin, st: State) -> None:
    """Lane l is the work-item with local linear id l (x fastest); subgroups run along x."""
    lanes = st.lanes
    if lanes is None or lanes.kind != "parallel":
        raise ReferenceUnsupported(f"{inst.title} outside a parallel region "
                                   "(in foreach the work-item of an iteration is implementation-defined)")
    ids, S, X = lanes.ids, lanes.subgroup_size, st.geometry.x
    value = {BuiltinName.SUBGROUP_ID: ids // S, BuiltinName.SUBGROUP_LOCAL_ID: ids % S,
             BuiltinName.SUBGROUP_ID_X: ids % X // S, BuiltinName.SUBGROUP_ID_Y: ids // X,
             BuiltinName.SUBGROUP_ID_Z: ids * 0}[inst.builtin]
    st.set(inst.result, coerce(value, inst.result.type))
