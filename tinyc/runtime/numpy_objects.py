"""NumPy arrays read in bulk from their objects: many members' data pointers, flags, dtypes
and shapes at C speed (members.py explains why groups need this).

NumPy's array object (numpy/ndarraytypes.h, PyArrayObject_fields, unchanged from NumPy 1.x to
2.x): after the object header (refcount, type), the data pointer, nd, the dimensions and
strides pointers, base, descr and flags. They are read for many members at once by
gathering 8-byte words from the members' addresses (their ids), which the caller holds
references to; only objects whose type is exactly np.ndarray are read past their header.
Checked against NumPy's own answers once at import (`_HEAD_OK`), and off with
TINYC_NO_CPYTHON_INTERNALS=1 (members.py).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Sequence

import numpy as np

from tinyc.runtime.members import _FAST, member_ids

_TYPE, _DATA, _ND, _DIMS, _DESCR, _FLAGS = 8, 16, 24, 32, 56, 64


_scratch = threading.local()  # per thread: arrays reused between calls (fresh ones fault pages in)


def _buffers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two int64/uint64 work arrays of n entries, kept for the thread's next call."""
    found = getattr(_scratch, "arrays", None)
    if found is None or len(found[0]) < n:
        found = _scratch.arrays = (np.empty(n, np.int64), np.empty(n, np.uint64))
    return found[0][:n], found[1][:n]


class _Objects:
    """The 8-byte words of many objects, read in bulk: a view of the memory from the lowest
    address to the highest plus `extent` bytes, and each object's index in it (the memory
    between the objects is never touched: only the gathered words are read)."""

    def __init__(self, addresses: np.ndarray, extent: int = 80):
        lo = int(addresses.min())
        size = int(addresses.max()) + extent - lo
        self.words = np.frombuffer((ctypes.c_char * (size - size % 8)).from_address(lo), dtype=np.uint64)
        self.index = (addresses.view(np.int64) - lo) >> 3  # addresses are 8-byte aligned

    def field(self, offset: int, keep: bool = True) -> np.ndarray:
        """The word at `offset` bytes into every object (uint64); `keep=False`: in a scratch
        array that the next call of this thread overwrites."""
        at, out = _buffers(len(self.index))
        np.add(self.index, offset // 8, out=at)
        return self.words.take(at) if keep else self.words.take(at, out=out)

    def int32(self, offset: int) -> np.ndarray:
        """The 4-byte int at `offset` (8-byte aligned) into every object (little-endian), in
        scratch memory."""
        word = self.field(offset, keep=False)
        np.bitwise_and(word, np.uint64(0xFFFFFFFF), out=word)
        return word.view(np.int64)


def _words(addresses: np.ndarray, dtype: Any = np.uint64) -> np.ndarray:
    """The values at these (8-byte aligned) addresses, in one gather."""
    found = _Objects(addresses, 8).field(0)
    return found if dtype is np.uint64 else found.view(np.int64).astype(dtype)


class _Head(ctypes.Structure):
    """NumPy's array object up to its flags (PyArrayObject_fields), read in place."""

    _fields_ = [("refcount", ctypes.c_ssize_t), ("type", ctypes.c_void_p), ("data", ctypes.c_void_p),
                ("nd", ctypes.c_int), ("dimensions", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("base", ctypes.c_void_p), ("descr", ctypes.c_void_p), ("flags", ctypes.c_int)]


def numpy_head(array: np.ndarray) -> tuple[int, int]:
    """(data pointer, flags) of one exact np.ndarray, read from the object (~0.3 us)."""
    if _HEAD_OK:
        head = _Head.from_address(id(array))
        return head.data or 0, head.flags
    return array.__array_interface__["data"][0], array.flags.num


def numpy_heads(ids: np.ndarray, objects: _Objects | None = None) -> tuple[np.ndarray, int]:
    """(data pointers, flags ANDed) of members known to be arrays (by id)."""
    objects = objects or _Objects(ids)
    data = objects.field(_DATA)
    return data, int(np.bitwise_and.reduce(objects.int32(_FLAGS)))


def all_numpy(members: Sequence[Any]) -> bool:
    """Whether every member of a list or tuple is exactly an np.ndarray (their types read in
    bulk: ~0.5 ms for 10^5, against ~3 ms for set(map(type, ...)))."""
    if not len(members):
        return True
    if _HEAD_OK and type(members) in (list, tuple):
        held = tuple(members)  # held while their headers are read
        return bool((_Objects(member_ids(held), 16).field(_TYPE, keep=False) == np.uint64(id(np.ndarray))).all())
    return set(map(type, members)) <= {np.ndarray}


def bulk_reads() -> bool:
    """Whether NumPy's array objects are read in bulk (else member by member)."""
    return _HEAD_OK


_AGAIN = np.array([_DATA, _ND, _DESCR, _FLAGS], dtype=np.int64) // 8  # the words read again
_LOW = np.uint64(0xFFFFFFFF)  # an int field's bytes in its 8-byte word (little-endian)


def _heads(n: int) -> np.ndarray:
    """An (n, 4) uint64 work array, kept for the thread's next call."""
    found = getattr(_scratch, "heads", None)
    if found is None or len(found) < n:
        found = _scratch.heads = np.empty((n, len(_AGAIN)), np.uint64)
    return found[:n]


def numpy_heads_again(ids: np.ndarray, plan: "HostPlan") -> tuple[np.ndarray, int] | None:
    """numpy_heads of members checked before (`plan`, whose ids are these), if their dtype and
    order are still the plan's (both can be changed in place); None if not (or without bulk
    reads). The four words of every member are gathered in one pass, through an index the
    plan keeps (the objects stay where they are while the plan pins them): after a kernel
    evicted them from the caches, each header is fetched once, not once per field. The data
    pointers come back in the plan's table, so the device reads a table in memory it has
    seen before (a new one each call, freshly mapped, measured ~3 ms slower per launch at
    10^5 members on the CPU runtime); None if one moved (a member resized in place: its
    shape may have changed too, which only the full check reads)."""
    if not _HEAD_OK:
        return None
    if plan.words is None:
        objects = _Objects(ids)
        plan.words, plan.at = objects.words, objects.index[:, None] + _AGAIN
    heads = plan.words.take(plan.at, out=_heads(len(ids)))
    if not bool((heads[:, 2] == np.uint64(id(plan.dtype))).all()):
        return None
    if not bool(((heads[:, 1] & _LOW) == np.uint64(plan.ndim)).all()):
        return None
    data, table = heads[:, 0], plan.table  # (read once: another thread may replace it)
    if table is None:
        table = plan.table = data.copy()  # never written again: a launch may still read it
    elif not np.array_equal(table, data):  # moved in place (resize): check every layout again
        return None
    return table, int(np.bitwise_and.reduce(heads[:, 3] & _LOW))


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
    header = _Objects(ids, 16)  # every object has its type; only arrays are read further
    if not bool((header.field(_TYPE, keep=False) == np.uint64(id(np.ndarray))).all()):
        return None
    objects = _Objects(ids)
    first = members[0]
    if not bool((objects.field(_DESCR, keep=False) == np.uint64(id(first.dtype))).all()):
        return None
    if not bool((objects.int32(_ND) == first.ndim).all()):
        return None
    dims = _Objects(objects.field(_DIMS), 16 * max(first.ndim, 1))
    for k, expected in enumerate((*first.shape, *first.strides)):  # strides follow the dimensions
        if not bool((dims.field(8 * k, keep=False).view(np.int64) == expected).all()):
            return None
    return numpy_heads(ids, objects)


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
        heads = [_Head.from_address(i) for i in ids.tolist()]
        return (data.tolist() == [p.__array_interface__["data"][0] for p in probes]
                and each == [p.flags.num for p in probes] == [h.flags for h in heads]
                and [h.data for h in heads] == data.tolist()
                and _uniform(probes[:1] * 3, member_ids(probes[:1] * 3)) is not None
                and _uniform(probes, ids) is None)
    except Exception:
        return False


class HostPlan:
    """NumPy members checked for a host table: the `?` values of their memref, their dtype
    object and order (what may change in place), their ids and the members themselves; and
    where their header words are read again (numpy_heads_again: made on first use)."""

    __slots__ = ("row", "dtype", "ndim", "ids", "members", "words", "at", "table")

    def __init__(self, row: tuple, dtype: np.dtype, ndim: int, ids: np.ndarray, members: tuple = ()):
        self.row, self.dtype, self.ndim, self.ids = row, dtype, ndim, ids
        self.members = members  # the objects the ids name, held
        self.words: np.ndarray | None = None  # the memory the members' objects lie in
        self.at: np.ndarray | None = None  # (members, 4) word indices into it
        self.table: np.ndarray | None = None  # the data pointers read last (never changed)


_HEAD_OK = _heads_agree()
