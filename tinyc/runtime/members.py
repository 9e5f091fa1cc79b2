"""Group members in bulk: identities, uniform layouts, pointer tables.

A group of 10^5 members cannot afford Python work per member on every call
(~4 us each was 400 ms per call). What is done instead, all in C loops:

* `member_ids`: the id() of every member of a tuple, read from the tuple's
  item array in one copy (CPython layout, checked once at import; `map(id)`
  elsewhere). Comparing two such arrays tells whether a group holds the same
  objects as a cached one.
* `uniform_usm`: every member's `__sycl_usm_array_interface__` fetched with
  `map`, then one `list.count` per field: when all members agree on dtype,
  shape, strides, offset and syclobj, the first member is checked in full and
  the others differ only in their pointers, read into one uint64 array.
* `uniform_numpy`: all members exact `np.ndarray`s, Fortran-contiguous, of one
  size; `gather` then copies them into one host buffer with np.concatenate
  along the last mode (casting="no": a dtype, rank or leading-size mismatch
  raises there, and with equal sizes fixes the last mode too).
* `TableCache`: device pointer tables (and the `?` columns) of recent calls,
  reused when the same addresses come again: keyed by (base, step, count) for
  regular tables, or by the member ids of an all-USM group.

Whenever a fast check fails, the group packer checks member by member, so
errors still name the member.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any, Sequence

import numpy as np

# -- identities ------------------------------------------------------------------
_TUPLE_ITEMS = tuple.__basicsize__  # byte offset of a tuple's item pointers


def _ids_by_map(members: tuple) -> np.ndarray:
    return np.fromiter(map(id, members), dtype=np.uint64, count=len(members))


def _ids_by_memory(members: tuple) -> np.ndarray:
    out = np.empty(len(members), dtype=np.uint64)
    if len(members):  # a tuple is immutable and referenced here: its items stay put
        ctypes.memmove(out.ctypes.data, id(members) + _TUPLE_ITEMS, 8 * len(members))
    return out


def _memory_layout_ok() -> bool:
    if sys.implementation.name != "cpython" or ctypes.sizeof(ctypes.c_void_p) != 8:
        return False
    probe = (object(), 1.5, "x", None, object())
    return bool(np.array_equal(_ids_by_memory(probe), _ids_by_map(probe)))


member_ids = _ids_by_memory if _memory_layout_ok() else _ids_by_map
member_ids.__doc__ = "id() of every member of a tuple, as uint64."


# -- USM members --------------------------------------------------------------------
_IFACE = attrgetter("__sycl_usm_array_interface__")
_DATA = itemgetter("data")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


def _all_equal(values: list) -> bool:
    return values.count(values[0]) == len(values)


def uniform_usm(members: Sequence[Any]) -> tuple[np.ndarray, bool] | None:
    """(element-0 addresses, any read-only) of USM members with one layout, else None.

    "One layout": equal typestr, shape, strides, offset and syclobj in every
    member's interface, so checking the first member checks them all.
    """
    try:
        faces = list(map(_IFACE, members))
        if type(faces[0]) is not dict:
            return None
        for key in ("typestr", "shape", "strides", "offset", "syclobj"):
            if not _all_equal(list(map(dict.get, faces, repeat(key)))):
                return None
        datas = list(map(_DATA, faces))
        pointers = np.fromiter(map(_FIRST, datas), dtype=np.uint64, count=len(datas))
        readonly = any(map(_SECOND, datas))
        offset = int(faces[0].get("offset") or 0) * np.dtype(faces[0]["typestr"]).itemsize
    except Exception:  # anything unusual: the member-by-member path says what
        return None
    return pointers + np.uint64(offset), readonly


# -- NumPy members --------------------------------------------------------------------
_SIZE = attrgetter("size")
_F_CONTIGUOUS = attrgetter("flags.f_contiguous")


def uniform_numpy(members: Sequence[Any]) -> bool:
    """All exact np.ndarray, Fortran-contiguous (host layout = packed layout), one size > 0."""
    first = members[0]
    if type(first) is not np.ndarray or first.ndim == 0 or first.size == 0:
        return False
    types = list(map(type, members))
    if types.count(np.ndarray) != len(types):
        return False
    return _all_equal(list(map(_SIZE, members))) and all(map(_F_CONTIGUOUS, members))


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


# -- device pointer tables ----------------------------------------------------------------
class TableCache:
    """Recent device pointer tables of one group parameter, with their `?` columns.

    An entry owns its device arrays (not pooled), uploaded before it is
    added and never written again, so calls in several threads may share it.
    """

    SIZE = 4

    def __init__(self) -> None:
        self._entries: list[tuple[Any, list, Any]] = []  # (key, kernel arguments, pinned objects)
        self._lock = threading.Lock()

    def find(self, key: Any) -> list | None:
        with self._lock:
            for i, (k, arguments, _) in enumerate(self._entries):
                if _same_key(k, key):
                    if i:
                        self._entries.insert(0, self._entries.pop(i))
                    return arguments
        return None

    def add(self, key: Any, arguments: list, pins: Any = None) -> None:
        """`pins` keeps objects alive as long as the entry (the members a key names by id)."""
        with self._lock:
            self._entries.insert(0, (key, arguments, pins))
            del self._entries[self.SIZE:]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


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


def upload_tables(queue: Any, memory: Any, addresses: np.ndarray, columns: list[np.ndarray]) -> list:
    """Device copies of a pointer table and its `?` columns (owned by the caller), uploaded."""
    arguments, events, hosts = [], [], []
    for host in (addresses, *columns):
        host = np.ascontiguousarray(host)
        device = memory.MemoryUSMDevice(max(host.nbytes, 8), queue=queue)
        events.append(queue.memcpy_async(device, host, host.nbytes))
        arguments.append(device)
        hosts.append(host)
    for event in events:
        event.wait()
    return arguments
