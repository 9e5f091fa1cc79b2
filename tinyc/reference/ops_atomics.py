"""atomic_load, atomic_store and atomic_add/max/min (newest language).

The reference runs one schedule of the work-items: in an SPMD region the
active lanes access memory one after another in lane order, so the values
`atomic_add` returns are the running totals in that order (the device may
take any order; tests compare what every order shares). In a collective
region every work-item executes the instruction: an update is applied once
per work-item, and the value returned is the one work-item 0 sees when it
goes first. Scope and semantics only matter to concurrent hardware.

min/max of floats follow fmin/fmax (a NaN operand loses), as `arith.min`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyc.ir.instructions import AtomicLoad, AtomicOp, AtomicStore, AtomicUpdate
from tinyc.ir.types import ScalarType
from tinyc.reference.memory import Memref, flat_index, load_element
from tinyc.reference.scalars import coerce, from_storage, is_varying, register_dtype, to_storage
from tinyc.reference.state import State, evaluates

Combine = Callable[[Any, Any], Any]


def combiner(op: AtomicOp, t: ScalarType) -> Combine:
    """The update `element = f(element, value)` in register values, rounded to t."""
    if op is AtomicOp.ADD:
        fn: Combine = np.add
    elif t.is_int:
        fn = np.maximum if op is AtomicOp.MAX else np.minimum
    else:
        fn = np.fmax if op is AtomicOp.MAX else np.fmin
    return lambda old, value: coerce(fn(old, value), t)


def read_modify_write(t: ScalarType, buffer: np.ndarray, flat: np.ndarray, values: np.ndarray,
                      combine: Combine) -> np.ndarray:
    """Apply the updates one after another in order; the old value each one saw."""
    olds = np.empty(len(flat), dtype=register_dtype(t))
    if len(np.unique(flat)) == len(flat):  # no two updates of one element: all at once
        olds[:] = from_storage(buffer[flat], t)
        buffer[flat] = to_storage(combine(olds, values), t)
        return olds
    for n, (k, v) in enumerate(zip(flat, values)):
        olds[n] = from_storage(buffer[k], t)
        buffer[k] = to_storage(combine(olds[n], v), t)
    return olds


def _lane_updates(m: Memref, flat: Any, value: Any, st: State,
                  each: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray | None]) -> Any:
    """Call each(buffer, flat indices, values) per buffer for the active lanes, in lane order;
    the per-lane results (0 on inactive lanes) if `each` returns any."""
    active = st.active_lanes()
    flat = np.broadcast_to(np.asarray(flat, dtype=np.int64), active.shape)
    values = np.broadcast_to(coerce(value, m.element), active.shape)
    out = np.zeros(active.shape, dtype=register_dtype(m.element))
    buffer = m.buffer
    groups = ([(buffer, active)] if isinstance(buffer, np.ndarray) else
              [(buffer.buffers[b], active & (buffer.which == b)) for b in np.unique(buffer.which[active])])
    for target, lanes in groups:
        got = each(target, flat[lanes], values[lanes])
        if got is not None:
            out[lanes] = got
    return out


@evaluates(AtomicLoad)
def atomic_load(inst: AtomicLoad, st: State) -> None:
    value = load_element(st.get(inst.tensor), [st.get(v) for v in inst.indices], st, inst.title)
    st.set(inst.result, coerce(value, inst.result.type))


@evaluates(AtomicStore)
def atomic_store(inst: AtomicStore, st: State) -> None:
    m: Memref = st.get(inst.tensor)
    flat = flat_index(m, [st.get(v) for v in inst.indices], st, inst.title)
    value = coerce(st.get(inst.value), m.element)
    if st.lanes is None:
        assert isinstance(m.buffer, np.ndarray)
        m.buffer[int(flat)] = to_storage(value, m.element)
        return

    def store(buffer: np.ndarray, at: np.ndarray, values: np.ndarray) -> None:
        buffer[at] = to_storage(values, m.element)  # repeated indices: the last lane's value stays

    _lane_updates(m, flat, value, st, store)


@evaluates(AtomicUpdate)
def atomic_update(inst: AtomicUpdate, st: State) -> None:
    m: Memref = st.get(inst.tensor)
    flat = flat_index(m, [st.get(v) for v in inst.indices], st, inst.title)
    combine = combiner(inst.op, m.element)
    value = st.get(inst.value)
    if st.lanes is None:  # every work-item of the group updates; work-item 0 first
        assert isinstance(m.buffer, np.ndarray) and not is_varying(flat)
        n = st.geometry.work_items
        olds = read_modify_write(m.element, m.buffer, np.full(n, int(flat)),
                                 np.full(n, coerce(value, m.element)), combine)
        st.set(inst.result, coerce(olds[0], inst.result.type))
        return

    def update(buffer: np.ndarray, at: np.ndarray, values: np.ndarray) -> np.ndarray:
        return read_modify_write(m.element, buffer, at, values, combine)

    st.set(inst.result, coerce(_lane_updates(m, flat, value, st, update), inst.result.type))

