"""Coopmatrix components one by one: apply, extract, insert, reduce; prefetch.

A coopmatrix value is the list of component ids the work-item holds
(tinyc/ir/coopmatrix_layout.py), so extract and insert are list accesses
and `cooperative_matrix_apply` emits its region once per component, with the
component's row and column as i32 ids. Padding components (rows ≥ R of a
matrix_a/acc whose rows do not fill the last subgroup block) skip the
region, which may load from memory at that row.

Reductions along a row stay in the work-item (it holds whole rows); along a
column they fold the work-item's rows, then reduce across the subgroup.
matrix_b is held whole by every work-item, so both directions are local.
"""

from __future__ import annotations

from tinyc.ir.instructions import (
    ArithBinaryOp, AtomicOp, CoopMatrixApply, CoopMatrixExtract, CoopMatrixInsert,
    CoopMatrixPrefetch, CoopMatrixReduce, ReduceMode, SubgroupMode, SubgroupOp,
)
from tinyc.ir.types import CoopMatrixType, MatrixUse, ScalarType
from tinyc.spirv.codegen import scalar
from tinyc.spirv.codegen.context import Ctx
from tinyc.spirv.codegen.dispatch import emit_region, emits
from tinyc.spirv.codegen.subgroup import group_operation
from tinyc.spirv.codegen.types import coop_blocks, scalar_type
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import Op


@emits(CoopMatrixExtract)
def emit_extract(ctx: Ctx, inst: CoopMatrixExtract) -> None:
    ctx[inst.result] = ctx[inst.operands[0]][inst.index]


@emits(CoopMatrixInsert)
def emit_insert(ctx: Ctx, inst: CoopMatrixInsert) -> None:
    value, matrix = inst.operands
    comps = list(ctx[matrix])
    comps[inst.index] = ctx.id(value)
    ctx[inst.result] = comps


def _row_id(ctx: Ctx, t: CoopMatrixType, block: int) -> tuple[Id, Id | bool]:
    """The i32 row of a block of components, and whether it is a real row (not padding)."""
    S = ctx.subgroup_size
    if t.use is MatrixUse.B:
        return ctx.const32(block), True
    row = ctx.op(Op.IAdd, ctx.i32, ctx.lane_id(), ctx.const32(S * block))
    if (block + 1) * S <= t.rows:
        return row, True
    return row, ctx.op(Op.ULessThan, ctx.bool, row, ctx.const32(t.rows))


@emits(CoopMatrixApply)
def emit_apply(ctx: Ctx, inst: CoopMatrixApply) -> None:
    """The region once per component; padding components keep their value."""
    t: CoopMatrixType = inst.result.type
    row_arg, col_arg, value_arg = inst.body.args
    comps: list[Id] = list(ctx[inst.operands[0]])
    ty = scalar_type(ctx.m, t.component)
    for block in range(coop_blocks(t, ctx.subgroup_size)):
        row, real = _row_id(ctx, t, block)
        for j in range(t.cols):
            k = block * t.cols + j

            def component(k: int = k, j: int = j, row: Id = row) -> list[Id]:
                ctx[row_arg], ctx[col_arg], ctx[value_arg] = row, ctx.const32(j), comps[k]
                return [emit_region(ctx, inst.body)[0]]

            if real is True:
                comps[k] = component()[0]
            else:
                comps[k] = ctx.branch(real, component, None, [ty], [comps[k]])[0]
    ctx[inst.result] = comps


_FOLD = {AtomicOp.ADD: ArithBinaryOp.ADD, AtomicOp.MAX: ArithBinaryOp.MAX, AtomicOp.MIN: ArithBinaryOp.MIN}
_GROUP = {AtomicOp.ADD: SubgroupOp.ADD, AtomicOp.MAX: SubgroupOp.MAX, AtomicOp.MIN: SubgroupOp.MIN}


def identity(ctx: Ctx, op: AtomicOp, t: ScalarType) -> Id:
    """0 for add; the smallest (max) or largest (min) value of t, ±inf for floats."""
    if op is AtomicOp.ADD:
        return scalar.zero(ctx, t)
    if t.is_int:
        half = 1 << (t.bits - 1)
        return scalar.constant(ctx, t, -half if op is AtomicOp.MAX else half - 1)
    inf = float("inf")
    return scalar.constant(ctx, t, -inf if op is AtomicOp.MAX else inf)


@emits(CoopMatrixReduce)
def emit_reduce(ctx: Ctx, inst: CoopMatrixReduce) -> None:
    (a,) = inst.operands
    t: CoopMatrixType = a.type
    comps: list[Id] = ctx[a]
    c = t.component
    fold = _FOLD[inst.op]

    def combine(values: list[Id]) -> Id:
        """Left to right, as the reference interpreter sums."""
        acc = values[0]
        for v in values[1:]:
            acc = scalar.binary(ctx, fold, c, acc, v)
        return acc

    blocks = coop_blocks(t, ctx.subgroup_size)
    if inst.mode is ReduceMode.ROW:  # every work-item holds whole rows
        ctx[inst.result] = [combine(comps[b * t.cols:(b + 1) * t.cols]) for b in range(blocks)]
        return
    if t.use is MatrixUse.B:
        ctx[inst.result] = [combine(comps[j::t.cols]) for j in range(t.cols)]
        return
    ty = scalar_type(ctx.m, c)
    neutral = identity(ctx, inst.op, c)
    out = []
    for j in range(t.cols):
        column = []
        for b in range(blocks):
            _, real = _row_id(ctx, t, b)
            v = comps[b * t.cols + j]
            column.append(v if real is True else ctx.op(Op.Select, ty, real, v, neutral))
        out.append(group_operation(ctx, _GROUP[inst.op], SubgroupMode.REDUCE, c, combine(column)))
    ctx[inst.result] = out  # 1×N: row 0 is lane 0's; the other lanes' copies are padding


@emits(CoopMatrixPrefetch)
def emit_prefetch(ctx: Ctx, inst: CoopMatrixPrefetch) -> None:
    """A hint the spec lets the compiler drop: the CPU's hardware prefetcher follows the
    strided accesses of the loads themselves, so nothing is emitted."""
