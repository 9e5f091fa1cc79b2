"""NumPy data of one call in USM device memory, and the results back.

Each array is copied as the byte span from its first to its last element, so
strides are preserved (the kernel may have static strides). Arrays whose
spans overlap (views of one buffer) share one device region, so aliasing
behaves on the device as it does on the host. A lone memref argument gets an
allocation of its own, which is passed as the kernel argument as is. Group
members and overlapping arrays go to one "arena" allocation per call; every
region there starts at the same address modulo 64 as on the host, so device
pointers keep the host alignment (a region's copy may start up to 63 bytes
before its first element: same 64-byte block, hence same page). The arena is
filled through one host buffer and one copy, so a group of many small arrays
costs one transfer; placement is vectorised for groups of 10^5 members.

Only the elements of written arrays are copied back (never the gaps of a
strided view), so a view updates exactly what it shows.

Buffers come from the kernel's pools when the call has them (`pools`, see
pool.py) and go back with `release()` once every event of the call completed.
A group that the kernel only reads may also be gathered by its packer into a
buffer of its own (`host_buffer` / `device_buffer` / `send`); its members then
do not alias the other arguments on the device (nothing writes them there).
"""

from __future__ import annotations

import ctypes
from typing import Any, Iterable

import numpy as np

ALIGN = 64
EMPTY = -1  # allocation index of an array with no elements


def host_bytes(address: int, nbytes: int) -> np.ndarray:
    """A uint8 array over host memory [address, address + nbytes)."""
    return np.frombuffer((ctypes.c_ubyte * nbytes).from_address(address), dtype=np.uint8)


class USMPointer:
    """A device address inside an allocation, in the form dpctl wraps."""

    def __init__(self, address: int, nbytes: int, queue: Any):
        self.__sycl_usm_array_interface__ = {
            "data": (address, False),
            "shape": (max(nbytes, 1),),
            "strides": None,
            "typestr": "|u1",
            "version": 1,
            "syclobj": queue,
        }


class Staging:
    """The NumPy arrays of one call and where they live on the device."""

    def __init__(self, queue: Any, memory: Any, pools: Any = None):
        self.queue = queue
        self.memory = memory  # the dpctl.memory module
        self.pools = pools  # a Pools (reuse buffers across calls) or None
        self._taken: list[tuple[Any, int, Any]] = []  # (pool, size, buffer) to give back
        self.arrays: list[np.ndarray] = []
        self._lo: list[int] = []  # host byte span of each array
        self._hi: list[int] = []
        self._written: list[bool] = []
        self.events: list[Any] = []  # copies in flight; the kernel waits for them
        self.allocations: list[Any] = []  # own allocations, the arena, the dummy
        self.bases: np.ndarray | None = None  # their device addresses (set by place)
        self.where: np.ndarray | None = None  # per array: allocation index
        self.offset: np.ndarray | None = None  # per array: byte offset of element 0
        self.arena_index = -1
        self.arena_host: np.ndarray | None = None
        self.allocations_keep: list[Any] = []  # host sources of copies still in flight

    def add(self, array: np.ndarray, extent: int, written: bool) -> int:
        """Register an array spanning `extent` elements; returns its handle."""
        lo = array.__array_interface__["data"][0]
        self.arrays.append(array)
        self._lo.append(lo)
        self._hi.append(lo + extent * array.itemsize)
        self._written.append(written)
        return len(self.arrays) - 1

    def _allocate(self, nbytes: int) -> int:
        self.allocations.append(self.device_buffer(nbytes))
        return len(self.allocations) - 1

    # -- buffers -----------------------------------------------------------------
    def device_buffer(self, nbytes: int) -> Any:
        """A USM device allocation of at least `nbytes` for this call."""
        nbytes = max(nbytes, ALIGN)
        if self.pools is None:
            return self.memory.MemoryUSMDevice(nbytes, queue=self.queue)
        buffer = self.pools.device.take(nbytes)
        self._taken.append((self.pools.device, nbytes, buffer))
        return buffer

    def host_buffer(self, nbytes: int) -> np.ndarray:
        """A uint8 host array of `nbytes` for this call (contents undefined)."""
        if self.pools is None:
            return np.empty(nbytes, dtype=np.uint8)
        buffer = self.pools.host.take(nbytes)
        self._taken.append((self.pools.host, nbytes, buffer))
        return buffer[:nbytes]

    def send(self, device: Any, host: np.ndarray, nbytes: int) -> None:
        """Copy `nbytes` of a host buffer to the device; the kernel waits for it."""
        if nbytes:
            self.events.append(self.queue.memcpy_async(device, host, nbytes))

    def upload(self, host: np.ndarray) -> Any:
        """A device copy of a small host array (group metadata)."""
        device = self.device_buffer(host.nbytes)
        self.send(device, host, host.nbytes)
        self.allocations_keep.append(host)
        return device

    def release(self) -> None:
        """Give pooled buffers back; only once every event of the call completed."""
        taken, self._taken = self._taken, []
        for pool, size, buffer in taken:
            pool.give(size, buffer)

    def place(self, lone: Iterable[int]) -> None:
        """Allocate device memory and start the copies in.

        `lone` holds the handles of memref arguments that get an allocation of
        their own when no other array shares their bytes.
        """
        count = len(self.arrays)
        if not count:  # only USM arrays and scalars: nothing to copy
            return
        lo, hi = np.array(self._lo, dtype=np.int64), np.array(self._hi, dtype=np.int64)
        self.where = np.full(count, EMPTY, dtype=np.int64)
        self.offset = np.zeros(count, dtype=np.int64)
        live = np.flatnonzero(hi > lo)
        if len(live):
            self._place_regions(live[np.argsort(lo[live], kind="stable")], lo, hi, lone)
        bases = [a.__sycl_usm_array_interface__["data"][0] for a in self.allocations]
        if (self.where == EMPTY).any():  # arrays without elements point at a dummy
            bases.append(self.allocations[self._allocate(ALIGN)].__sycl_usm_array_interface__["data"][0])
            self.where[self.where == EMPTY] = len(self.allocations) - 1
        self.bases = np.array(bases or [0], dtype=np.int64)

    def _place_regions(self, order: np.ndarray, lo: np.ndarray, hi: np.ndarray, lone: Iterable[int]) -> None:
        """Merge overlapping spans (sorted by start) into regions and place them."""
        slo, shi = lo[order], hi[order]
        starts = np.ones(len(order), dtype=bool)
        starts[1:] = slo[1:] >= np.maximum.accumulate(shi)[:-1]
        region = np.cumsum(starts) - 1  # region of each sorted array
        first = np.flatnonzero(starts)
        r_lo, r_hi = slo[first], np.maximum.reduceat(shi, first)
        members = np.diff(np.append(first, len(order)))
        is_lone = np.zeros(len(lo), dtype=bool)
        is_lone[list(lone)] = True
        own = (members == 1) & is_lone[order[first]]
        for r in np.flatnonzero(own):
            entry, size = int(order[first[r]]), int(r_hi[r] - r_lo[r])
            index = self._allocate(size)
            self.where[entry] = index
            self.events.append(
                self.queue.memcpy_async(self.allocations[index], host_bytes(int(r_lo[r]), size), size)
            )
        if not own.all():
            self._fill_arena(order, region, r_lo, r_hi, ~own, lo)

    def _fill_arena(self, order, region, r_lo, r_hi, in_arena, lo) -> None:
        """One allocation for the given regions, filled through one host buffer."""
        chosen = np.flatnonzero(in_arena)
        base = r_lo[chosen] - r_lo[chosen] % ALIGN
        span = -(-(r_hi[chosen] - base) // ALIGN) * ALIGN
        start = np.cumsum(span) - span
        region_offset = np.zeros(len(r_lo), dtype=np.int64)
        region_offset[chosen] = start + r_lo[chosen] - base
        host = self.host_buffer(int(span.sum()))
        for r in chosen.tolist():
            at, size = int(region_offset[r]), int(r_hi[r] - r_lo[r])
            host[at : at + size] = host_bytes(int(r_lo[r]), size)
        self.arena_index = self._allocate(len(host))
        self.arena_host = host
        self.events.append(self.queue.memcpy_async(self.allocations[self.arena_index], host, len(host)))
        mask = in_arena[region]
        entries, regions = order[mask], region[mask]
        self.where[entries] = self.arena_index
        self.offset[entries] = region_offset[regions] + lo[entries] - r_lo[regions]

    # -- addresses -------------------------------------------------------------
    def address(self, handle: int) -> int:
        """Device address of the array's element 0."""
        return int(self.bases[self.where[handle]] + self.offset[handle])

    def addresses(self, handles: np.ndarray) -> np.ndarray:
        """Device addresses of many arrays' element 0 (uint64)."""
        return (self.bases[self.where[handles]] + self.offset[handles]).astype(np.uint64)

    def argument(self, handle: int) -> Any:
        """The kernel argument pointing at the array's element 0."""
        index, offset = int(self.where[handle]), int(self.offset[handle])
        if offset == 0 and index != self.arena_index:
            return self.allocations[index]  # an own allocation (or the dummy)
        size = self._hi[handle] - self._lo[handle]
        return self.memory.as_usm_memory(USMPointer(self.address(handle), size, self.queue))

    # -- results ---------------------------------------------------------------
    def copy_back(self, after: Any) -> None:
        """Copy written arrays back once the event `after` completed; waits."""
        pending: list[tuple[np.ndarray, np.ndarray, int]] = []
        events = []
        if self.arena_index >= 0 and any(
            w and i == self.arena_index for w, i in zip(self._written, self.where.tolist())
        ):
            arena = self.allocations[self.arena_index]
            events.append(self.queue.memcpy_async(self.arena_host, arena, len(self.arena_host), [after]))
        for handle, written in enumerate(self._written):
            size = self._hi[handle] - self._lo[handle]
            if not written or size == 0:
                continue
            array, index = self.arrays[handle], int(self.where[handle])
            if index == self.arena_index:
                pending.append((array, self.arena_host, int(self.offset[handle])))
            elif array.flags.c_contiguous or array.flags.f_contiguous:
                target = host_bytes(self._lo[handle], size)
                events.append(self.queue.memcpy_async(target, self.allocations[index], size, [after]))
            else:
                scratch = np.empty(size, dtype=np.uint8)
                events.append(self.queue.memcpy_async(scratch, self.allocations[index], size, [after]))
                pending.append((array, scratch, 0))
        for event in events:
            event.wait()
        for array, buffer, offset in pending:
            array[...] = np.ndarray(array.shape, array.dtype, buffer=buffer, offset=offset, strides=array.strides)
