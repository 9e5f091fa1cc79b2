"""Device and host buffers kept across calls of one kernel.

A fresh USM allocation costs more than its copy: on the CPU device the pages
are faulted in on first touch (a 25 MB array took ~10 ms more to copy into
new memory than into memory used before), and a fresh 50 MB host staging
buffer the same. So `Kernel.__call__` takes its staging buffers from a pool
and gives them back once everything it submitted has completed.

Buffers are checked out, never shared: a call owns what it took until it
gives it back, so two threads calling one kernel get different buffers.
`prepare()` does not use the pool (its buffers live as long as the
PreparedCall). The pool keeps at most `max_bytes` of each kind (newest kept);
`Kernel.release_buffers()` frees everything.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

GRAIN = 64  # sizes are rounded up to this, so near sizes share buffers
DEFAULT_MAX_BYTES = 1 << 30


def _rounded(nbytes: int) -> int:
    return max(GRAIN, -(-nbytes // GRAIN) * GRAIN)


class BufferPool:
    """Free buffers by rounded size; `take` pops one or makes a new one."""

    def __init__(self, make: Callable[[int], Any], max_bytes: int = DEFAULT_MAX_BYTES):
        self._make = make
        self._free: OrderedDict[int, list[Any]] = OrderedDict()
        self._held = 0
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> Any:
        """A buffer of at least `nbytes` (its size rounded up to GRAIN)."""
        size = _rounded(nbytes)
        with self._lock:
            free = self._free.get(size)
            if free:
                self._held -= size
                buffer = free.pop()
                if not free:   # (no empty size class stays: the trimming below takes from the oldest)
                    del self._free[size]
                return buffer
        return self._make(size)

    def give(self, size: int, buffer: Any) -> None:
        """Return a buffer taken with `take(size)`; the oldest are dropped over the limit."""
        size = _rounded(size)
        if size > self.max_bytes:
            return
        with self._lock:
            self._free.setdefault(size, []).append(buffer)
            self._free.move_to_end(size)
            self._held += size
            while self._held > self.max_bytes:
                oldest, buffers = next(iter(self._free.items()))
                buffers.pop(0)
                self._held -= oldest
                if not buffers:
                    del self._free[oldest]

    def clear(self) -> None:
        with self._lock:
            self._free.clear()
            self._held = 0

    @property
    def held_bytes(self) -> int:
        return self._held


class Pools:
    """A kernel's device (USM) and host (NumPy uint8) buffer pools."""

    def __init__(self, queue: Any, memory: Any, max_bytes: int = DEFAULT_MAX_BYTES):
        self.device = BufferPool(lambda n: memory.MemoryUSMDevice(n, queue=queue), max_bytes)
        self.host = BufferPool(lambda n: np.empty(n, dtype=np.uint8), max_bytes)

    def clear(self) -> None:
        self.device.clear()
        self.host.clear()
