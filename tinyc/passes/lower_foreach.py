"""lower-foreach: spread a foreach's iteration space over the work-group.

    foreach (i, j, k) = (l0, l1, l2), (h0, h1, h2) { body }
becomes
    parallel {
      for k = l2 + sg, h2, #subgroups {      ; last mode: across subgroups
        for j = l1, h1 {                     ; middle modes: sequential
          for i = l0 + lane, h0, S { body }  ; first mode: across lanes
        }
      }
    }

The first mode goes across the lanes of a subgroup because it is the
contiguous one (column-major memrefs), so loads and stores in the body are
coalesced. A static first mode of at most S/4 packs several lines of the
second mode into one subgroup step. A one-dimensional foreach spreads its
only mode over lanes and subgroups. Static trip counts of at most one step
drop the loops. Foreach
bodies are SPMD already and keep their instructions; the loop variables are
replaced by the values of the new loops and keep their source names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tinyc.ir.core import Function, Value, erase, replace_uses
from tinyc.ir.instructions import Constant, Foreach, ForeachTile
from tinyc.ir.types import index
from tinyc.passes.lower_collectives import collective_region_instructions
from tinyc.passes.lowering.lowering_builder import LoweringBuilder, static
from tinyc.passes.lowering.context import LoweringContext
from tinyc.passes.lowering.tiling import distribute

if TYPE_CHECKING:
    from tinyc.passes import PassOptions

LOWERS = (Foreach, ForeachTile)
"""The instruction classes this pass replaces (codegen has no emitter for them)."""

PACK_BELOW = 4
"""Pack lines of mode 1 into a subgroup step when the first mode fills at most
1/PACK_BELOW of the lanes. Packed lanes address through l mod e, l / e,
which the CPU vectorizer turns into gathers: measured on batched axpby,
packing wins 2x at 2xN, ~10% at 4xN and loses at 5xN-8xN against masked
contiguous accesses."""


def lower_foreach(fn: Function, options: PassOptions) -> None:
    """Replace every foreach of the collective region by a `parallel` region."""
    ctx = LoweringContext.of(fn, options)
    targets = [inst for inst in collective_region_instructions(fn.body)
               if isinstance(inst, (Foreach, ForeachTile))]
    for inst in targets:
        b = ctx.builder_before(inst)
        with b.parallel():
            if isinstance(inst, ForeachTile):
                _tiles(ctx, b, inst)
            else:
                _distribute(ctx, b, inst)
        erase(inst)
    ctx.session.tidy()


def _tiles(ctx: LoweringContext, b: LoweringBuilder, inst: ForeachTile) -> None:
    """foreach_tile: tile t of the K_0 x K_1 x ... tiles (mode 0 fastest) for subgroup t mod #sg.

        parallel {
          for t = sg, K_0·K_1·…, #subgroups {     ; index
            k_i = t / (K_0…K_{i-1}) mod K_i
            off_i = from_i + k_i·tile_i; size_i = min(tile_i, to_i - off_i)
            body
          }
        }

    with K_i = ⌈(to_i - from_i) / tile_i⌉ (0 for an empty mode). A subgroup
    runs the body for a whole tile, so the offsets are dynamically uniform
    as the spec requires.
    """
    nsg = ctx.num_subgroups
    lower, upper, counts = [], [], []
    for lo, hi, tile in zip(inst.lower, inst.upper, inst.tile_shape):
        T = lo.type
        lo, hi = _local_bound(b, lo, T), _local_bound(b, hi, T)
        extent = _as_index(b, b.isub(hi, lo))
        count = b.imax(b.ceil_div(extent, tile), 0)
        lower.append(lo)
        upper.append(hi)
        counts.append(count)
    total = counts[0]
    for count in counts[1:]:
        total = b.imul(total, count)
    sg = b.subgroup_id(nsg, index)
    with b.for_(sg, total, b.int_const(nsg)) as (t, _, _):
        t = b.named(t, "tile")
        offsets, sizes, rest = [], [], t
        for k, (lo, hi, tile, count) in enumerate(zip(lower, upper, inst.tile_shape, counts)):
            last = k == len(counts) - 1
            position = rest if last else b.irem(rest, count)
            rest = rest if last else b.idiv(rest, count)
            T = lo.type
            offset = b.iadd(lo, _cast(b, b.imul(position, tile), T))
            offsets.append(offset)
            sizes.append(b.imin(b.isub(hi, offset), tile))
        _emit_body(b, inst, [*offsets, *sizes])


def _as_index(b: LoweringBuilder, x: Value) -> Value:
    return _cast(b, x, index)


def _cast(b: LoweringBuilder, x: Value, t) -> Value:
    """x as integer type t (no instruction when it has that type)."""
    if x.type is t:
        return x
    n = static(x)
    return b.int_const(n, t) if n is not None else b.cast(x, t)


def _distribute(ctx: LoweringContext, b: LoweringBuilder, inst: Foreach) -> None:
    """Loops over the iteration space for this work-item, then the body."""
    S, nsg = ctx.subgroup_size, ctx.num_subgroups
    T = inst.loop_type
    dims = inst.dims
    lower = [_local_bound(b, v, T) for v in inst.lower]
    upper = [_local_bound(b, v, T) for v in inst.upper]
    lane = b.lane_id(T)
    sg = b.subgroup_id(nsg, T)
    values: list[Value | None] = [None] * dims

    extent0 = static(b.isub(upper[0], lower[0])) if static(lower[0]) is not None else None
    if dims >= 2 and extent0 is not None and 0 < extent0 <= S // PACK_BELOW:
        _packed(ctx, b, inst, lower, upper, lane, sg, extent0)
        return

    def first_mode() -> None:
        if dims == 1:
            start = b.iadd(b.iadd(lower[0], lane), b.imul(sg, S))
            step = S * nsg
        else:
            start, step = b.iadd(lower[0], lane), S
        _strided(b, start, lower[0], upper[0], step, T,
                 lambda v: _emit_body(b, inst, [v, *values[1:]]))

    def middle_modes(mode: int) -> None:
        if mode == 0:
            first_mode()
            return

        def at(v: Value) -> None:
            values[mode] = v
            middle_modes(mode - 1)

        _sequential(b, lower[mode], upper[mode], T, at)

    if dims == 1:
        first_mode()
        return
    last = dims - 1

    def at_last(t: Value) -> None:
        values[last] = b.iadd(lower[last], t)
        middle_modes(last - 1)

    distribute(b, b.isub(upper[last], lower[last]), sg, nsg, at_last, None)


def _packed(ctx: LoweringContext, b: LoweringBuilder, inst: Foreach, lower: list[Value],
            upper: list[Value], lane: Value, sg: Value, extent0: int) -> None:
    """A short first mode: P = S / extent0 lines of mode 1 share a subgroup step.

    Lane l takes i = l0 + l mod extent0 in line l / extent0, so lanes stay
    busy (an 4xN foreach would leave 3/4 of them idle) and neighbouring lanes
    still touch neighbouring elements. Lanes beyond P·extent0 sit out.
    """
    S, nsg, T = ctx.subgroup_size, ctx.num_subgroups, inst.loop_type
    dims = inst.dims
    pack = S // extent0
    values: list[Value | None] = [None] * dims
    values[0] = b.iadd(lower[0], b.irem(lane, extent0))
    line = b.named(b.idiv(lane, extent0), "line")

    def mode1() -> None:
        if dims == 2:
            start, step = b.iadd(b.iadd(lower[1], line), b.imul(sg, pack)), pack * nsg
        else:
            start, step = b.iadd(lower[1], line), pack
        _strided(b, start, lower[1], upper[1], step, T,
                 lambda v: _emit_body(b, inst, [values[0], v, *values[2:]]))

    def middle_modes(mode: int) -> None:
        if mode == 1:
            mode1()
            return

        def at(v: Value) -> None:
            values[mode] = v
            middle_modes(mode - 1)

        _sequential(b, lower[mode], upper[mode], T, at)

    def modes() -> None:
        if dims == 2:
            mode1()
            return
        last = dims - 1

        def at_last(t: Value) -> None:
            values[last] = b.iadd(lower[last], t)
            middle_modes(last - 1)

        distribute(b, b.isub(upper[last], lower[last]), sg, nsg, at_last, None)

    if S % extent0 == 0:
        modes()
    else:
        with b.if_(b.lt(lane, pack * extent0)) as branch, branch.then():
            modes()


def _local_bound(b: LoweringBuilder, v: Value, T) -> Value:
    """A static bound as a constant of the new region (merged there), else itself."""
    n = static(v)
    return v if n is None else b.int_const(n, T)


def _strided(b: LoweringBuilder, start: Value, lower: Value, upper: Value, step: int,
             T, body: Callable[[Value], None]) -> None:
    """body(i) for i = start, start + step, … < upper; start - lower lies in [0, step)."""
    extent = static(b.isub(upper, lower)) if static(lower) is not None else None
    if extent is not None and extent == step:
        body(start)
    elif extent is not None and extent < step:
        with b.if_(b.lt(start, upper)) as branch, branch.then():
            body(start)
    else:
        with b.for_(start, upper, b.int_const(step, T), loop_type=T) as (i, _, _):
            body(i)


def _sequential(b: LoweringBuilder, lower: Value, upper: Value, T,
                body: Callable[[Value], None]) -> None:
    """body(v) for v in [lower, upper); no loop for a static single iteration."""
    extent = static(b.isub(upper, lower)) if static(lower) is not None else None
    if extent == 1:
        body(lower)
        return
    with b.for_(lower, upper, loop_type=T) as (v, _, _):
        body(v)


def _emit_body(b: LoweringBuilder, inst: Foreach | ForeachTile, values: list[Value | None]) -> None:
    """Move the foreach body here, its loop variables (region arguments) replaced by `values`."""
    body = inst.body
    for var, value in zip(body.args, values):
        assert value is not None
        if value.name is None and value.owner is not None and var.name:
            value.name = var.name
        replace_uses(body, var, value)
    for op in list(body.instructions):
        b.insert(op)
        if isinstance(op, Constant):
            b.session.adopt_constant(op)
    body.instructions.clear()
