"""Emitters of the scalar instructions: arith, cast, cmp, constant, math, builtins.

On coopmatrix operands they apply the scalar lowering to every component a
work-item holds (the layouts of operands and result agree: same shape and use).
"""

from __future__ import annotations

from tinyc.ir.instructions import (
    ArithBinary, ArithUnary, Builtin, BuiltinName, Cast, Cmp, Constant, MathUnary, MathUnaryOp,
    SpmdBuiltin,
)
from tinyc.ir.types import CoopMatrixType, ScalarType
from tinyc.spirv.codegen import scalar
from tinyc.spirv.codegen.context import Ctx
from tinyc.spirv.codegen.dispatch import emits
from tinyc.spirv.codegen.types import coop_components, scalar_type
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import BuiltIn, Op


@emits(ArithBinary)
def emit_arith_binary(ctx: Ctx, inst: ArithBinary) -> None:
    a, b = inst.operands
    t = inst.result.type
    if isinstance(t, CoopMatrixType):
        ctx[inst.result] = [scalar.binary(ctx, inst.op, t.component, x, y)
                            for x, y in zip(ctx[a], ctx[b])]
    else:
        ctx[inst.result] = scalar.binary(ctx, inst.op, t, ctx.id(a), ctx.id(b))


@emits(ArithUnary)
def emit_arith_unary(ctx: Ctx, inst: ArithUnary) -> None:
    (a,) = inst.operands
    t = a.type
    if isinstance(t, CoopMatrixType):
        ctx[inst.result] = [scalar.unary(ctx, inst.op, t.component, x) for x in ctx[a]]
    else:
        ctx[inst.result] = scalar.unary(ctx, inst.op, t, ctx.id(a))


@emits(Cast)
def emit_cast(ctx: Ctx, inst: Cast) -> None:
    (a,) = inst.operands
    src, dst = a.type, inst.result.type
    if isinstance(dst, CoopMatrixType):
        ctx[inst.result] = [scalar.cast(ctx, src.component, dst.component, x) for x in ctx[a]]
    else:
        ctx[inst.result] = scalar.cast(ctx, src, dst, ctx.id(a))
        known = ctx.known.get(a)
        if (isinstance(known, int) and src.is_int and dst.is_int
                and -(1 << (dst.bits - 1)) <= known < (1 << (dst.bits - 1))):
            ctx.known[inst.result] = known  # a cast constant index stays foldable


@emits(Cmp)
def emit_cmp(ctx: Ctx, inst: Cmp) -> None:
    a, b = inst.operands
    ctx[inst.result] = scalar.compare(ctx, inst.cond, a.type, ctx.id(a), ctx.id(b))


@emits(Constant)
def emit_constant(ctx: Ctx, inst: Constant) -> None:
    t = inst.result.type
    if isinstance(t, CoopMatrixType):
        c = scalar.constant(ctx, t.component, inst.value)
        ctx[inst.result] = [c] * coop_components(t, ctx.subgroup_size)
        return
    ctx[inst.result] = scalar.constant(ctx, t, inst.value)
    ctx.known[inst.result] = inst.value


@emits(MathUnary)
def emit_math_unary(ctx: Ctx, inst: MathUnary) -> None:
    (a,) = inst.operands
    native = inst.op is MathUnaryOp.NATIVE_EXP
    ctx[inst.result] = scalar.exp(ctx, a.type, ctx.id(a), native)


def resize_int(ctx: Ctx, x: Id, from_bits: int, t: ScalarType, signed: bool) -> Id:
    """An integer id converted to the integer type `t` (sign- or zero-extending)."""
    if from_bits == t.bits:
        return x
    op = Op.SConvert if signed or t.bits < from_bits else Op.UConvert
    return ctx.op(op, scalar_type(ctx.m, t), x)


_BUILTINS: dict[BuiltinName, tuple[BuiltIn, int | None]] = {
    # The batch runs along the third dimension (DESIGN.md, launch geometry).
    # WorkgroupId, not GlobalInvocationId z (equal, local size 1 there): the
    # driver's work-group loop-bound pass segfaults on some modules comparing
    # global ids in two kernels (fuzz seed 301; docs/decisions.md).
    BuiltinName.GROUP_ID: (BuiltIn.WorkgroupId, 2),
    BuiltinName.GROUP_SIZE: (BuiltIn.NumWorkgroups, 2),
    BuiltinName.NUM_SUBGROUPS: (BuiltIn.NumSubgroups, None),
    BuiltinName.SUBGROUP_SIZE: (BuiltIn.SubgroupSize, None),
    BuiltinName.SUBGROUP_ID: (BuiltIn.SubgroupId, None),
    BuiltinName.SUBGROUP_LOCAL_ID: (BuiltIn.SubgroupLocalInvocationId, None),
}


@emits(Builtin, SpmdBuiltin)
def emit_builtin(ctx: Ctx, inst: Builtin) -> None:
    builtin, component = _BUILTINS[inst.builtin]
    value = ctx.builtin(builtin, component)
    bits = 64 if component is not None else 32
    ctx[inst.result] = resize_int(ctx, value, bits, inst.result.type, signed=False)
