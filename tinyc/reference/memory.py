"""Memrefs and groups as strided views on flat NumPy buffers.

A memref value is a flat 1-D storage buffer plus the spec's view data: an
element offset, a shape and element strides. Every element access computes
`offset + Σ index_k · stride_k` itself, after checking each index against the
shape, so subview/expand/fuse behave exactly as the spec's index maps and an
out-of-bounds access raises ReferenceFault instead of touching other memory.

Inside SPMD regions the offset, sizes and strides may differ per lane
(`subview %A[%i:4]` with a varying `%i`), and a group loaded with a varying
index gives each lane a different member buffer (`MultiBuffer`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.ir.instructions import StoreFlag
from tinyc.ir.types import ScalarType
from tinyc.reference.errors import ReferenceFault
from tinyc.reference.scalars import from_storage, is_varying, register_dtype, storage_dtype, to_storage
from tinyc.reference.state import State

Int = Any  # a Python/NumPy integer, or an int64 array with one entry per lane


@dataclass
class MultiBuffer:
    """Per-lane choice among several buffers (a group loaded with a varying index)."""

    buffers: list[np.ndarray]
    which: np.ndarray  # lane -> index into buffers


@dataclass
class Memref:
    """A memref value: `buffer[offset + Σ i_k·strides[k]]` for 0 <= i_k < shape[k]."""

    element: ScalarType
    buffer: np.ndarray | MultiBuffer
    offset: Int
    shape: tuple[Int, ...]
    strides: tuple[Int, ...]

    @property
    def order(self) -> int:
        return len(self.shape)

    @property
    def uniform(self) -> bool:
        return (not isinstance(self.buffer, MultiBuffer) and not is_varying(self.offset)
                and not any(is_varying(s) for s in self.shape + self.strides))


class NullTensor:
    """A memref or group argument passed as None (a null base address; newest language).

    `associated` tells it apart; any other use is undefined behaviour, which
    the reference reports.
    """

    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, attribute: str):
        raise ReferenceFault(f"'%{self.name}' is not associated (a null memref or group) and "
                             f"cannot be accessed; check it with 'associated'")

    def __getitem__(self, i: int):
        return self.__getattr__("item")

    def __len__(self) -> int:
        return self.__getattr__("len")


class GroupValue:
    """A group argument: member i's memref, already shifted by the group offset.

    Members are bound on first use: a batch of 100000 arrays costs nothing
    when only a sample of work-groups runs.
    """

    def __init__(self, count: int, bind: Callable[[int], Memref]):
        self._count = count
        self._bind = bind
        self._members: dict[int, Memref] = {}

    def __len__(self) -> int:
        return self._count

    def member(self, i: int) -> Memref:
        found = self._members.get(i)
        if found is None:
            found = self._members[i] = self._bind(i)
        return found


# ---------------------------------------------------------------- whole views (collectives)

def ndarray_view(m: Memref, what: str) -> np.ndarray:
    """The memref as a writable NumPy view on its buffer (uniform memrefs only)."""
    if not m.uniform:
        raise ReferenceFault(f"{what}: operand of a collective instruction is not uniform")
    shape = tuple(int(s) for s in m.shape)
    buffer = m.buffer
    assert isinstance(buffer, np.ndarray)
    if any(s == 0 for s in shape):
        return np.empty(shape, dtype=buffer.dtype)
    itemsize = buffer.itemsize
    # Buffers are contiguous 1-D arrays; the constructor also checks the view fits in them.
    return np.ndarray(shape, buffer.dtype, buffer=buffer, offset=int(m.offset) * itemsize,
                      strides=tuple(int(s) * itemsize for s in m.strides))


def read_array(m: Memref, dtype: np.dtype, what: str) -> np.ndarray:
    """A copy of the memref's elements as `dtype` values (bf16 decoded)."""
    return np.asarray(from_storage(ndarray_view(m, what), m.element), dtype=dtype)


def write_array(m: Memref, values: np.ndarray, what: str) -> None:
    """Store `values` (any numeric dtype) into every element, converted to the element type."""
    view = ndarray_view(m, what)
    if view.size:
        view[...] = to_storage(np.asarray(values).astype(register_dtype(m.element)), m.element)


# ---------------------------------------------------------------- element access

def flat_index(m: Memref, indices: Sequence[Int], st: State, what: str) -> Int:
    """`offset + Σ i_k·S_k`, after a bounds check of every index on the active lanes."""
    flat = m.offset
    for k, (i, n, s) in enumerate(zip(indices, m.shape, m.strides)):
        bad = (i < 0) | (i >= n)
        if st.any_active(bad):
            raise ReferenceFault(f"{what}: index {_some(i, bad, st)} out of bounds "
                                 f"for mode {k} of size {_some(n, bad, st)}")
        flat = flat + i * s
    return flat


def _some(value: Int, bad: Any, st: State) -> int:
    """One offending entry of `value` for messages."""
    if is_varying(value) or is_varying(bad):
        lanes = np.nonzero(np.broadcast_to(bad, (st.lanes.count,)) & st.active_lanes())[0]
        return int(np.broadcast_to(value, (st.lanes.count,))[lanes[0]])
    return int(value)


def _lane_index(flat: Int, st: State) -> np.ndarray:
    """Flat indices of every lane, inactive lanes pointing at a harmless element 0."""
    flat = np.broadcast_to(np.asarray(flat, dtype=np.int64), (st.lanes.count,))
    if st.mask is not None:
        flat = np.where(st.mask, flat, 0)
    return flat


def load_element(m: Memref, indices: Sequence[Int], st: State, what: str) -> Any:
    """`load %m[indices]`: a register value (array per lane when anything varies)."""
    flat = flat_index(m, indices, st, what)
    buffer = m.buffer
    if isinstance(buffer, np.ndarray) and not is_varying(flat):
        return from_storage(buffer[int(flat)], m.element)
    flat = _lane_index(flat, st)
    if isinstance(buffer, np.ndarray):
        return from_storage(buffer[flat], m.element)
    out = np.zeros(st.lanes.count, dtype=storage_dtype(m.element))
    active = st.active_lanes()
    for b in np.unique(buffer.which[active]):
        lanes = active & (buffer.which == b)
        out[lanes] = buffer.buffers[b][flat[lanes]]
    return from_storage(out, m.element)


def store_element(m: Memref, indices: Sequence[Int], value: Any, flag: StoreFlag, st: State,
                  what: str, repeat: int = 1) -> None:
    """`store[.atomic|.atomic_add] value, %m[indices]` on the active lanes.

    Lanes store in lane order; `atomic_add` adds once per active lane (and
    `repeat` times per lane: a collective-region store runs on every work-item).
    """
    flat = flat_index(m, indices, st, what)
    if st.lanes is None or (not is_varying(flat) and not is_varying(value)
                            and not isinstance(m.buffer, MultiBuffer) and flag is not StoreFlag.ATOMIC_ADD):
        _store_uniform(m, int(flat), value, flag, repeat)
        return
    active = st.active_lanes()
    flat = np.broadcast_to(np.asarray(flat, dtype=np.int64), active.shape)
    values = np.broadcast_to(np.asarray(value), active.shape)
    buffer = m.buffer
    groups = ([(buffer, active)] if isinstance(buffer, np.ndarray) else
              [(buffer.buffers[b], active & (buffer.which == b)) for b in np.unique(buffer.which[active])])
    for target, lanes in groups:
        if flag is StoreFlag.ATOMIC_ADD:
            _atomic_add(m.element, target, np.repeat(flat[lanes], repeat), np.repeat(values[lanes], repeat))
        else:
            target[flat[lanes]] = to_storage(values[lanes], m.element)


def _store_uniform(m: Memref, flat: int, value: Any, flag: StoreFlag, repeat: int) -> None:
    buffer = m.buffer
    assert isinstance(buffer, np.ndarray)
    if flag is StoreFlag.ATOMIC_ADD:
        _atomic_add(m.element, buffer, np.full(repeat, flat), np.full(repeat, value))
    else:
        buffer[flat] = to_storage(value, m.element)


def _atomic_add(element: ScalarType, buffer: np.ndarray, flat: np.ndarray, values: np.ndarray) -> None:
    """Add values one after another, each rounded to the element type (like a CAS loop)."""
    if element.name == "bf16":
        for i, v in zip(flat, values):
            total = from_storage(buffer[i], element) + np.float32(v)
            buffer[i] = to_storage(total, element)
        return
    np.add.at(buffer, flat, np.asarray(values).astype(buffer.dtype))


# ---------------------------------------------------------------- views

def subview(m: Memref, slices: Sequence[tuple[Int, Int | None]], st: State, what: str,
            extra: tuple[Sequence[int], Sequence[int]] = ((), ())) -> Memref:
    """Slices are (offset, size) per mode; size None drops the mode (a single index).

    `extra`: shape and strides of result modes after the kept ones (the newest
    language takes them, as the reference compiler does); the view must then lie
    within the operand's elements.
    """
    offset = m.offset
    shape: list[Int] = []
    strides: list[Int] = []
    for k, ((off, size), n, s) in enumerate(zip(slices, m.shape, m.strides)):
        if size is None:
            if st.any_active((off < 0) | (off >= n)):
                raise ReferenceFault(f"{what}: index {_some(off, (off < 0) | (off >= n), st)} out of "
                                     f"bounds for mode {k} of size {_some(n, (off < 0) | (off >= n), st)}")
        else:
            if st.any_active(size <= 0):
                raise ReferenceFault(f"{what}: mode {k} has size {_some(size, size <= 0, st)}; "
                                     "a slice size must be positive")
            bad = (off < 0) | (off + size > n)
            if st.any_active(bad):
                raise ReferenceFault(f"{what}: slice {_some(off, bad, st)}:{_some(size, bad, st)} "
                                     f"exceeds mode {k} of size {_some(n, bad, st)}")
            shape.append(size)
            strides.append(s)
        offset = offset + off * s
    if extra[0]:
        shape += extra[0]
        strides += extra[1]
        last = m.offset + sum((n - 1) * s for n, s in zip(m.shape, m.strides))
        reach = offset + sum((n - 1) * s for n, s in zip(shape, strides))
        if st.any_active(reach > last):
            raise ReferenceFault(f"{what}: the view reaches element {_some(reach - m.offset, reach > last, st)} "
                                 f"of an operand with {_some(last - m.offset + 1, reach > last, st)}")
    return Memref(m.element, m.buffer, offset, tuple(shape), tuple(strides))


def expand(m: Memref, mode: int, sizes: Sequence[Int], st: State, what: str) -> Memref:
    """Split `mode` into `sizes` (column-major), whose product must be the mode size."""
    product: Int = 1
    for size in sizes:
        product = product * size
    bad = product != m.shape[mode]
    if st.any_active(bad):
        raise ReferenceFault(f"{what}: the expand shape has {_some(product, bad, st)} elements but "
                             f"mode {mode} has {_some(m.shape[mode], bad, st)}")
    new_strides: list[Int] = []
    stride = m.strides[mode]
    for size in sizes:
        new_strides.append(stride)
        stride = stride * size
    return Memref(m.element, m.buffer, m.offset,
                  m.shape[:mode] + tuple(sizes) + m.shape[mode + 1:],
                  m.strides[:mode] + tuple(new_strides) + m.strides[mode + 1:])


def fuse(m: Memref, first: int, last: int, st: State, what: str) -> Memref:
    """Merge modes first..last; their layout must be that of one column-major mode.

    Strides of size-1 modes never address memory, so the fused stride is the
    stride of the first mode with more than one element.
    """
    sizes = m.shape[first:last + 1]
    strides = m.strides[first:last + 1]
    fused_stride: Int = strides[0]
    seen_big: Any = False
    expected: Int = strides[0]
    bad: Any = False
    for n, s in zip(sizes, strides):
        big = n > 1
        first_big = big & ~np.asarray(seen_big)
        fused_stride = np.where(first_big, s, fused_stride)
        expected = np.where(first_big, s, expected)
        bad = bad | (big & (s != expected))
        seen_big = seen_big | big
        expected = expected * n
    if st.any_active(bad):
        raise ReferenceFault(f"{what}: modes {first}..{last} with sizes {_texts(sizes, st)} and strides "
                             f"{_texts(strides, st)} cannot be fused (need stride·size = next stride)")
    product: Int = 1
    for n in sizes:
        product = product * n
    return Memref(m.element, m.buffer, m.offset,
                  m.shape[:first] + (_scalar_if_uniform(product),) + m.shape[last + 1:],
                  m.strides[:first] + (_scalar_if_uniform(fused_stride),) + m.strides[last + 1:])


def _scalar_if_uniform(x: Any) -> Any:
    arr = np.asarray(x)
    return int(arr) if arr.ndim == 0 else arr


def _texts(values: Sequence[Int], st: State) -> str:
    return "(" + ", ".join(str(_some(v, True, st)) if is_varying(v) else str(int(v)) for v in values) + ")"


def group_member(g: GroupValue, i: Int, st: State, what: str) -> Memref:
    """`load %G[i]`: member i's memref; a varying i gives each lane its member."""
    bad = (i < 0) | (i >= len(g))
    if st.any_active(bad):
        raise ReferenceFault(f"{what}: group index {_some(i, bad, st)} out of range for a group "
                             f"of {len(g)} members")
    if not is_varying(i):
        return g.member(int(i))
    index = np.where(st.active_lanes(), i, 0).astype(np.int64)
    members = [g.member(k) for k in range(len(g))]
    element = members[0].element
    buffers: list[np.ndarray] = []
    which = np.empty(len(members), dtype=np.int64)
    for k, member in enumerate(members):
        for b, known in enumerate(buffers):
            if known is member.buffer:
                which[k] = b
                break
        else:
            which[k] = len(buffers)
            buffers.append(member.buffer)  # type: ignore[arg-type]

    def per_lane(values: list[int]) -> Int:
        arr = np.asarray(values, dtype=np.int64)[index]
        return arr

    offsets = per_lane([int(m.offset) for m in members])
    shape = tuple(per_lane([int(m.shape[k]) for m in members]) for k in range(members[0].order))
    strides = tuple(per_lane([int(m.strides[k]) for m in members]) for k in range(members[0].order))
    buffer: np.ndarray | MultiBuffer = (buffers[0] if len(buffers) == 1
                                        else MultiBuffer(buffers, which[index]))
    return Memref(element, buffer, offsets, shape, strides)
