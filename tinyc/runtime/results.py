"""New result arrays on recycled memory.

A NumPy array of more than glibc's largest mmap threshold (32 MiB) gets fresh pages from
the kernel on every allocation, faulted in and zeroed when first written: a contraction
writing a new 58.6 MB result took 14.0 ms against 8.4 ms writing into memory written
before (ttm at batch 20,000), and the same held for every result above the threshold
(1.4-2.4x the time) and for none below it. So a large result here lives on a block that
goes back to a small pool when the last array on it dies, and the next result of that
size reuses it: a loop that drops its results (a time step, a benchmark) writes into
memory already mapped.

The block is owned by a `Lease`, the result's `base` (an object with
`__array_interface__`, so NumPy keeps it as the base of the result and of every view of
it instead of collapsing to the block): the block returns to the pool only when nothing
can reach its memory through an array. Sizes are rounded to 2 MiB (the huge page NumPy
asks for), so results of nearly equal size share blocks. The pool keeps at most
`TINYC_RESULT_POOL_MB` MiB (default 256; 0 turns it off), newest kept; `release()` empties
it.
"""

from __future__ import annotations

import math
import os
from typing import Any, Sequence

import numpy as np

from tinyc.runtime.pool import BufferPool

SMALLEST = 16 << 20   # smaller arrays come from malloc's heap, reused already
GRAIN = 2 << 20


def _limit() -> int:
    try:
        return max(0, int(os.environ.get("TINYC_RESULT_POOL_MB", "256"))) << 20
    except ValueError:
        return 256 << 20


class _Pool:
    """Free blocks by rounded size (pool.BufferPool: at most `limit` bytes, the oldest
    dropped). A dying Lease only appends its block to `_returned` (atomic, no lock): its
    `__del__` can run inside any allocation, also one made while the BufferPool holds its
    lock, so blocks are given to the BufferPool only by the calls that take from it."""

    def __init__(self, limit: int):
        self.limit = limit
        self._blocks = BufferPool(lambda n: np.empty(n, np.uint8), limit)
        self._returned: list[np.ndarray] = []

    def give(self, block: np.ndarray) -> None:
        if block.nbytes <= self.limit:
            self._returned.append(block)

    def take(self, size: int) -> np.ndarray:
        self._sort_in()
        return self._blocks.take(size)

    def _sort_in(self) -> None:
        while self._returned:
            try:
                block = self._returned.pop(0)
            except IndexError:   # (another thread took the last one)
                return
            self._blocks.give(block.nbytes, block)

    def clear(self) -> None:
        self._returned.clear()
        self._blocks.clear()

    @property
    def held_bytes(self) -> int:
        self._sort_in()
        return self._blocks.held_bytes


_pool = _Pool(_limit())


class Lease:
    """The memory of one result: back to the pool when the last array on it dies."""

    __slots__ = ("__array_interface__", "_block", "_pool")

    def __init__(self, block: np.ndarray, shape: tuple[int, ...], dtype: np.dtype,
                 strides: tuple[int, ...] | None, pool: _Pool):
        self._block, self._pool = block, pool
        self.__array_interface__ = {"version": 3, "data": (block.ctypes.data, False), "shape": shape,
                                    "typestr": dtype.str, "descr": dtype.descr, "strides": strides}

    def __del__(self) -> None:
        try:
            self._pool.give(self._block)   # (the pool it came from)
        except Exception:   # (at interpreter exit the module may be gone)
            pass


def empty(shape: Sequence[int], dtype: Any, order: str = "C") -> np.ndarray:
    """`np.empty(shape, dtype, order=order)` (order 'C' or 'F'), on a pooled block when large."""
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize * math.prod(shape)
    if nbytes < SMALLEST or nbytes > _pool.limit or dtype.hasobject or order not in ("C", "F"):
        return np.empty(shape, dtype, order=order)   # (the common case: one product, one test)
    shape = tuple(int(n) for n in shape)
    pool = _pool
    block = pool.take(-(-nbytes // GRAIN) * GRAIN)
    strides = None
    if order == "F" and len(shape) > 1:
        steps, step = [], dtype.itemsize
        for n in shape:
            steps.append(step)
            step *= n
        strides = tuple(steps)
    return np.asarray(Lease(block, shape, dtype, strides, pool))


def release() -> None:
    """Free the pooled blocks (memory of results that died)."""
    _pool.clear()


def held_bytes() -> int:
    """Bytes of free blocks the pool keeps."""
    return _pool.held_bytes
