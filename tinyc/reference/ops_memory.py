"""Memory instructions: alloca, load, store, size and the views subview/expand/fuse."""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyc.ir.core import is_allocated
from tinyc.ir.instructions import (
    WHOLE_MODE, Alloca, Associated, Expand, Fuse, LifetimeStop, Load, Size, Store, StoreFlag,
    Subview,
)
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType, ScalarType
from tinyc.reference.errors import ReferenceUnsupported
from tinyc.reference.memory import NullTensor
from tinyc.reference.memory import (
    GroupValue, Memref, expand, fuse, group_member, load_element, store_element, subview,
)
from tinyc.reference.scalars import coerce, storage_dtype
from tinyc.reference.state import State, evaluates

_GARBAGE_BYTE = 0xA5


def garbage(element: ScalarType, count: int) -> np.ndarray:
    """Fresh local memory: NaN for floating types, a 0xA5 byte pattern for integers.

    Local memory starts undefined; filling it with NaN makes a kernel that reads
    it before writing produce NaN instead of a plausible zero.
    """
    dtype = storage_dtype(element)
    if element.name == "bf16":
        return np.full(count, 0x7FC1, dtype=dtype)
    if element.is_int:
        return np.full(count * dtype.itemsize, _GARBAGE_BYTE, dtype=np.uint8).view(dtype)
    return np.full(count, np.nan, dtype=dtype)


@evaluates(Alloca)
def alloca(inst: Alloca, st: State) -> None:
    t = inst.result.type
    assert isinstance(t, MemrefType)
    if DYNAMIC in t.shape:
        raise ReferenceUnsupported(f"alloca of {t} with dynamic sizes")
    strides: list[int] = []
    for k, s in enumerate(t.stride):
        strides.append(s if s != DYNAMIC else (strides[-1] * t.shape[k - 1] if k else 1))
    extent = 0 if 0 in t.shape else 1 + sum((n - 1) * s for n, s in zip(t.shape, strides))
    st.set(inst.result, Memref(t.element, garbage(t.element, extent), 0, tuple(t.shape), tuple(strides)))


@evaluates(LifetimeStop)
def lifetime_stop(inst: LifetimeStop, st: State) -> None:
    """The memory may be reused from here on: scribble over it so late reads show."""
    value = inst.operands[0]
    m = st.get(value)
    if is_allocated(value) and isinstance(m, Memref) and isinstance(m.buffer, np.ndarray):
        m.buffer[...] = garbage(m.element, m.buffer.size)


def _indices(values: list, st: State) -> list[Any]:
    return [st.get(v) for v in values]


@evaluates(Load)
def load(inst: Load, st: State) -> None:
    tensor = st.get(inst.tensor)
    if isinstance(inst.tensor.type, GroupType):
        assert isinstance(tensor, GroupValue)
        st.set(inst.result, group_member(tensor, st.get(inst.indices[0]), st, "load"))
        return
    value = load_element(tensor, _indices(inst.indices, st), st, "load")
    st.set(inst.result, coerce(value, inst.result.type))


@evaluates(Store)
def store(inst: Store, st: State) -> None:
    tensor: Memref = st.get(inst.tensor)
    value = coerce(st.get(inst.value), tensor.element)
    # In a collective region every work-item executes the store: an atomic add
    # then adds once per work-item (a plain store writes the same value).
    repeat = st.geometry.work_items if st.lanes is None and inst.flag is StoreFlag.ATOMIC_ADD else 1
    store_element(tensor, _indices(inst.indices, st), value, inst.flag, st, f"store{inst.flag.value}",
                  repeat)


@evaluates(Size)
def size(inst: Size, st: State) -> None:
    tensor = st.get(inst.operands[0])
    if isinstance(tensor, GroupValue):
        t = inst.operands[0].type
        assert isinstance(t, GroupType)
        count = t.size if t.size != DYNAMIC else len(tensor)
        st.set(inst.result, coerce(np.int64(count), inst.result.type))
        return
    st.set(inst.result, coerce(np.asarray(tensor.shape[inst.mode], dtype=np.int64)[()],
                               inst.result.type))


@evaluates(Subview)
def subview_(inst: Subview, st: State) -> None:
    tensor: Memref = st.get(inst.tensor)
    slices: list[tuple[Any, Any]] = []
    for k, (off, size) in enumerate(inst.mode_slices()):
        off_value = np.int64(off) if isinstance(off, int) else st.get(off)
        if isinstance(size, int):
            if size == WHOLE_MODE:
                slices.append((np.int64(0), tensor.shape[k]))
            elif size == 0:
                slices.append((off_value, None))
            else:
                slices.append((off_value, np.int64(size)))
        else:
            slices.append((off_value, st.get(size)))
    st.set(inst.result, subview(tensor, slices, st, "subview", inst.extra_shape()))


@evaluates(Expand)
def expand_(inst: Expand, st: State) -> None:
    dynamic = iter(inst.operands[1:])
    sizes = [st.get(next(dynamic)) if s == DYNAMIC else np.int64(s) for s in inst.static_shape]
    st.set(inst.result, expand(st.get(inst.tensor), inst.mode, sizes, st, "expand"))


@evaluates(Fuse)
def fuse_(inst: Fuse, st: State) -> None:
    st.set(inst.result, fuse(st.get(inst.operands[0]), inst.first, inst.last, st, "fuse"))


@evaluates(Associated)
def associated(inst: Associated, st: State) -> None:
    """False for a memref or group argument passed as None."""
    st.set(inst.result, np.bool_(not isinstance(st.get(inst.operands[0]), NullTensor)))
