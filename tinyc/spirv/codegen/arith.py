"""Emitters of the scalar instructions: arith, cast, cmp, constant, math, builtins.

On coopmatrix operands they apply the scalar lowering to every component a
work-item holds (the layouts of operands and result agree: same shape and
use), except a cast from matrix_acc to matrix_b, which gathers every row
from its lane, and integer div/rem, which divide padding components by 1.
"""

from __future__ import annotations

from tinyc.ir.instructions import (
    ArithBinary, ArithBinaryOp, ArithUnary, Builtin, BuiltinName, Cast, Cmp, Constant, MathUnary,
    SpmdBuiltin,
)
from tinyc.ir.core import Value
from tinyc.ir.types import CoopMatrixType, MatrixUse, ScalarType, index
from tinyc.spirv.codegen import scalar
from tinyc.spirv.codegen.context import Ctx
from tinyc.spirv.codegen.dispatch import emits
from tinyc.spirv.codegen.subgroup import broadcast
from tinyc.spirv.codegen.types import coop_blocks, coop_components, scalar_type
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import BuiltIn, Op, OpenCLStd


@emits(ArithBinary)
def emit_arith_binary(ctx: Ctx, inst: ArithBinary) -> None:
    a, b = inst.operands
    t = inst.result.type
    if isinstance(t, CoopMatrixType):
        divisors = ctx[b]
        if t.component.is_int and inst.op in (ArithBinaryOp.DIV, ArithBinaryOp.REM):
            divisors = _padding_divisors(ctx, t, divisors)
        ctx[inst.result] = [scalar.binary(ctx, inst.op, t.component, x, y)
                            for x, y in zip(ctx[a], divisors)]
    elif (negated := _negated_operand(ctx, inst)) is not None:
        ctx[inst.result] = scalar.flip_signs(ctx, t, ctx.id(negated))
    elif ctx.products and inst.op is ArithBinaryOp.ADD and (a in ctx.products or b in ctx.products):
        product, other = (a, b) if a in ctx.products else (b, a)   # fp_contract: one rounding
        x, y = ctx.products[product]
        ctx[inst.result] = ctx.ext(OpenCLStd.fma, scalar_type(ctx.m, t), ctx.id(x), ctx.id(y), ctx.id(other))
    else:
        ctx[inst.result] = scalar.binary(ctx, inst.op, t, ctx.id(a), ctx.id(b))


def _negated_operand(ctx: Ctx, inst: ArithBinary) -> Value | None:
    """x when `inst` is an exact negation by a constant: -0.0 - x, or on real floats
    x * -1, -1 * x, x / -1. LLVM turns those into the `fneg` that crashes the CPU
    runtime's JIT (scalar.flip_signs says when), so they are emitted as flip_signs."""
    t = inst.result.type
    if not isinstance(t, ScalarType) or t.is_int:
        return None
    a, b = inst.operands

    def is_constant(v: Value, target: float) -> bool:
        return v in ctx.known and scalar.rounds_to(t, ctx.known[v], target)

    if inst.op is ArithBinaryOp.SUB:
        return b if is_constant(a, -0.0) else None
    if t.is_complex:  # a complex product is not a negation (inf * 0 terms)
        return None
    if inst.op is ArithBinaryOp.MUL:
        return a if is_constant(b, -1.0) else b if is_constant(a, -1.0) else None
    if inst.op is ArithBinaryOp.DIV:
        return a if is_constant(b, -1.0) else None
    return None


@emits(ArithUnary)
def emit_arith_unary(ctx: Ctx, inst: ArithUnary) -> None:
    (a,) = inst.operands
    t = a.type
    if isinstance(t, CoopMatrixType):
        ctx[inst.result] = [scalar.unary(ctx, inst.op, t.component, x) for x in ctx[a]]
    else:
        ctx[inst.result] = scalar.unary(ctx, inst.op, t, ctx.id(a))


def _padding_divisors(ctx: Ctx, t: CoopMatrixType, divisors: list[Id]) -> list[Id]:
    """Integer division must not trap on padding components (rows >= R, often 0): divide by 1."""
    S = ctx.subgroup_size
    if t.use is MatrixUse.B or t.rows % S == 0:
        return divisors
    last = coop_blocks(t, S) - 1
    row = ctx.op(Op.IAdd, ctx.i32, ctx.lane_id(), ctx.const32(S * last))
    real = ctx.op(Op.ULessThan, ctx.bool, row, ctx.const32(t.rows))
    one = scalar.constant(ctx, t.component, 1)
    ty = scalar_type(ctx.m, t.component)
    return [d if k < last * t.cols else ctx.op(Op.Select, ty, real, d, one)
            for k, d in enumerate(divisors)]


@emits(Cast)
def emit_cast(ctx: Ctx, inst: Cast) -> None:
    (a,) = inst.operands
    src, dst = a.type, inst.result.type
    if isinstance(dst, CoopMatrixType):
        comps = [scalar.cast(ctx, src.component, dst.component, x) for x in ctx[a]]
        if src.use is not MatrixUse.B and dst.use is MatrixUse.B:
            comps = _gather_rows(ctx, dst, comps)
        ctx[inst.result] = comps
    else:
        ctx[inst.result] = scalar.cast(ctx, src, dst, ctx.id(a))
        known = ctx.known.get(a)
        if (isinstance(known, int) and src.is_int and dst.is_int
                and -(1 << (dst.bits - 1)) <= known < (1 << (dst.bits - 1))):
            ctx.known[inst.result] = known  # a cast constant index stays foldable


def _gather_rows(ctx: Ctx, t: CoopMatrixType, comps: list[Id]) -> list[Id]:
    """matrix_acc -> matrix_b: every work-item gets every row, from the lane that holds it."""
    S = ctx.subgroup_size
    return [broadcast(ctx, t.component, comps[(i // S) * t.cols + j], ctx.const32(i % S))
            for i in range(t.rows) for j in range(t.cols)]


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
    ctx[inst.result] = scalar.math_function(ctx, inst.op.function, inst.op.native, a.type, ctx.id(a))


def resize_int(ctx: Ctx, x: Id, from_bits: int, t: ScalarType, signed: bool) -> Id:
    """An integer id converted to the integer type `t` (sign- or zero-extending)."""
    if from_bits == t.bits:
        return x
    op = Op.SConvert if signed or t.bits < from_bits else Op.UConvert
    return ctx.op(op, scalar_type(ctx.m, t), x)


_GROUP_MODES: dict[BuiltinName, tuple[BuiltIn, int]] = {
    BuiltinName.GROUP_ID: (BuiltIn.WorkgroupId, 0), BuiltinName.GROUP_ID_Y: (BuiltIn.WorkgroupId, 1),
    BuiltinName.GROUP_ID_Z: (BuiltIn.WorkgroupId, 2), BuiltinName.GROUP_SIZE: (BuiltIn.NumWorkgroups, 0),
    BuiltinName.NUM_GROUPS_Y: (BuiltIn.NumWorkgroups, 1),
    BuiltinName.NUM_GROUPS_Z: (BuiltIn.NumWorkgroups, 2),
}
"""Group id and count per mode of the language; mode x is the batch."""

_SUBGROUP_SCALARS: dict[BuiltinName, BuiltIn] = {
    BuiltinName.SUBGROUP_SIZE: BuiltIn.SubgroupSize, BuiltinName.SUBGROUP_ID: BuiltIn.SubgroupId,
    BuiltinName.SUBGROUP_LOCAL_ID: BuiltIn.SubgroupLocalInvocationId,
}


@emits(Builtin, SpmdBuiltin)
def emit_builtin(ctx: Ctx, inst: Builtin) -> None:
    """Group builtins along the batch axis; subgroup counts from the work-group size.

    The language's mode x is the batch, which runs along OpenCL dimension
    `ctx.batch_axis` (z for seed programs, x for newest ones), so the
    modes map to OpenCL dimensions reversed in the seed: x -> z, z -> x
    (tinyc.std.BATCH_AXIS). Subgroups tile the work-group (X, Y) with
    X/S subgroups along x, one per row along y.
    """
    which, t = inst.builtin, inst.result.type
    X, Y = ctx.work_group_size
    S = ctx.subgroup_size
    counts = {BuiltinName.NUM_SUBGROUPS: X // S * Y, BuiltinName.NUM_SUBGROUPS_X: X // S,
              BuiltinName.NUM_SUBGROUPS_Y: Y, BuiltinName.NUM_SUBGROUPS_Z: 1,
              BuiltinName.SUBGROUP_ID_Z: 0}
    if which in counts:
        ctx[inst.result] = scalar.constant(ctx, t, counts[which])
        ctx.known[inst.result] = counts[which]
        return
    if which in _GROUP_MODES:
        builtin, mode = _GROUP_MODES[which]
        axis = mode if ctx.batch_axis == 0 else 2 - mode
        ctx[inst.result] = resize_int(ctx, ctx.builtin(builtin, axis), 64, t, signed=False)
        return
    if which is BuiltinName.SUBGROUP_ID_X:  # the local x id over the subgroup size
        local_x = ctx.builtin(BuiltIn.LocalInvocationId, 0)
        value = ctx.op(Op.UDiv, ctx.i64, local_x, scalar.constant(ctx, index, S))
        ctx[inst.result] = resize_int(ctx, value, 64, t, signed=False)
        return
    if which is BuiltinName.SUBGROUP_ID_Y:
        ctx[inst.result] = resize_int(ctx, ctx.builtin(BuiltIn.LocalInvocationId, 1), 64, t,
                                      signed=False)
        return
    value = ctx.builtin(_SUBGROUP_SCALARS[which])
    ctx[inst.result] = resize_int(ctx, value, 32, t, signed=False)
