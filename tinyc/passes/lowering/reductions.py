"""sum and cumsum: reductions and scans.

Sums along the contiguous mode 0 use lane-strided partial sums and one
`subgroup_add.reduce`; sums along other modes run sequentially per lane,
with lanes along mode 0. Cumulative sums along mode 0 scan chunks of S
elements with `subgroup_add.inclusive_scan` and carry the running sum;
along other modes (or a short mode 0) each lane scans sequentially.
Accumulation happens in the output's element type, f32 for the 16-bit floats
(tinyc.ir.types.accumulation_type), rounded to it once per stored value.

Knobs: for sum, `tile` [r, 1] keeps r independent partial sums per lane
(added together at the end: this changes the order of the additions) and
`k_unroll` adds k elements to each per loop step (in order); for cumsum,
`tile` [r, 1] scans r chunks of S elements per loop step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tinyc.ir.core import Value
from tinyc.ir.instructions import Cumsum, SubgroupMode, Sum
from tinyc.ir.types import DYNAMIC, MemrefType, ScalarType, accumulation_type
from tinyc.passes.lowering.blas1 import INDEX_NAMES, foreach_over
from tinyc.passes.lowering.lowering_builder import LoweringBuilder, static
from tinyc.passes.lowering.context import LoweringContext
from tinyc.passes.lowering.registry import lowers
from tinyc.passes.lowering.scaling import Scaling, prepare_scaling, store_update
from tinyc.passes.lowering.tiling import distribute


@lowers(Sum)
def lower_sum(ctx: LoweringContext, b: LoweringBuilder, inst: Sum) -> None:
    """b := alpha op(A) 1 + beta b, or the scalar b := alpha <A, 1> + beta b."""
    out = inst.output
    if out.type.order == 0:  # type: ignore[attr-defined]
        _sum_to_scalar(ctx, b, inst)
    elif inst.transpose:
        _column_sums(ctx, b, inst)
    else:
        _row_sums(ctx, b, inst)


def _row_sums(ctx: LoweringContext, b: LoweringBuilder, inst: Sum) -> None:
    """b[i] = Σ_j A[i, j]: lanes along i (coalesced), each sums its row sequentially."""
    A, out = inst.inputs[0], inst.output
    out_type = out.type.element  # type: ignore[attr-defined]
    scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
    partials, unroll = _sum_knobs(ctx, inst)
    with foreach_over(b, out) as (i,):
        N = b.named(b.dim(A, 1), "size1")
        total = accumulate(b, b.int_const(0), N, 1, accumulation_type(out_type),
                           lambda j: b.load(A, [i, j]), partials, unroll, ("j", "acc"))
        store_update(b, scaling, b.named(b.cast(total, out_type), "row_sum"), out, [i])


def _column_sums(ctx: LoweringContext, b: LoweringBuilder, inst: Sum) -> None:
    """b[j] = Σ_i A[i, j]: a subgroup per column, lanes along i, then one reduce."""
    A, out = inst.inputs[0], inst.output
    out_type = out.type.element  # type: ignore[attr-defined]
    with b.parallel():
        scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
        lane = b.lane_id()
        M = b.named(b.dim(A, 0), "M")
        N = b.named(b.dim(A, 1), "N")

        partials, unroll = _sum_knobs(ctx, inst)

        def column(j: Value) -> None:
            partial = _lane_strided_sum(b, lane, M, ctx.subgroup_size, accumulation_type(out_type),
                                        lambda i: b.load(A, [i, j]), partials, unroll)
            total = b.named(b.cast(b.subgroup_add(SubgroupMode.REDUCE, partial), out_type), "col_sum")
            _on_lane0(b, lane, lambda: store_update(b, scaling, total, out, [j]))

        distribute(b, N, b.subgroup_id(ctx.num_subgroups), ctx.num_subgroups, column, "j")


def _sum_to_scalar(ctx: LoweringContext, b: LoweringBuilder, inst: Sum) -> None:
    """b := alpha Σ_i A[i] + beta b: lane-strided partial sums, reduce, lane 0 writes.

    Several subgroups can only combine their partial sums atomically, so they
    share the work for `.atomic` with beta = 1; otherwise subgroup 0 does it.
    """
    A, out = inst.inputs[0], inst.output
    out_type = out.type.element  # type: ignore[attr-defined]
    S, nsg = ctx.subgroup_size, ctx.num_subgroups
    with b.parallel():
        scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
        lane = b.lane_id()
        M = b.named(b.dim(A, 0), "M")
        partials, unroll = _sum_knobs(ctx, inst)

        def reduce(start: Value, step: int) -> None:
            partial = _lane_strided_sum(b, start, M, step, accumulation_type(out_type),
                                        lambda i: b.load(A, [i]), partials, unroll)
            total = b.named(b.cast(b.subgroup_add(SubgroupMode.REDUCE, partial), out_type), "total")
            _on_lane0(b, lane, lambda: store_update(b, scaling, total, out, []))

        if nsg == 1:
            reduce(lane, S)
        elif inst.atomic and scaling.beta_const == 1:
            sg = b.subgroup_id(nsg)
            reduce(b.iadd(lane, b.imul(sg, S)), S * nsg)
        else:
            with b.if_(b.eq(b.subgroup_id(nsg), 0)) as branch, branch.then():
                reduce(lane, S)


def _sum_knobs(ctx: LoweringContext, inst: Sum) -> tuple[int, int]:
    """(partial sums per lane, elements per partial sum and loop step)."""
    knobs = ctx.knobs(inst)
    return knobs["tile"][0], knobs["k_unroll"]


def _lane_strided_sum(b: LoweringBuilder, start: Value, end: Value, step: int,
                      out_type: ScalarType, element: Callable[[Value], Value],
                      partials: int = 1, unroll: int = 1) -> Value:
    """Σ element(i) for i = start, start + step, … < end, in the output type.

    `start` lies in [0, step) (a lane, or a lane of one of the subgroups), so a
    static range of at most `step` elements needs no loop, and no check when
    it is exactly `step` long.
    """
    n = static(end)
    if n is not None and n == step:
        return b.cast(element(start), out_type)
    if n is not None and n < step:
        with b.if_(b.lt(start, end), [out_type]) as branch:
            with branch.then():
                b.yield_([b.cast(element(start), out_type)])
            with branch.otherwise():
                b.yield_([b.zero(out_type)])
        return branch.results[0]
    return accumulate(b, start, end, step, out_type, element, partials, unroll)


def accumulate(b: LoweringBuilder, start: Value, end: Value, step: int, out_type: ScalarType,
               element: Callable[[Value], Value], partials: int = 1, unroll: int = 1,
               names: tuple[str, str] = ("i", "partial")) -> Value:
    """Σ element(i) over i = start + step·t < end with `partials` partial sums.

    `start` lies in [0, step). Element t goes to partial sum t mod `partials`;
    each loop step adds `unroll` elements to every partial sum, in order (with
    one partial sum the additions happen exactly as in a plain loop). The loop
    runs over whole chunks of step·partials·unroll elements from 0, the same
    bounds on every lane, and adds `start` inside: a loop whose bounds depend
    on the lane ran masked on the CPU runtime (every carried sum selected per
    lane and step). Elements past the last whole chunk are added by one more,
    checked step. The partial sums are added from the first to the last.
    """
    width = partials * unroll
    chunk = step * width
    n = static(end)
    full = b.round_down(end, chunk)   # a constant when `end` is
    sums = [b.zero(out_type) for _ in range(partials)]
    with b.for_(b.int_const(0), full, b.int_const(chunk), init=sums) as (t0, carried, loop):
        i0 = b.named(b.iadd(t0, start), names[0])
        sums = list(carried)
        for acc in sums:
            b.named(acc, names[1])
        sums = _chunk_step(b, i0, None, step, partials, unroll, out_type, element, sums)
        b.yield_(sums)
    sums = list(loop.results)
    if n is None or static(full) != n:
        sums = _chunk_step(b, b.iadd(full, start), end, step, partials, unroll, out_type, element, sums)
    total = sums[0]
    for p in range(1, partials):
        total = b.add(total, sums[p])
    return total


def _chunk_step(b: LoweringBuilder, i0: Value, end: Value | None, step: int, partials: int, unroll: int,
                out_type: ScalarType, element: Callable[[Value], Value], sums: list[Value]) -> list[Value]:
    """Add the chunk's elements i0 + step·t to the partial sums (each checked `< end` if given)."""
    sums = list(sums)
    for v in range(unroll):
        for p in range(partials):
            offset = step * (v * partials + p)
            i = b.iadd(i0, offset) if offset else i0
            if end is None:
                sums[p] = b.add(sums[p], b.cast(element(i), out_type))
                continue
            with b.if_(b.lt(i, end), [out_type]) as branch:
                with branch.then():
                    b.yield_([b.add(sums[p], b.cast(element(i), out_type))])
                with branch.otherwise():
                    b.yield_([sums[p]])
            sums[p] = branch.results[0]
    return sums


def _on_lane0(b: LoweringBuilder, lane: Value, body: Callable[[], None]) -> None:
    """Run `body` on lane 0 only (one write of a subgroup-wide result)."""
    with b.if_(b.eq(lane, 0)) as branch, branch.then():
        body()


@lowers(Cumsum)
def lower_cumsum(ctx: LoweringContext, b: LoweringBuilder, inst: Cumsum) -> None:
    """B := alpha A ×_n L + beta B (inclusive prefix sums along mode n)."""
    A = inst.inputs[0]
    t = A.type
    assert isinstance(t, MemrefType)
    S = ctx.subgroup_size
    short_mode0 = t.shape[0] != DYNAMIC and t.shape[0] < S // 2
    if inst.mode == 0 and (t.order == 1 or not short_mode0):
        _cumsum_scan(ctx, b, inst)
    else:
        _cumsum_sequential(ctx, b, inst)


def _cumsum_sequential(ctx: LoweringContext, b: LoweringBuilder, inst: Cumsum) -> None:
    """Each work-item scans one line along mode n; lines spread as a foreach."""
    A, B, n = inst.inputs[0], inst.output, inst.mode
    order = B.type.order  # type: ignore[attr-defined]
    out_type = B.type.element  # type: ignore[attr-defined]
    scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
    others = [k for k in range(order) if k != n]
    with foreach_over(b, B, others) as loop_vars:
        length = b.named(b.dim(B, n), f"size{n}")
        def index(j: Value) -> list[Value]:
            idx = list(loop_vars)
            idx.insert(n, j)
            return idx

        acc = accumulation_type(out_type)
        with b.for_(b.int_const(0), length, init=[b.zero(acc)]) as (j, (run,), _):
            b.named(j, INDEX_NAMES[n] if n < len(INDEX_NAMES) else f"i{n}")
            b.named(run, "running")
            new = b.named(b.add(run, b.cast(b.load(A, index(j)), acc)), "prefix")
            store_update(b, scaling, b.cast(new, out_type), B, index(j))
            b.yield_([new])


def _cumsum_scan(ctx: LoweringContext, b: LoweringBuilder, inst: Cumsum) -> None:
    """A subgroup per line along mode 0: chunks of S scanned with inclusive_scan."""
    A, B = inst.inputs[0], inst.output
    order = B.type.order  # type: ignore[attr-defined]
    out_type = B.type.element  # type: ignore[attr-defined]
    S, nsg = ctx.subgroup_size, ctx.num_subgroups
    with b.parallel():
        scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
        lane = b.lane_id()
        length = b.named(b.dim(B, 0), "size0")
        rest = [b.named(b.dim(B, k), f"size{k}") for k in range(1, order)]
        lines = b.int_const(1)
        for size in rest:
            lines = b.imul(lines, size)
        lines = b.named(lines, "lines")

        chunks = ctx.knobs(inst)["tile"][0]

        def line(t: Value) -> None:
            rest_idx = _unflatten(b, t, rest)
            _scan_line(b, scaling, A, B, rest_idx, lane, length, S, chunks)

        distribute(b, lines, b.subgroup_id(nsg), nsg, line, "line")


def _unflatten(b: LoweringBuilder, t: Value, sizes: Sequence[Value]) -> list[Value]:
    """The multi-index (mode 1 fastest) of a flat line number."""
    idx: list[Value] = []
    for k, size in enumerate(sizes):
        if k == len(sizes) - 1:
            idx.append(t)
        else:
            idx.append(b.irem(t, size))
            t = b.idiv(t, size)
    return idx


def _scan_line(b: LoweringBuilder, scaling: Scaling, A: Value, B: Value,
               rest_idx: list[Value], lane: Value, length: Value, S: int, chunks: int = 1) -> None:
    """Inclusive scan of A[:, rest] into B[:, rest], `chunks` chunks of S elements per step."""
    out_type, acc = scaling.out_type, accumulation_type(scaling.out_type)
    n = static(length)

    def chunk(start: Value, carry: Value | None, needs_check: bool) -> Value | None:
        """Scan one chunk; returns the new carry (None when not needed)."""
        i = b.named(b.iadd(start, lane), "i")
        inside = b.named(b.lt(i, length), "inside") if needs_check else None
        if inside is None:
            x = b.cast(b.load(A, [i, *rest_idx]), acc)
        else:
            with b.if_(inside, [acc]) as branch:
                with branch.then():
                    b.yield_([b.cast(b.load(A, [i, *rest_idx]), acc)])
                with branch.otherwise():
                    b.yield_([b.zero(acc)])
            x = branch.results[0]
        scan = b.named(b.subgroup_add(SubgroupMode.INCLUSIVE_SCAN, x), "scan")
        prefix = scan if carry is None else b.named(b.add(carry, scan), "prefix")
        if inside is None:
            store_update(b, scaling, b.cast(prefix, out_type), B, [i, *rest_idx])
        else:
            with b.if_(inside) as branch, branch.then():
                store_update(b, scaling, b.cast(prefix, out_type), B, [i, *rest_idx])
        if carry is None:
            return None
        return b.add(carry, b.subgroup_broadcast(scan, S - 1))

    if n is not None and n <= S:
        chunk(b.int_const(0), None, n < S)
        return
    needs_check = n is None or n % (S * chunks) != 0
    step = b.int_const(S * chunks)
    with b.for_(b.int_const(0), length, step, init=[b.zero(acc)]) as (c, (carry,), _):
        b.named(c, "chunk")
        b.named(carry, "carry")
        for u in range(chunks):
            carry = chunk(b.iadd(c, S * u) if u else c, carry, needs_check)
            assert carry is not None
        b.yield_([carry])
