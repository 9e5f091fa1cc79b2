"""Structured control flow: for, if, yield, parallel, barrier.

`for` becomes a header block (Phis for the loop variable and the carried
values, signed `iv < to`, OpLoopMerge), the body, and a continue block that
adds the step. `if` becomes OpSelectionMerge + OpPhi. A coopmatrix value
flowing through either takes one Phi per component a work-item holds.
Collective regions run on every work-item with uniform values, so
`parallel` simply emits its region in place (foreach is lowered to
parallel + for by the lower-foreach pass).
"""

from __future__ import annotations

from typing import Callable, Sequence

from tinyc.ir.instructions import Barrier, For, If, Parallel, Yield
from tinyc.ir.types import ScalarType
from tinyc.spirv.codegen import scalar
from tinyc.spirv.codegen.context import CodegenError, Ctx
from tinyc.spirv.codegen.dispatch import emit_region, emits
from tinyc.spirv.codegen.types import flat_types, flatten, unflatten, value_type
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import LoopControl, MemorySemantics, Op, Scope


def counted_loop(ctx: Ctx, loop_type: ScalarType, lower: Id, upper: Id, step: Id,
                 init: Sequence[Id], init_types: Sequence[Id],
                 body: Callable[[Id, list[Id]], list[Id]],
                 control: LoopControl = LoopControl.None_,
                 control_args: Sequence[int] = (), wraps: bool = False,
                 only_if: Id | None = None) -> list[Id]:
    """for (iv = lower; iv < upper; iv += step) with carried ids; their final values.

    `wraps`: iv + step may overflow the loop type (a step other than 1 and an
    upper bound near the type's maximum); the loop then ends instead of
    starting over from a negative iv, which would never end. `only_if`: a
    bool that must hold too for any iteration to run.
    """
    m = ctx.m
    lt = value_type(m, loop_type)
    header_label, body_label, cont_label, merge_label = (m.new_id() for _ in range(4))
    pre = ctx.block
    ctx.do(Op.Branch, header_label)
    header = ctx.new_block(header_label)
    iv = header.phi(lt, (lower, pre.label))
    phis = [header.phi(t, (x, pre.label)) for t, x in zip(init_types, init)]
    cond = header.op(Op.SLessThan, ctx.bool, iv.result, upper)
    if only_if is not None:  # a loop-invariant condition too (a run-time step > 0)
        cond = header.op(Op.LogicalAnd, ctx.bool, cond, only_if)
    header.op(Op.LoopMerge, merge_label, cont_label, control, *control_args)
    header.op(Op.BranchConditional, cond, body_label, merge_label)

    ctx.block = ctx.new_block(body_label)
    yielded = body(iv.result, [p.result for p in phis])
    ctx.do(Op.Branch, cont_label)

    cont = ctx.new_block(cont_label)
    nxt = cont.op(Op.IAdd, lt, iv.result, step)
    if wraps:
        nxt = cont.op(Op.Select, lt, cont.op(Op.SLessThan, ctx.bool, nxt, iv.result), upper, nxt)
    cont.op(Op.Branch, header_label)
    iv.operands += [nxt, cont_label]
    for phi, y in zip(phis, yielded):
        phi.operands += [y, cont_label]
    ctx.block = ctx.new_block(merge_label)
    return [p.result for p in phis]


_UNROLL = {True: LoopControl.Unroll, False: LoopControl.DontUnroll}


@emits(For)
def emit_for(ctx: Ctx, inst: For) -> None:
    lt = inst.loop_type
    step = ctx.id(inst.step) if inst.step is not None else scalar.constant(ctx, lt, 1)
    kinds = [v.type for v in inst.carried]
    sizes = [len(flat_types(ctx, t)) for t in kinds]
    init = [x for v in inst.init for x in flatten(ctx[v])]
    types = [x for t in kinds for x in flat_types(ctx, t)]

    def split(ids: list[Id]) -> list:
        out, at = [], 0
        for t, n in zip(kinds, sizes):
            out.append(unflatten(t, ids[at: at + n]))
            at += n
        return out

    def body(iv: Id, carried: list[Id]) -> list[Id]:
        ctx[inst.loop_var] = iv
        for v, lowered in zip(inst.carried, split(carried)):
            ctx[v] = lowered
        return [x for y in emit_region(ctx, inst.body) for x in flatten(y)]

    unroll = inst.attrs.get("unroll")
    if ctx.bounds is not None:
        # The bounds-checked variant leaves unroll hints out: unrolled loops with the checks'
        # conditional records and barriers crashed the runtime's JIT (its pass
        # sycl-kernel-reduce-cross-barrier-values; fuzz seed 20261123, program 117).
        unroll = None
    if isinstance(unroll, bool) or unroll is None:
        control, args = _UNROLL.get(unroll, LoopControl.None_), ()
    else:  # an unroll count (newest language): a partial unroll
        control, args = LoopControl.PartialCount, (unroll,)
    lower, upper = ctx.id(inst.lower), ctx.id(inst.upper)
    positive = None
    if inst.step is not None and not _known_positive(ctx, inst.step):
        # A step that is not positive at run time runs no iteration instead of
        # never ending (the verifier rejects constant ones). (Tested in the loop's
        # condition: selecting the upper bound instead was miscompiled by the CPU
        # runtime next to bf16 conversions; fuzz seed 31, program 366.)
        positive = ctx.op(Op.SGreaterThan, ctx.bool, step, scalar.constant(ctx, lt, 0))
    final = counted_loop(ctx, lt, lower, upper, step, init, types, body, control, args,
                         wraps=_may_wrap(ctx, inst, lt), only_if=positive)
    for r, lowered in zip(inst.results, split(final)):
        ctx[r] = lowered


def _may_wrap(ctx: Ctx, inst: For, lt: ScalarType) -> bool:
    """Can iv + step overflow? Not with step 1 (iv < upper <= max), nor when known
    constants keep upper - 1 + step within the type."""
    step = 1 if inst.step is None else ctx.known.get(inst.step)
    if step == 1:
        return False
    upper = ctx.known.get(inst.upper)
    limit = (1 << (lt.bits - 1)) - 1
    return not (isinstance(step, int) and isinstance(upper, int) and upper - 1 + step <= limit)


def _known_positive(ctx: Ctx, v) -> bool:
    known = ctx.known.get(v)
    return isinstance(known, int) and not isinstance(known, bool) and known > 0


@emits(If)
def emit_if(ctx: Ctx, inst: If) -> None:
    kinds = [r.type for r in inst.results]
    types = [x for t in kinds for x in flat_types(ctx, t)]

    def region(r):
        return lambda: [x for y in emit_region(ctx, r) for x in flatten(y)]

    has_else = bool(inst.otherwise.instructions) or bool(kinds)
    guard = getattr(inst, "bounds_check", None)  # a collective guarded by check-shapes
    if guard is not None and ctx.bounds is not None and not has_else:
        ok = ctx.id(inst.cond)
        for operand in guard.collective.operands:  # its lowered code trusts its operands' views
            valid = getattr(ctx[operand], "valid", True)
            if valid is not True:
                ok = ctx.op(Op.LogicalAnd, ctx.bool, ok, ctx.bounds.as_id(valid))
        ctx.branch(ok, region(inst.then), lambda: _record_rules(ctx, guard))
        return
    ids = ctx.branch(ctx.id(inst.cond), region(inst.then), region(inst.otherwise) if has_else else None, types)
    at = 0
    for r, t in zip(inst.results, kinds):
        n = len(flat_types(ctx, t))
        ctx[r] = unflatten(t, ids[at: at + n])
        at += n


def _record_rules(ctx: Ctx, guard) -> list[Id]:
    """The else branch of a guarded collective: record the first rule that fails."""
    checker = ctx.bounds
    for check in guard.rules:
        site = checker.site(guard.collective, "shape rule", check.rule.what)
        checker.record(ctx.id(check.equal), site, [ctx.id(check.left)], [], [ctx.id(check.right)])
    return []


@emits(Yield)
def emit_yield(ctx: Ctx, inst: Yield) -> None:
    """`emit_region` hands a region's final yield to its for/if; any other is misplaced."""
    raise CodegenError("yield is only valid as the last instruction of a for or if region")


@emits(Parallel)
def emit_parallel(ctx: Ctx, inst: Parallel) -> None:
    """Every work-item runs the SPMD region."""
    emit_region(ctx, inst.body)


@emits(Barrier)
def emit_barrier(ctx: Ctx, inst: Barrier) -> None:
    """OpControlBarrier at work-group scope; .global/.local choose the fenced memory."""
    semantics = MemorySemantics.None_
    if inst.global_fence:
        semantics |= MemorySemantics.CrossWorkgroupMemory
    if inst.local_fence:
        semantics |= MemorySemantics.WorkgroupMemory
    if semantics:
        semantics |= MemorySemantics.SequentiallyConsistent
    wg = ctx.scope(Scope.Workgroup)
    ctx.do(Op.ControlBarrier, wg, wg, ctx.const32(int(semantics)))
    ctx.after_barrier()
