"""axpby and hadamard_product: element-wise updates as `foreach` loops.

The foreach runs over the output's index space; lower-foreach then puts its
first mode across subgroup lanes, so loads and stores of the output (and of
non-transposed inputs) are coalesced. Inputs are cast to the output's
element type before the arithmetic (spec: promotion into the output type).

With a `tile` knob [r, c] other than [1, 1], each work-item handles r
elements along mode 0 (S apart, so lanes stay coalesced) for each of c
columns per step instead (`tiled_elements`): fewer loop steps, more
independent loads in flight. A 1-D output takes r·c elements along mode 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tinyc.ir.core import Value
from tinyc.ir.instructions import Axpby, HadamardProduct
from tinyc.ir.types import MemrefType
from tinyc.passes.lowering.lowering_builder import LoweringBuilder, static
from tinyc.passes.lowering.context import LoweringContext
from tinyc.passes.lowering.registry import lowers
from tinyc.passes.lowering.scaling import prepare_scaling, store_update
from tinyc.passes.lowering.tiling import distribute

INDEX_NAMES = ("i", "j", "k", "l", "m", "n")


@contextmanager
def foreach_over(b: LoweringBuilder, shape_of: Value, modes: list[int] | None = None
                 ) -> Iterator[list[Value]]:
    """A foreach over all (or the given) modes of a memref; yields the loop variables."""
    t = shape_of.type
    assert isinstance(t, MemrefType)
    modes = list(range(t.order)) if modes is None else modes
    uppers = [b.named(b.dim(shape_of, mode), f"size{mode}") for mode in modes]
    lowers = [b.int_const(0) for _ in modes]
    with b.foreach(lowers, uppers) as loop_vars:
        for v, mode in zip(loop_vars, modes):
            b.named(v, INDEX_NAMES[mode] if mode < len(INDEX_NAMES) else f"i{mode}")
        yield loop_vars


@lowers(Axpby)
def lower_axpby(ctx: LoweringContext, b: LoweringBuilder, inst: Axpby) -> None:
    """B := alpha op(A) + beta B, one element per loop iteration."""
    A, B = inst.inputs[0], inst.output
    out_type = B.type.element  # type: ignore[attr-defined]
    if B.type.order == 0:  # type: ignore[attr-defined]
        with b.parallel():
            scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
            with b.if_(first_work_item(ctx, b)) as branch, branch.then():
                store_update(b, scaling, b.cast(b.load(A, []), out_type), B, [])
        return
    tile = ctx.knobs(inst)["tile"]
    if tile != [1, 1]:
        with b.parallel():
            scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)

            def element(idx: list[Value]) -> None:
                a_idx = idx[::-1] if inst.transpose and len(idx) == 2 else idx
                store_update(b, scaling, b.cast(b.load(A, a_idx), out_type), B, idx)

            tiled_elements(ctx, b, B, tile, element)
        return
    scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
    with foreach_over(b, B) as idx:
        a_idx = idx[::-1] if inst.transpose and len(idx) == 2 else idx
        x = b.named(b.cast(b.load(A, a_idx), out_type), "x")
        store_update(b, scaling, x, B, idx)


@lowers(HadamardProduct)
def lower_hadamard_product(ctx: LoweringContext, b: LoweringBuilder,
                           inst: HadamardProduct) -> None:
    """c := alpha a∘b + beta c, one element per loop iteration."""
    x_mem, y_mem = inst.inputs
    out = inst.output
    out_type = out.type.element  # type: ignore[attr-defined]
    tile = ctx.knobs(inst)["tile"]
    if tile != [1, 1]:
        with b.parallel():
            scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)

            def element(idx: list[Value]) -> None:
                x = b.cast(b.load(x_mem, idx), out_type)
                y = b.cast(b.load(y_mem, idx), out_type)
                store_update(b, scaling, b.mul(x, y), out, idx)

            tiled_elements(ctx, b, out, tile, element)
        return
    scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
    with foreach_over(b, out) as idx:
        x = b.cast(b.load(x_mem, idx), out_type)
        y = b.cast(b.load(y_mem, idx), out_type)
        store_update(b, scaling, b.named(b.mul(x, y), "prod"), out, idx)


def first_work_item(ctx: LoweringContext, b: LoweringBuilder) -> Value:
    """True on work-item 0 of subgroup 0: the one that does scalar work."""
    is_lane0 = b.eq(b.lane_id(), 0)
    if ctx.num_subgroups == 1:
        return is_lane0
    return b.all_of([is_lane0, b.eq(b.subgroup_id(ctx.num_subgroups), 0)])


def tiled_elements(ctx: LoweringContext, b: LoweringBuilder, out: Value, tile: list[int],
                   element: Callable[[list[Value]], None]) -> None:
    """element(idx) for every index of `out` (order 1 or 2), r·S rows by c columns per step.

    Inside a `parallel` region. Rows: lane l takes i0 + l + S·u for u < r
    (mode 0 is contiguous, so each u is one coalesced vector); columns: c
    consecutive columns per step, the steps round-robin over the subgroups.
    Elements past a size that the step does not divide are guarded.
    """
    S, nsg = ctx.subgroup_size, ctx.num_subgroups
    r, c = tile
    lane = b.lane_id()
    sg = b.subgroup_id(nsg)
    t = out.type
    assert isinstance(t, MemrefType)
    M = b.named(b.dim(out, 0), "size0")
    if t.order == 1:
        r, step = r * c, S * nsg
        start = b.iadd(lane, b.imul(sg, S))
        _rows(b, start, M, step, r, lambda i: element([i]))
        return
    N = b.named(b.dim(out, 1), "size1")

    def columns(g: Value) -> None:
        j0 = b.named(b.imul(g, c), "j0")
        n = static(N)

        def row_block(i: Value) -> None:
            for v in range(c):
                j = b.iadd(j0, v)
                if n is not None and n % c == 0:
                    element([i, j])
                    continue
                with b.if_(b.lt(j, N)) as branch, branch.then():
                    element([i, j])

        _rows(b, lane, M, S, r, row_block)

    distribute(b, b.ceil_div(N, c), sg, nsg, columns, "cols")


def _rows(b: LoweringBuilder, start: Value, end: Value, step: int, r: int,
          body: Callable[[Value], None]) -> None:
    """body(i) for i = start + step·u (u < r) in steps of r·step up to `end` (exclusive).

    `start` lies in [0, step). The loop runs over whole chunks of r·step rows
    from 0, the same bounds on every lane, and adds `start` inside (a loop
    starting at the lane id ran masked on the CPU runtime); the rows past the
    last whole chunk are one more step, each row checked against `end`.
    """
    n = static(end)

    def unrolled(i0: Value, checked: bool) -> None:
        for u in range(r):
            i = b.iadd(i0, step * u) if u else i0
            if not checked:
                body(i)
                continue
            with b.if_(b.lt(i, end)) as branch, branch.then():
                body(i)

    if n is not None and n <= step:
        if n == step:
            body(start)
        else:
            with b.if_(b.lt(start, end)) as branch, branch.then():
                body(start)
        return
    full = b.round_down(end, step * r)   # a constant when `end` is
    with b.for_(b.int_const(0), full, b.int_const(step * r)) as (t0, _, _):
        unrolled(b.named(b.iadd(t0, start), "i"), False)
    if n is None or static(full) != n:
        unrolled(b.iadd(full, start), True)
