"""Group members in bulk: identities, uniform layouts, pointer tables.

A group of 10^5 members cannot afford Python work per member on every call
(~4 us each was 400 ms per call). What is done instead, all in C loops:

* `member_ids`: the id() of every member of a list or tuple, read from its
  item array in one copy (CPython layout, checked once at import; `map(id)`
  elsewhere). Comparing two such arrays tells whether a group holds the same
  objects as a cached one. Reading the item array relies on the GIL (no
  other thread resizes the list during the copy), so free-threaded builds
  use `map(id)` and compare cached groups by identity, as does everything
  with TINYC_NO_CPYTHON_INTERNALS=1 set (same results; ~40 ns per member
  and call: a few ms at 10^5 members, against ~20 us).
* `uniform_usm`: every member's `__sycl_usm_array_interface__` fetched with
  `map`, then one `list.count` per field: when all members agree on dtype,
  shape, strides and syclobj, the first member is checked in full and the
  others differ only in their pointers and offsets, read into uint64 arrays.
* `uniform_numpy`: all members exact `np.ndarray`s of one dtype and shape,
  Fortran-contiguous and aligned (their flags ANDed tell whether all are
  writeable and own their data); `gather` then copies them into one host
  buffer with np.concatenate along the last mode (casting="no"), `scatter`
  copies results back. Members that passed are not probed again while the
  same objects come back: concatenate still refuses a dtype or rank changed
  in place, and a reshape in place keeps the size, so changes some leading
  mode, which it refuses too (only `resize(refcheck=False)` could change a
  size; that can misplace data in the staging copy, never write outside it).
* `TableCache`: device pointer tables (and the `?` columns) of recent calls,
  reused when the same addresses come again: keyed by (base, step, count) for
  regular tables, or by the member ids of a group (all-USM: its tables;
  NumPy: its GatherPlan).

Whenever a fast check fails, the group packer checks member by member, so
errors still name the member.
"""

from __future__ import annotations

import ctypes
import os
import sys
import sysconfig
import threading
from itertools import repeat
from operator import attrgetter, is_, itemgetter
from typing import Any, Sequence

import numpy as np

from tinyc.runtime.submit import Address

# -- identities ------------------------------------------------------------------
# CPython object layouts (Include/cpython/{listobject,tupleobject}.h): a tuple's
# item pointers follow its header; a list's header is followed by a pointer to
# its item array. Checked against map(id) once at import.
_VAR_SIZE = 16  # PyVarObject.ob_size
_TUPLE_ITEMS = tuple.__basicsize__
_LIST_ITEMS = list.__basicsize__ - 16  # PyListObject.ob_item (then `allocated`)
# memmove called without releasing the GIL (ctypes.memmove releases it): no
# other thread can resize the list while its items are copied.
_move = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)(
    ctypes.cast(ctypes.memmove, ctypes.c_void_p).value
)


def _ids_by_map(members: Sequence[Any]) -> np.ndarray:
    return np.fromiter(map(id, members), dtype=np.uint64, count=len(members))


def _ids_by_memory(members: Sequence[Any]) -> np.ndarray:
    kind = type(members)
    if kind is not tuple and kind is not list:
        return _ids_by_map(members)
    n = len(members)
    out = np.empty(n, dtype=np.uint64)
    if not n:
        return out
    dst, nbytes, address = out.ctypes.data, 8 * n, id(members)
    if kind is tuple:  # immutable, and referenced here: its items stay put
        _move(dst, address + _TUPLE_ITEMS, nbytes)
        return out
    size = ctypes.c_ssize_t.from_address(address + _VAR_SIZE)
    items = ctypes.c_void_p.from_address(address + _LIST_ITEMS)
    if size.value != n:  # resized by another thread since len()
        return _ids_by_map(tuple(members))
    # No call between reading the item pointer and the copy, so no thread
    # switch: the pointer is current when memmove reads through it.
    _move(dst, items.value, nbytes)
    return out


def _libc_memcmp() -> Any:
    """memcmp, called without releasing the GIL (None if libc is not found)."""
    try:
        process = ctypes.CDLL(None)  # the symbols already loaded, libc's among them
        address = ctypes.cast(process.memcmp, ctypes.c_void_p).value
    except (OSError, AttributeError, TypeError):
        return None
    return ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)(address)


_memcmp = _libc_memcmp()


def _same_by_map(members: Sequence[Any], ids: np.ndarray) -> bool:
    return len(members) == len(ids) and bool(np.array_equal(_ids_by_map(members), ids))


def _same_by_memory(members: Sequence[Any], ids: np.ndarray) -> bool:
    """Are these exactly the objects whose ids were taken? One memcmp, nothing allocated."""
    kind, n = type(members), len(members)
    if n != len(ids) or (kind is not tuple and kind is not list) or _memcmp is None:
        return _same_by_map(members, ids)
    if not n:
        return True
    theirs, nbytes, address = ids.ctypes.data, 8 * n, id(members)
    if kind is tuple:
        return _memcmp(address + _TUPLE_ITEMS, theirs, nbytes) == 0
    size = ctypes.c_ssize_t.from_address(address + _VAR_SIZE)
    items = ctypes.c_void_p.from_address(address + _LIST_ITEMS)
    if size.value != n:
        return False
    return _memcmp(items.value, theirs, nbytes) == 0  # as in _ids_by_memory: no call in between


OPT_OUT_VARIABLE = "TINYC_NO_CPYTHON_INTERNALS"
"""Set to 1 to read group members with map(id) instead of CPython's list and tuple layout."""


def _free_threaded() -> bool:
    """A build without the GIL (or with it switched off): another thread may resize a list
    while its item array is copied."""
    gil_enabled = getattr(sys, "_is_gil_enabled", None)
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED")) or (gil_enabled is not None and not gil_enabled())


def _memory_layout_ok() -> bool:
    """Whether member ids may be read from the item arrays: 64-bit CPython with a GIL, the
    layout checked against map(id), and no opt-out."""
    if os.environ.get(OPT_OUT_VARIABLE, "").strip() not in ("", "0"):
        return False
    if sys.implementation.name != "cpython" or ctypes.sizeof(ctypes.c_void_p) != 8 or _free_threaded():
        return False
    items = [object(), 1.5, "x", None, object()]
    for probe in (items, tuple(items)):
        ids = _ids_by_map(probe)
        if not np.array_equal(_ids_by_memory(probe), ids):
            return False
        if _memcmp is not None and not (_same_by_memory(probe, ids) and not _same_by_memory(probe, ids[::-1].copy())):
            return False
    return True


_FAST = _memory_layout_ok()
member_ids = _ids_by_memory if _FAST else _ids_by_map
member_ids.__doc__ = "id() of every member of a list or tuple, as uint64."
same_members = _same_by_memory if _FAST else _same_by_map
same_members.__doc__ = "True if the list or tuple holds exactly the objects of these ids, in order."


# -- USM members --------------------------------------------------------------------
_IFACE = attrgetter("__sycl_usm_array_interface__")
_DATA = itemgetter("data")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


def _all_equal(values: list) -> bool:
    return values.count(values[0]) == len(values)


def uniform_usm(members: Sequence[Any]) -> tuple[np.ndarray, bool] | None:
    """(element-0 addresses, any read-only) of USM members with one layout, else None.

    "One layout": equal typestr, shape, strides and syclobj in every member's
    interface, so checking the first member checks them all; the element
    offsets may differ (views into one allocation).
    """
    try:
        faces = list(map(_IFACE, members))
        if type(faces[0]) is not dict:
            return None
        for key in ("typestr", "shape", "strides", "syclobj"):
            if not _all_equal(list(map(dict.get, faces, repeat(key)))):
                return None
        datas = list(map(_DATA, faces))
        pointers = np.fromiter(map(_FIRST, datas), dtype=np.uint64, count=len(datas))
        readonly = any(map(_SECOND, datas))
        itemsize = np.dtype(faces[0]["typestr"]).itemsize
        offsets = list(map(dict.get, faces, repeat("offset")))
        if _all_equal(offsets):
            return pointers + np.uint64(int(offsets[0] or 0) * itemsize), readonly
        elements = np.fromiter(offsets, dtype=np.int64, count=len(offsets))  # a None fails: checked one by one
        if elements.min() < 0:
            return None
    except Exception:  # anything unusual: the member-by-member path says what
        return None
    return pointers + elements.astype(np.uint64) * np.uint64(itemsize), readonly


# -- NumPy members --------------------------------------------------------------------
# NPY_ARRAY_* flag bits (numpy/ndarraytypes.h), as `ndarray.flags.num` gives them
F_CONTIGUOUS, OWNDATA, ALIGNED, WRITEABLE = 0x0002, 0x0004, 0x0100, 0x0400
_KIND = attrgetter("__class__", "dtype", "shape")
_FLAGS = attrgetter("flags.num")


def uniform_numpy(members: Sequence[Any]) -> int | None:
    """The flags all members share (NPY_ARRAY_* bits ANDed) if they are all
    np.ndarray (exactly) of one dtype and shape, Fortran-contiguous (host
    layout = packed layout), aligned and not empty; else None.

    Two passes over the members, in C. Callers look at WRITEABLE (members
    the kernel writes) and OWNDATA (then no two members share memory, and
    only an argument derived from a member can alias one; see
    `kernel._aliased`).
    """
    first = members[0]
    if type(first) is not np.ndarray or first.ndim == 0 or first.size == 0:
        return None
    try:
        kinds = list(map(_KIND, members))
        if kinds.count((np.ndarray, first.dtype, first.shape)) != len(kinds):
            return None
        common = int(np.bitwise_and.reduce(np.fromiter(map(_FLAGS, members), dtype=np.int64, count=len(kinds))))
    except Exception:  # not an array at all: the member-by-member path says which
        return None
    return common if common & (F_CONTIGUOUS | ALIGNED) == F_CONTIGUOUS | ALIGNED else None


def writeable(members: Sequence[np.ndarray]) -> bool:
    """Are all (checked) members still writeable? (The one flag that changes in place.)"""
    return all(map(_WRITEABLE, members))


_WRITEABLE = attrgetter("flags.writeable")
_ADDRESS = attrgetter("__array_interface__")


def addresses(members: Sequence[np.ndarray]) -> np.ndarray:
    """Host address of every member's first element (~1 us each: only when needed)."""
    faces = map(_ADDRESS, members)
    return np.fromiter(map(_FIRST, map(_DATA, faces)), dtype=np.int64, count=len(members))


def scatter(out: np.ndarray, members: Sequence[np.ndarray]) -> None:
    """The inverse of `gather`: copy each member's part of `out` back into it."""
    first = members[0]
    parts = np.ndarray(first.shape + (len(members),), dtype=first.dtype, buffer=out, order="F")
    for member, part in zip(members, np.moveaxis(parts, -1, 0)):
        np.copyto(member, part)


def gather(members: Sequence[np.ndarray], out: np.ndarray) -> bool:
    """Copy uniform members side by side into `out` (uint8, Fortran order); False on a mismatch."""
    first = members[0]
    shape = first.shape[:-1] + (first.shape[-1] * len(members),)
    target = np.ndarray(shape, dtype=first.dtype, buffer=out, order="F")
    try:
        np.concatenate(members, axis=first.ndim - 1, out=target, casting="no")
    except (TypeError, ValueError):
        return False
    return True


# -- NumPy members read in bulk ---------------------------------------------------------------
# NumPy's array object (numpy/ndarraytypes.h, PyArrayObject_fields, unchanged from NumPy 1.x to
# 2.x): after the object header (refcount, type), the data pointer, nd, the dimensions and
# strides pointers, base, descr and flags. Read here for many members at once, by gathering
# 8-byte words from the members' addresses (their ids), which the caller holds references
# to; only objects whose type is exactly np.ndarray are read past their header. Checked
# against NumPy's own answers once at import (`_HEAD_OK`).
_TYPE, _DATA, _ND, _DIMS, _DESCR, _FLAGS = 8, 16, 24, 32, 56, 64


def _words(addresses: np.ndarray, dtype: Any = np.uint64) -> np.ndarray:
    """The values at these (aligned) addresses, in one gather."""
    item = np.dtype(dtype).itemsize
    lo, hi = int(addresses.min()), int(addresses.max()) + item
    memory = np.frombuffer((ctypes.c_char * (hi - lo)).from_address(lo), dtype=dtype)
    return memory[((addresses - np.uint64(lo)) // np.uint64(item)).astype(np.intp)]


def numpy_heads(ids: np.ndarray) -> tuple[np.ndarray, int]:
    """(data pointers, flags ANDed) of members known to be arrays (by id)."""
    data = _words(ids + np.uint64(_DATA))
    flags = int(np.bitwise_and.reduce(_words(ids + np.uint64(_FLAGS), np.int32)))
    return data, flags


def numpy_heads_again(ids: np.ndarray, plan: "HostPlan") -> tuple[np.ndarray, int] | None:
    """numpy_heads of members checked before (`plan`), if their dtype and order are still
    the plan's (both can be changed in place); None if not."""
    if not bool((_words(ids + np.uint64(_DESCR)) == np.uint64(id(plan.dtype))).all()):
        return None
    if not bool((_words(ids + np.uint64(_ND), np.int32) == plan.ndim).all()):
        return None
    return numpy_heads(ids)


def numpy_uniform(members: Sequence[Any], ids: np.ndarray) -> tuple[np.ndarray, int] | None:
    """(data pointers, flags ANDed) if every member is an np.ndarray (exactly) with the first
    member's dtype object, shape and strides; else None. Nothing is read past the header of
    an object that is not an array."""
    if not _HEAD_OK:
        return None
    return _uniform(members, ids)


def _uniform(members: Sequence[Any], ids: np.ndarray) -> tuple[np.ndarray, int] | None:
    if not len(ids):
        return None
    if not bool((_words(ids + np.uint64(_TYPE)) == np.uint64(id(np.ndarray))).all()):
        return None
    first = members[0]
    if not bool((_words(ids + np.uint64(_DESCR)) == np.uint64(id(first.dtype))).all()):
        return None
    if not bool((_words(ids + np.uint64(_ND), np.int32) == first.ndim).all()):
        return None
    dims = _words(ids + np.uint64(_DIMS))
    for k, expected in enumerate((*first.shape, *first.strides)):  # strides follow the dimensions
        if not bool((_words(dims + np.uint64(8 * k), np.int64) == expected).all()):
            return None
    return numpy_heads(ids)


def _heads_agree() -> bool:
    """Whether the bulk reader gives NumPy's own answers (64-bit CPython, no opt-out)."""
    if not _FAST:
        return False
    try:
        probes = [np.zeros((3, 4), np.float32, order="F"), np.arange(10.0)[::2], np.ones(5, np.int8)]
        probes[2].flags.writeable = False
        ids = member_ids(probes)
        data, _ = numpy_heads(ids)
        each = [int(_words(np.array([i + _FLAGS], dtype=np.uint64), np.int32)[0]) for i in ids.tolist()]
        return (data.tolist() == [p.__array_interface__["data"][0] for p in probes]
                and each == [p.flags.num for p in probes]
                and _uniform(probes[:1] * 3, member_ids(probes[:1] * 3)) is not None
                and _uniform(probes, ids) is None)
    except Exception:
        return False


# -- device pointer tables ----------------------------------------------------------------
class TableCache:
    """What one group parameter learnt in recent calls, by key.

    Mostly device pointer tables with their `?` columns: an entry owns its
    device arrays (not pooled), uploaded before it is added and never
    written again, so calls in several threads may share it. Also the
    checked layout of NumPy members (a GatherPlan).
    """

    SIZE = 8
    PINNED = 3  # entries that keep members alive (identity keys): few, they may hold much memory

    def __init__(self) -> None:
        self._entries: list[tuple[Any, list, Any]] = []  # (key, kernel arguments, pinned objects)
        self._lock = threading.Lock()

    def find(self, key: Any) -> Any:
        with self._lock:
            for i, (k, arguments, _) in enumerate(self._entries):
                if _same_key(k, key):
                    if i:
                        self._entries.insert(0, self._entries.pop(i))
                    return arguments
        return None

    def find_members(self, members: Sequence[Any], config: Any) -> Any:
        """The entry keyed ("ids", ids, config) whose ids are exactly these members'.

        Without the item arrays (`_FAST` false) the members are compared by
        identity with the objects the entry pins (a tuple, or a Group's).
        """
        with self._lock:
            for i, (k, arguments, pins) in enumerate(self._entries):
                if k[0] != "ids" or len(k[1]) != len(members) or k[2] != config:
                    continue
                if same_members(members, k[1]) if _FAST else (
                        pins is not None and _same_objects(members, getattr(pins, "arrays", pins))):
                    if i:
                        self._entries.insert(0, self._entries.pop(i))
                    return arguments
        return None

    def add(self, key: Any, arguments: Any, pins: Any = None) -> None:
        """`pins` keeps objects alive as long as the entry (the members a key names by id)."""
        with self._lock:
            self._entries.insert(0, (key, arguments, pins))
            del self._entries[self.SIZE:]
            pinned = [i for i, entry in enumerate(self._entries) if entry[2] is not None]
            for i in reversed(pinned[self.PINNED:]):
                del self._entries[i]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class GatherPlan:
    """Checked NumPy members: the `?` values of their memref, their size in bytes, their ids."""

    __slots__ = ("row", "nbytes", "ids")

    def __init__(self, row: tuple, nbytes: int, ids: np.ndarray):
        self.row, self.nbytes, self.ids = row, nbytes, ids


class HostPlan:
    """NumPy members checked for a host table: the `?` values of their memref, their dtype
    object and order (what may change in place), their ids."""

    __slots__ = ("row", "dtype", "ndim", "ids")

    def __init__(self, row: tuple, dtype: np.dtype, ndim: int, ids: np.ndarray):
        self.row, self.dtype, self.ndim, self.ids = row, dtype, ndim, ids


def _same_objects(members: Sequence[Any], objects: Sequence[Any]) -> bool:
    """The same objects in the same order, by identity (~40 ns per member, no CPython internals)."""
    return len(members) == len(objects) and all(map(is_, members, objects))


def _same_key(a: Any, b: Any) -> bool:
    if type(a) is not type(b) or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and np.array_equal(x, y)):
                return False
        elif x != y:
            return False
    return True


def host_tables(addresses: np.ndarray, columns: list[np.ndarray]) -> list:
    """A pointer table and its `?` columns in host memory, passed by address (the device
    reads host memory): each argument holds its array."""
    arrays = [np.ascontiguousarray(addresses, dtype=np.uint64)] + [
        np.ascontiguousarray(c, dtype=np.int64) for c in columns]
    return [Address(a.ctypes.data, a) for a in arrays]


def upload_tables(queue: Any, memory: Any, addresses: np.ndarray, columns: list[np.ndarray]) -> list:
    """Device copies of a pointer table and its `?` columns (owned by the caller), uploaded."""
    arguments, events, sources = [], [], []  # sources: alive until their copies finished
    for host in (addresses, *columns):
        host = np.ascontiguousarray(host)
        device = memory.MemoryUSMDevice(max(host.nbytes, 8), queue=queue)
        events.append(queue.memcpy_async(device, host, host.nbytes))
        arguments.append(device)
        sources.append(host)
    for event in events:
        event.wait()
    return arguments


_HEAD_OK = _heads_agree()
