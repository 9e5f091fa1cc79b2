"""Control flow and SPMD regions: for, if, yield, foreach, parallel, barrier.

In an SPMD region all lanes run together. A uniform condition or trip count
runs the region once for everyone; a divergent one runs each path with the
mask of the lanes that take it and merges the yielded values per lane.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyc.ir.instructions import Barrier, For, Foreach, ForeachTile, If, Parallel, Yield
from tinyc.reference.errors import ReferenceFault, ReferenceUnsupported
from tinyc.reference.ops_coopmatrix import coop_select
from tinyc.reference.scalars import CoopMatrix, coerce, is_varying
from tinyc.reference.state import Lanes, State, evaluates, execute_region

FOREACH_CHUNK = 1 << 16
"""Foreach iterations run together at most; larger ranges run chunk after chunk."""


@evaluates(Yield)
def yield_(inst: Yield, st: State) -> None:
    st.yielded = [st.get(v) for v in inst.operands]


def select(cond: np.ndarray, a: Any, b: Any, st: State) -> Any:
    """Per lane: a where cond, else b (per subgroup for coopmatrices)."""
    if isinstance(a, CoopMatrix):
        return coop_select(cond, a, b, st)
    return np.where(cond, a, b)


# ---------------------------------------------------------------- for

@evaluates(For)
def for_(inst: For, st: State) -> None:
    t = inst.loop_type
    lower = coerce(st.get(inst.lower), t)
    upper = coerce(st.get(inst.upper), t)
    step = coerce(st.get(inst.step), t) if inst.step is not None else coerce(np.int64(1), t)
    carried = [coerce(st.get(v), c.type) for v, c in zip(inst.init, inst.carried)]
    if st.lanes is not None and any(is_varying(x) for x in (lower, upper, step)):
        carried = _divergent_for(inst, lower, upper, step, carried, st)
    else:
        i = lower
        while step > 0 and i < upper:  # a step that is not positive runs no iteration
            carried = _iteration(inst, i, carried, st)
            i = coerce(i + step, t)
            if i < lower:  # the loop variable overflowed its type: stop rather than restart
                break
    for result, value in zip(inst.results, carried):
        st.set(result, value)


def _iteration(inst: For, i: Any, carried: list[Any], st: State) -> list[Any]:
    st.set(inst.loop_var, i)
    for arg, value in zip(inst.carried, carried):
        st.set(arg, value)
    yielded = execute_region(inst.body, st)
    if not inst.carried:
        return carried
    if yielded is None or len(yielded) != len(inst.carried):
        raise ReferenceFault("for: the body must end in a yield of the carried values")
    return [coerce(y, c.type) for y, c in zip(yielded, inst.carried)]


def _divergent_for(inst: For, lower: Any, upper: Any, step: Any, carried: list[Any],
                   st: State) -> list[Any]:
    """Lanes with different trip counts: iterate while any lane still runs."""
    n = st.lanes.count  # type: ignore[union-attr]
    outer = st.active_lanes()
    i = np.broadcast_to(lower, (n,)).copy()
    upper = np.broadcast_to(upper, (n,))
    step = np.broadcast_to(step, (n,))
    running = outer & (i < upper) & (step > 0)  # a step that is not positive runs no iteration
    while running.any():
        with st.masked(running):
            new = _iteration(inst, i, carried, st)
        carried = [select(running, y, c, st) for y, c in zip(new, carried)]
        following = coerce(i + step, inst.loop_type)
        running = running & (following > i) & (following < upper)
        i = np.where(running, following, i)
    return [coerce(c, v.type) for c, v in zip(carried, inst.carried)]


# ---------------------------------------------------------------- if

@evaluates(If)
def if_(inst: If, st: State) -> None:
    cond = st.get(inst.cond)
    if is_varying(cond):
        active = st.active_lanes()
        taken = active & cond
        skipped = active & ~cond
        if taken.any() and skipped.any():
            with st.masked(taken):
                then_values = execute_region(inst.then, st)
            with st.masked(skipped):
                else_values = execute_region(inst.otherwise, st)
            for k, result in enumerate(inst.results):
                merged = select(cond, then_values[k], else_values[k], st)  # type: ignore[index]
                st.set(result, coerce(merged, result.type))
            return
        cond = bool(taken.any())
    values = execute_region(inst.then if cond else inst.otherwise, st)
    for k, result in enumerate(inst.results):
        st.set(result, coerce(values[k], result.type))  # type: ignore[index]


# ---------------------------------------------------------------- SPMD regions

@evaluates(Foreach)
def foreach(inst: Foreach, st: State) -> None:
    """All iterations run as lanes of one SPMD region, the first loop variable fastest.

    The spec gives no order among iterations; lock-step execution is one valid
    schedule. Subgroup operations, subgroup builtins and barriers have no
    defined meaning here (the work-item of an iteration is implementation-defined).
    """
    t = inst.loop_type
    lower = [int(coerce(st.get(v), t)) for v in inst.lower]
    upper = [int(coerce(st.get(v), t)) for v in inst.upper]
    extents = [max(0, hi - lo) for lo, hi in zip(lower, upper)]
    total = int(np.prod(extents, dtype=np.int64)) if extents else 1
    for start in range(0, total, FOREACH_CHUNK):
        linear = np.arange(start, min(total, start + FOREACH_CHUNK), dtype=np.int64)
        for var, lo, extent in zip(inst.body.args, lower, extents):
            st.set(var, coerce(lo + linear % extent, t))
            linear = linear // extent
        with st.spmd(Lanes("foreach", len(linear))):
            execute_region(inst.body, st)


@evaluates(ForeachTile)
def foreach_tile(inst: ForeachTile, st: State) -> None:
    """Rounds of one tile per subgroup (tile t on subgroup t mod #subgroups, mode 0 fastest).

    The spec leaves the mapping of tiles to subgroups open; every subgroup
    runs the body for a whole tile, so the offsets are dynamically uniform
    and coopmatrix and subgroup operations in the body work. Subgroups
    without a tile in the last round sit it out (masked).
    """
    g = st.geometry
    lower = [int(coerce(st.get(v), v.type)) for v in inst.lower]
    upper = [int(coerce(st.get(v), v.type)) for v in inst.upper]
    counts = [max(0, -(-(hi - lo) // tile)) for lo, hi, tile in zip(lower, upper, inst.tile_shape)]
    total = int(np.prod(counts, dtype=np.int64))
    subgroup = np.arange(g.work_items, dtype=np.int64) // g.subgroup_size
    with st.spmd(Lanes("parallel", g.work_items, g.subgroup_size)):
        for start in range(0, total, g.num_subgroups):
            t = start + subgroup
            active = t < total
            rest = np.where(active, t, 0)
            for k, (lo, hi, tile, count) in enumerate(zip(lower, upper, inst.tile_shape, counts)):
                offset = lo + rest % count * tile
                rest = rest // count
                var, size = inst.offsets[k], inst.sizes[k]
                st.set(var, coerce(offset, var.type))
                st.set(size, coerce(np.minimum(hi - offset, tile), size.type))
            with st.masked(None if active.all() else active):
                execute_region(inst.body, st)


@evaluates(Parallel)
def parallel(inst: Parallel, st: State) -> None:
    """Every work-item of the work-group runs the region, all in lock-step."""
    g = st.geometry
    with st.spmd(Lanes("parallel", g.work_items, g.subgroup_size)):
        execute_region(inst.body, st)


@evaluates(Barrier)
def barrier(inst: Barrier, st: State) -> None:
    """Lock-step execution already orders every access; only check the barrier is reached."""
    if st.lanes is None:
        return
    if st.lanes.kind != "parallel":
        raise ReferenceUnsupported("barrier inside foreach (its work-items are implementation-defined)")
    if st.mask is not None and not st.mask.all():
        raise ReferenceFault("barrier: not every work-item of the work-group reaches it "
                             "(it is inside divergent control flow)")
