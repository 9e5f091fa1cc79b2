"""Subgroup broadcast, reductions and scans (SPIR-V `Groups`, Subgroup scope).

RUNTIME-NOTES §8: OpGroupBroadcast needs a 32-bit lane id (a 64-bit id fails
to link). Types the builtin library may lack are widened: 8/16-bit ints (and
bf16/f16 bits for broadcast) travel as 32-bit ints, bf16 arithmetic as f32,
complex values part by part. Exclusive min/max scans of widened ints clamp
lane 0's identity back to the narrow type's identity, as the spec asks.
"""

from __future__ import annotations

from tinyc.ir.instructions import SubgroupBroadcast, SubgroupMode, SubgroupOp, SubgroupOperation
from tinyc.ir.types import ScalarType, bf16, f16, f32, i32
from tinyc.spirv.codegen import scalar
from tinyc.spirv.codegen.context import CodegenError, Ctx
from tinyc.spirv.codegen.dispatch import emits
from tinyc.spirv.codegen.types import scalar_type
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import GroupOperation, Op, OpenCLStd, Scope


def broadcast(ctx: Ctx, t: ScalarType, x: Id, lane: Id) -> Id:
    """x of subgroup lane `lane` (a 32-bit id), for any scalar type."""
    sub = ctx.scope(Scope.Subgroup)
    if t.is_complex:
        re, im = scalar.parts(ctx, t, x)
        return scalar.make_complex(ctx, t, broadcast(ctx, t.component, re, lane),
                                   broadcast(ctx, t.component, im, lane))
    if t.size >= 4:
        return ctx.op(Op.GroupBroadcast, scalar_type(ctx.m, t), sub, x, lane)
    bits_t = ctx.m.type_int(t.bits)
    bits = ctx.op(Op.Bitcast, bits_t, x) if t is f16 else x
    wide = ctx.op(Op.GroupBroadcast, ctx.i32, sub, ctx.op(Op.UConvert, ctx.i32, bits), lane)
    narrow = ctx.op(Op.UConvert, bits_t, wide)
    return ctx.op(Op.Bitcast, scalar_type(ctx.m, f16), narrow) if t is f16 else narrow


@emits(SubgroupBroadcast)
def emit_subgroup_broadcast(ctx: Ctx, inst: SubgroupBroadcast) -> None:
    x, lane = inst.operands
    lane_id = ctx.id(lane)
    if lane.type.bits != 32:
        lane_id = ctx.op(Op.UConvert if lane.type.bits < 32 else Op.SConvert, ctx.i32, lane_id)
    ctx[inst.result] = broadcast(ctx, x.type, ctx.id(x), lane_id)


_MODES = {SubgroupMode.REDUCE: GroupOperation.Reduce,
          SubgroupMode.INCLUSIVE_SCAN: GroupOperation.InclusiveScan,
          SubgroupMode.EXCLUSIVE_SCAN: GroupOperation.ExclusiveScan}
_INT_OPS = {SubgroupOp.ADD: Op.GroupIAdd, SubgroupOp.MAX: Op.GroupSMax, SubgroupOp.MIN: Op.GroupSMin}
_FLOAT_OPS = {SubgroupOp.ADD: Op.GroupFAdd, SubgroupOp.MAX: Op.GroupFMax, SubgroupOp.MIN: Op.GroupFMin}


def group_operation(ctx: Ctx, op: SubgroupOp, mode: SubgroupMode, t: ScalarType, x: Id) -> Id:
    """The spec's subgroup operation on any allowed scalar type."""
    sub, gop = ctx.scope(Scope.Subgroup), _MODES[mode]
    if t.is_complex:
        if op is not SubgroupOp.ADD:
            raise CodegenError(f"subgroup_{op.value} is not defined on {t}")
        re, im = scalar.parts(ctx, t, x)
        return scalar.make_complex(ctx, t, group_operation(ctx, op, mode, t.component, re),
                                   group_operation(ctx, op, mode, t.component, im))
    if t.is_float:
        work = f32 if t is bf16 else t
        y = ctx.op(_FLOAT_OPS[op], scalar_type(ctx.m, work), sub, gop, scalar.widen(ctx, t, x))
        return scalar.narrow(ctx, t, y)
    if t.bits >= 32:
        return ctx.op(_INT_OPS[op], scalar_type(ctx.m, t), sub, gop, x)
    wide = ctx.op(Op.SConvert, ctx.i32, x)
    y = ctx.op(_INT_OPS[op], ctx.i32, sub, gop, wide)
    if mode is SubgroupMode.EXCLUSIVE_SCAN and op is not SubgroupOp.ADD:
        # lane 0 got the i32 identity; the spec wants the narrow type's.
        lo, hi = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
        fn, bound = (OpenCLStd.s_max, lo) if op is SubgroupOp.MAX else (OpenCLStd.s_min, hi)
        y = ctx.ext(fn, ctx.i32, y, scalar.constant(ctx, i32, bound))
    return ctx.op(Op.SConvert, scalar_type(ctx.m, t), y)


@emits(SubgroupOperation)
def emit_subgroup_operation(ctx: Ctx, inst: SubgroupOperation) -> None:
    (x,) = inst.operands
    ctx[inst.result] = group_operation(ctx, inst.op, inst.mode, x.type, ctx.id(x))
