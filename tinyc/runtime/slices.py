"""The arguments of one slice of a split launch (sharding.py): views, pads, host copies.

A slice [s, s + n) of the batch gets views of the caller's batched
arguments starting at entry s: NumPy views along the batch mode, USM
views with a moved offset, the members s .. s + n - 1 of a group. Where the
type fixes the batch mode's size, the slice is padded to it (a host copy
of a memref, repeats of the first member for a group). USM arrays the
kernel writes, or that live in another SYCL context than the slice's
queue, go through one host copy per call (`HostCopies`), written back only
after every device succeeded.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType
from tinyc.runtime.arrays import array_view, check_batch, check_writable, extent
from tinyc.runtime.device import import_dpctl
from tinyc.runtime.group_host import MemberWindow
from tinyc.runtime.groups import Group
from tinyc.runtime.numpy_objects import all_numpy
from tinyc.runtime.staging import USMPointer
from tinyc.signature import ParamInfo


class _USMView:
    """A USM array restricted to some entries of one mode (no copy)."""

    __slots__ = ("__sycl_usm_array_interface__", "_keep")

    def __init__(self, interface: dict, keep: Any):
        self.__sycl_usm_array_interface__ = interface
        self._keep = keep


def _usm_strides(iface: dict) -> tuple[int, ...]:
    strides = iface.get("strides")
    if strides is not None:
        return tuple(int(s) for s in strides)
    shape, out, step = iface["shape"], [], 1
    for n in reversed(shape):
        out.insert(0, step)
        step *= max(int(n), 1)
    return tuple(out)


def _usm_slice(value: Any, mode: int, start: int, count: int) -> Any:
    iface = dict(value.__sycl_usm_array_interface__)
    strides = _usm_strides(iface)
    shape = list(map(int, iface["shape"]))
    shape[mode] = count
    iface.update(shape=tuple(shape), strides=strides,
                 offset=int(iface.get("offset") or 0) + start * strides[mode])
    return _USMView(iface, value)


def _usm_context(value: Any) -> Any:
    owner = value.__sycl_usm_array_interface__.get("syclobj")
    return getattr(owner, "sycl_context", owner)


class HostCopies:
    """Host copies of USM arrays for one call: made on first use, written back by `commit`."""

    def __init__(self) -> None:
        self._copies: dict[int, list] = {}  # id -> [USM memory, host bytes, host array, written]
        self.lists: dict[int, dict] = {}  # id of a list of NumPy members -> what its slices share

    def of(self, value: Any, name: str, what: str, written: bool) -> np.ndarray:
        found = self._copies.get(id(value))
        if found is None:
            view = array_view(value, name, what)
            if written:
                check_writable(view, name, what)
            itemsize = view.dtype.itemsize
            nbytes = max(extent(view.shape, view.strides) * itemsize, 1)
            raw = np.empty(nbytes, dtype=np.uint8)
            memory = self._memory(value, view.address, nbytes)
            memory.copy_to_host(raw)
            host = np.ndarray(view.shape, view.dtype, buffer=raw,
                              strides=tuple(s * itemsize for s in view.strides))
            found = self._copies[id(value)] = [memory, raw, host, False, value]
        found[3] = found[3] or written
        return found[2]

    @staticmethod
    def _memory(value: Any, address: int, nbytes: int) -> Any:
        dpctl = import_dpctl()
        owner = value.__sycl_usm_array_interface__.get("syclobj")
        if not isinstance(owner, dpctl.SyclQueue):
            context = getattr(owner, "sycl_context", owner)
            owner = dpctl.SyclQueue(context, context.get_devices()[0])
        return dpctl.memory.as_usm_memory(USMPointer(address, nbytes, owner))

    def commit(self) -> None:
        """Write the copies of written arrays back (after every device succeeded)."""
        for memory, raw, _, written, _ in self._copies.values():
            if written:
                memory.copy_from_host(raw)


class SliceArguments:
    """The arguments of one slice, and what to copy back after success."""

    def __init__(self, params: Sequence[ParamInfo], args: Sequence[Any], part: Any, whole: bool,
                 host: HostCopies):
        self.part, self.whole, self.host = part, whole, host
        self.context = part.queue.sycl_context
        self.commits: list[Callable[[], None]] = []  # padded copies -> the caller's arrays
        self.values = [self._argument(p, v) for p, v in zip(params, args)]

    def _argument(self, p: ParamInfo, value: Any) -> Any:
        t = p.type
        if isinstance(t, MemrefType):
            return self._memref(p, t, value)
        if isinstance(t, GroupType):
            return self._group(p, t, value)
        return value

    def _local(self, p: ParamInfo, value: Any, written: bool) -> Any:
        """A USM array usable on this slice's queue as is, else its host copy."""
        if isinstance(value, np.ndarray) or not hasattr(value, "__sycl_usm_array_interface__"):
            return value
        if not written and _usm_context(value) == self.context:
            return value
        return self.host.of(value, p.name, str(p.type), written)

    def _memref(self, p: ParamInfo, t: MemrefType, value: Any) -> Any:
        mode = p.batch_mode
        if mode is None or self.whole:
            return self._local(p, value, p.written)
        shape = _shape(value)
        if shape is None or len(shape) != t.order:
            return value  # not an array of this order: the kernel's checks say what is wrong
        start, count = self.part.start, self.part.count
        local = self._local(p, value, p.written)
        if t.shape[mode] != DYNAMIC and t.shape[mode] != count:
            if not isinstance(local, np.ndarray):
                local = self.host.of(value, p.name, str(t), p.written)
            if p.written:  # the padded copy is writable; the caller's array must be too
                check_writable(array_view(local, p.name, str(t)), p.name, str(t))
            return self._padded(local, mode, t.shape[mode], p.written)
        if isinstance(local, np.ndarray):
            return local[(slice(None),) * mode + (slice(start, start + count),)]
        return _usm_slice(local, mode, start, count)

    def _padded(self, array: np.ndarray, mode: int, size: int, written: bool) -> np.ndarray:
        """A host array of the type's static batch size whose first entries are this slice's."""
        start, count = self.part.start, self.part.count
        itemsize = array.itemsize
        strides = tuple(s // itemsize for s in array.strides)
        padded_shape = array.shape[:mode] + (size,) + array.shape[mode + 1:]
        raw = np.zeros(max(extent(padded_shape, strides), 1), dtype=array.dtype)
        padded = np.lib.stride_tricks.as_strided(raw, padded_shape, array.strides, writeable=True)
        here = (slice(None),) * mode + (slice(0, count),)
        there = (slice(None),) * mode + (slice(start, start + count),)
        padded[here] = array[there]
        if written:
            self.commits.append(lambda: array.__setitem__(there, padded[here]))
        return padded

    def _group(self, p: ParamInfo, t: GroupType, value: Any) -> Any:
        batched = p.batch_mode is not None and not self.whole
        config: tuple | None = None
        arrays = value
        if isinstance(value, Group):
            arrays, config = value.arrays, (value.offset, value.shape, value.stride)
        stacked = _shape(arrays) is not None
        if not stacked and not isinstance(arrays, (list, tuple)):
            return value  # not a group: the kernel's checks say what is wrong
        pad = t.size if batched and t.size != DYNAMIC and t.size != self.part.count else 0
        if batched and not stacked and not pad and config is None and arrays and type(arrays[0]) is np.ndarray:
            shared = self.host.lists.setdefault(id(arrays), {})  # one read of the list per call
            return MemberWindow(arrays, self.part.start, self.part.count, shared,
                                lambda: self._sliced(p, t, value, arrays, config, pad))
        return self._sliced(p, t, value, arrays, config, pad)

    def _sliced(self, p: ParamInfo, t: GroupType, value: Any, arrays: Any, config: tuple | None,
                pad: int) -> Any:
        """This slice's members: a view of stacked ones, else a list (padded to a static count)."""
        stacked = _shape(arrays) is not None
        batched = p.batch_mode is not None and not self.whole
        if stacked:
            local = self._local(p, arrays, p.written)
            if pad and not isinstance(local, np.ndarray):
                local = self.host.of(arrays, p.name, str(t), p.written)
        elif all_numpy(arrays):  # NumPy members are local to every device
            local = arrays
        else:
            local = [self._local(p, a, p.written) for a in arrays]
        if not batched:
            if local is arrays or not stacked and all(map(_is, local, arrays)):
                return value  # unchanged: the kernel may know this object from earlier calls
            return Group(local, *config) if config else local
        arrays = local
        start, count = self.part.start, self.part.count
        if stacked and not pad:
            shape = _shape(arrays)
            members = (arrays[..., start:start + count] if isinstance(arrays, np.ndarray)
                       else _usm_slice(arrays, len(shape) - 1, start, count))
        else:
            members = [arrays[..., g] for g in range(start, start + count)] if stacked else list(
                arrays[start:start + count])
            members += members[:1] * (pad - count if pad else 0)
        if config is None:
            return members if stacked and not pad else (tuple(members) if isinstance(value, tuple) else members)
        offset, shape, stride = config
        return Group(members, offset, slice_per_member(shape, start, count, pad),
                     slice_per_member(stride, start, count, pad))


def slice_per_member(value: Any, start: int, count: int, pad: int) -> Any:
    """Group(shape=/stride=) for a slice: one tuple stays, a list per member is sliced."""
    if value is None or all(isinstance(v, (int, np.integer)) for v in value):
        return value
    part = list(value[start:start + count])
    return part + part[:1] * (pad - count if pad else 0)


def _is(a: Any, b: Any) -> bool:
    return a is b


def _shape(value: Any) -> tuple[int, ...] | None:
    """The shape of a NumPy or USM array (None for anything else)."""
    if isinstance(value, np.ndarray):
        return value.shape
    iface = getattr(value, "__sycl_usm_array_interface__", None)
    if isinstance(iface, dict) and "shape" in iface:
        try:
            return tuple(int(n) for n in iface["shape"])
        except (TypeError, ValueError):
            return None
    return None


def check_batch_sizes(params: Sequence[ParamInfo], args: Sequence[Any], batch: int) -> None:
    """Batched arrays and groups must cover the whole batch (before slicing hides it)."""
    for p, value in zip(params, args):
        if p.batch_mode is None:
            continue
        what = str(p.type)
        if isinstance(p.type, MemrefType):
            shape = _shape(value)
            if shape is not None and len(shape) == p.type.order:
                check_batch(shape, p.batch_mode, batch, p.name, what)
            continue
        arrays = value.arrays if isinstance(value, Group) else value
        shape = _shape(arrays)
        count = (shape[-1] if shape else 0) if shape is not None else (
            len(arrays) if isinstance(arrays, (list, tuple)) else None)
        if count is not None and count < batch:
            raise LaunchError(f"{what}: group has {count} arrays, too few for batch={batch}", argument=p.name)
