"""NumPy data of one call in USM device memory, and the results back.

Each array is copied as the byte span from its first to its last element, so
strides are preserved (the kernel may have static strides). Arrays whose
spans overlap or touch (views of one buffer) form one region, placed as one
piece of device memory, so aliasing behaves on the device as it does on the
host. Where a region goes:
  * a lone memref argument alone in its region: an allocation of its own,
    passed as the kernel argument as is;
  * a large region (>= DIRECT_BYTES): an allocation of its own, copied
    straight from host memory;
  * the other (small) regions: one "arena" allocation per call, filled
    through one host buffer and one copy, so a group of many small arrays
    costs one transfer.
Except for lone memrefs, a region keeps its host address modulo 64 on the
device, so device pointers keep the host alignment (its copy may start up to
63 bytes before its first element: same 64-byte block, hence same page).
Placement is vectorised for groups of 10^5 members.

Only the elements of written arrays are copied back (never the gaps of a
strided view), so a view updates exactly what it shows; a region whose
arrays are all written and gapless (contiguous) goes back in one copy.

Buffers come from the kernel's pools when the call has them (`pools`, see
pool.py) and go back with `release()` once every event of the call completed.
A group may also be gathered by its packer into a buffer of its own
(`host_buffer` / `device_buffer` / `send`, and `scatter_back` if written):
its members then share no memory with other arguments on the device (see
groups.py for when that is allowed).
"""

from __future__ import annotations

import ctypes
from typing import Any, Iterable

import numpy as np

from tinyc.runtime.members import scatter

ALIGN = 64
DIRECT_BYTES = 1 << 20
SMALL = 16  # up to this many arrays, the lone-memref case is placed without NumPy
EMPTY = -1  # allocation index of an array with no elements


def host_bytes(owner: Any, address: int, nbytes: int) -> np.ndarray:
    """A uint8 array over host memory [address, address + nbytes) of `owner`'s arrays.

    The array's base is the ctypes array over those bytes, which holds
    `owner`: the memory cannot be freed while the view (or an asynchronous
    copy holding it) is alive.
    """
    span = (ctypes.c_ubyte * nbytes).from_address(address)
    span.owner = owner
    return np.frombuffer(span, dtype=np.uint8)


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


def wait_all(events: list, in_order: bool) -> None:
    """Wait for events submitted in this order; on an in-order queue the last one implies the rest."""
    for event in events[-1:] if in_order else events:
        event.wait()


def _gapless(array: np.ndarray) -> bool:
    return array.flags.c_contiguous or array.flags.f_contiguous


class Staging:
    """The NumPy arrays of one call and where they live on the device."""

    def __init__(self, queue: Any, memory: Any, pools: Any = None, in_order: bool = False):
        self.queue = queue
        self.memory = memory  # the dpctl.memory module
        self.pools = pools  # a Pools (reuse buffers across calls) or None
        self.in_order = in_order  # the queue runs commands in submission order
        self._taken: list[tuple[Any, int, Any]] = []  # (pool, size, buffer) to give back
        self.arrays: list[np.ndarray] = []
        self._lo: list[int] = []  # host byte span of each array
        self._hi: list[int] = []
        self._written: list[bool] = []
        self._gapless: list[bool] = []  # its span holds nothing but its elements
        self.events: list[Any] = []  # copies in flight; the kernel waits for them
        self.allocations: list[Any] = []  # own allocations, the arena, the dummy
        self.bases: np.ndarray | None = None  # their device addresses (set by place)
        self.where: np.ndarray | None = None  # per array: allocation index
        self.offset: np.ndarray | None = None  # per array: byte offset of element 0
        self.region: np.ndarray | None = None  # per array: its region (EMPTY if no elements)
        self._regions: tuple | None = None  # (lo, hi, allocation, offset) per region
        self.arena_index = -1
        self.arena_host: np.ndarray | None = None
        self._apart = False  # placed by _place_apart: array i in allocation i
        self.allocations_keep: list[Any] = []  # unpooled buffers and copy sources: alive with the staging
        self.scatters: list[tuple[Any, np.ndarray, Any]] = []  # gathered written groups

    # -- arrays ------------------------------------------------------------------
    def add(self, array: np.ndarray, extent: int, written: bool, lo: int | None = None) -> int:
        """Register an array spanning `extent` elements (element 0 at `lo`); returns its handle."""
        if lo is None:
            lo = array.__array_interface__["data"][0]
        self.arrays.append(array)
        self._lo.append(lo)
        self._hi.append(lo + extent * array.itemsize)
        self._written.append(written)
        self._gapless.append(_gapless(array))
        return len(self.arrays) - 1

    def add_many(self, arrays: Iterable[np.ndarray], lo: np.ndarray, nbytes: int, written: bool) -> np.ndarray:
        """Register gapless arrays of `nbytes` each starting at `lo`; returns their handles."""
        first = len(self.arrays)
        self.arrays.extend(arrays)
        self._lo.extend(lo.tolist())
        self._hi.extend((lo + nbytes).tolist())
        count = len(self.arrays) - first
        self._written.extend([written] * count)
        self._gapless.extend([True] * count)
        return np.arange(first, first + count)

    # -- buffers -----------------------------------------------------------------
    def device_buffer(self, nbytes: int) -> Any:
        """A USM device allocation of at least `nbytes`, alive as long as this staging."""
        nbytes = max(nbytes, ALIGN)
        if self.pools is None:
            buffer = self.memory.MemoryUSMDevice(nbytes, queue=self.queue)
            self.allocations_keep.append(buffer)
            return buffer
        buffer = self.pools.device.take(nbytes)
        self._taken.append((self.pools.device, nbytes, buffer))
        return buffer

    def host_buffer(self, nbytes: int) -> np.ndarray:
        """A uint8 host array of `nbytes` (contents undefined), alive as long as this staging."""
        if self.pools is None:
            buffer = np.empty(nbytes, dtype=np.uint8)
            self.allocations_keep.append(buffer)
            return buffer
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

    def scatter_back(self, device: Any, host: np.ndarray, members: Any) -> None:
        """After the kernel, copy `device` into `host` and scatter it over the members."""
        self.scatters.append((device, host, members))

    def release(self) -> None:
        """Give pooled buffers back; only once every event of the call completed."""
        taken, self._taken = self._taken, []
        for pool, size, buffer in taken:
            pool.give(size, buffer)

    def _allocate(self, nbytes: int) -> int:
        self.allocations.append(self.device_buffer(nbytes))
        return len(self.allocations) - 1

    def _device_span(self, index: int, offset: int, nbytes: int) -> Any:
        """A kernel/copy argument for bytes [offset, offset + nbytes) of an allocation."""
        allocation = self.allocations[index]
        if offset == 0:
            return allocation
        address = int(self.bases[index]) + offset
        return self.memory.as_usm_memory(USMPointer(address, nbytes, self.queue))

    # -- placement -----------------------------------------------------------------
    def place(self, lone: Iterable[int]) -> None:
        """Allocate device memory and start the copies in.

        `lone` holds the handles of memref arguments that get an allocation of
        their own when no other array shares their bytes.
        """
        count = len(self.arrays)
        if not count:  # only USM arrays and scalars: nothing to copy
            return
        if count <= SMALL and self._place_apart(lone):
            return
        lo, hi = np.array(self._lo, dtype=np.int64), np.array(self._hi, dtype=np.int64)
        self.where = np.full(count, EMPTY, dtype=np.int64)
        self.offset = np.zeros(count, dtype=np.int64)
        self.region = np.full(count, EMPTY, dtype=np.int64)
        live = np.flatnonzero(hi > lo)
        if len(live):
            self._place_regions(live[np.argsort(lo[live], kind="stable")], lo, hi, lone)
        bases = [a.__sycl_usm_array_interface__["data"][0] for a in self.allocations]
        if (self.where == EMPTY).any():  # arrays without elements point at a dummy
            bases.append(self.allocations[self._allocate(ALIGN)].__sycl_usm_array_interface__["data"][0])
            self.where[self.where == EMPTY] = len(self.allocations) - 1
        self.bases = np.array(bases or [0], dtype=np.int64)

    def _place_apart(self, lone: Iterable[int]) -> bool:
        """The common case in plain Python: a few lone memrefs, no two sharing bytes,
        each with elements. Each gets an allocation of its own; False if not that case."""
        lone = set(lone)
        spans = sorted(zip(self._lo, self._hi, range(len(self._lo))))
        if len(lone) != len(spans) or any(lo >= hi for lo, hi, _ in spans):
            return False
        if any(spans[i + 1][0] <= spans[i][1] for i in range(len(spans) - 1)) or not lone.issuperset(
            handle for _, _, handle in spans
        ):
            return False
        where = []
        for lo, hi in zip(self._lo, self._hi):
            where.append(self._allocate(hi - lo))
            self.events.append(self.queue.memcpy_async(self.allocations[where[-1]], host_bytes(self.arrays, lo, hi - lo), hi - lo))
        self.where = np.array(where, dtype=np.int64)
        self.offset = np.zeros(len(where), dtype=np.int64)
        self.region = np.arange(len(where), dtype=np.int64)
        self._apart = True
        self.bases = np.array([a.__sycl_usm_array_interface__["data"][0] for a in self.allocations], dtype=np.int64)
        return True

    def _place_regions(self, order: np.ndarray, lo: np.ndarray, hi: np.ndarray, lone: Iterable[int]) -> None:
        """Merge overlapping or touching spans (sorted by start) into regions and place them."""
        slo, shi = lo[order], hi[order]
        starts = np.ones(len(order), dtype=bool)
        starts[1:] = slo[1:] > np.maximum.accumulate(shi)[:-1]
        region = np.cumsum(starts) - 1  # region of each sorted array
        first = np.flatnonzero(starts)
        r_lo, r_hi = slo[first], np.maximum.reduceat(shi, first)
        members = np.diff(np.append(first, len(order)))
        is_lone = np.zeros(len(lo), dtype=bool)
        is_lone[list(lone)] = True
        alone = (members == 1) & is_lone[order[first]]
        r_alloc = np.zeros(len(r_lo), dtype=np.int64)
        r_off = np.zeros(len(r_lo), dtype=np.int64)  # device offset of r_lo in its allocation
        for r in np.flatnonzero(alone | (r_hi - r_lo >= DIRECT_BYTES)).tolist():
            start = int(r_lo[r]) if alone[r] else int(r_lo[r]) - int(r_lo[r]) % ALIGN
            size = int(r_hi[r]) - start
            r_alloc[r] = self._allocate(size)
            r_off[r] = int(r_lo[r]) - start
            self.events.append(self.queue.memcpy_async(self.allocations[r_alloc[r]], host_bytes(self.arrays, start, size), size))
        in_arena = ~alone & (r_hi - r_lo < DIRECT_BYTES)
        if in_arena.any():
            self._fill_arena(r_lo, r_hi, in_arena, r_alloc, r_off)
        self._regions = (r_lo, r_hi, r_alloc, r_off)
        self.region[order] = region
        self.where[order] = r_alloc[region]
        self.offset[order] = r_off[region] + slo - r_lo[region]

    def _fill_arena(self, r_lo, r_hi, in_arena, r_alloc, r_off) -> None:
        """One allocation for the given regions, filled through one host buffer."""
        chosen = np.flatnonzero(in_arena)
        base = r_lo[chosen] - r_lo[chosen] % ALIGN
        span = -(-(r_hi[chosen] - base) // ALIGN) * ALIGN
        start = np.cumsum(span) - span
        r_off[chosen] = start + r_lo[chosen] - base
        host = self.host_buffer(int(span.sum()))
        for r in chosen.tolist():
            at, size = int(r_off[r]), int(r_hi[r] - r_lo[r])
            host[at : at + size] = host_bytes(self.arrays, int(r_lo[r]), size)
        self.arena_index = self._allocate(len(host))
        self.arena_host = host
        r_alloc[chosen] = self.arena_index
        self.events.append(self.queue.memcpy_async(self.allocations[self.arena_index], host, len(host)))

    # -- addresses -------------------------------------------------------------
    def address(self, handle: int) -> int:
        """Device address of the array's element 0."""
        return int(self.bases[self.where[handle]] + self.offset[handle])

    def addresses(self, handles: np.ndarray) -> np.ndarray:
        """Device addresses of many arrays' element 0 (uint64)."""
        return (self.bases[self.where[handles]] + self.offset[handles]).astype(np.uint64)

    def argument(self, handle: int) -> Any:
        """The kernel argument pointing at the array's element 0."""
        size = self._hi[handle] - self._lo[handle]
        return self._device_span(int(self.where[handle]), int(self.offset[handle]), size)

    # -- results ---------------------------------------------------------------
    def copy_back(self, after: Any) -> None:
        """Copy written arrays back once the event `after` completed; waits."""
        self.finish_copy_back(self.start_copy_back(after))

    def start_copy_back(self, after: Any) -> tuple[list, list]:
        """Submit the copies back (after the event `after`), without waiting.

        Several stagings (one per device of a split launch) start theirs
        before any waits, so the devices copy at the same time."""
        events = self.events  # the caller waits for all of them even if this raises
        events.extend(self.queue.memcpy_async(host, device, len(host), [after]) for device, host, _ in self.scatters)
        pending: list[tuple[np.ndarray, np.ndarray, int]] = []  # (array, host copy, its offset there)
        regions: list[tuple[int, int, int]] = []  # whole regions back from the arena: (lo, size, offset)
        if self._apart:
            self._apart_back(after, events, pending)
        elif self._regions is not None:
            self._regions_back(after, events, pending, regions)
        return pending, regions

    def finish_copy_back(self, started: tuple[list, list]) -> None:
        """Wait for the copies `start_copy_back` submitted and place what needs the host."""
        pending, regions = started
        wait_all(self.events, self.in_order)
        for lo, size, offset in regions:
            host_bytes(self.arrays, lo, size)[:] = self.arena_host[offset : offset + size]
        for array, buffer, offset in pending:
            array[...] = np.ndarray(array.shape, array.dtype, buffer=buffer, offset=offset, strides=array.strides)
        for _, host, members in self.scatters:
            scatter(host, members)

    def _apart_back(self, after: Any, events: list, pending: list) -> None:
        for handle, written in enumerate(self._written):
            if not written:
                continue
            lo, size = self._lo[handle], self._hi[handle] - self._lo[handle]
            source = self.allocations[int(self.where[handle])]
            if self._gapless[handle]:
                events.append(self.queue.memcpy_async(host_bytes(self.arrays, lo, size), source, size, [after]))
            else:
                scratch = np.empty(size, dtype=np.uint8)
                events.append(self.queue.memcpy_async(scratch, source, size, [after]))
                pending.append((self.arrays[handle], scratch, 0))

    def _regions_back(self, after: Any, events: list, pending: list, regions: list) -> None:
        r_lo, r_hi, r_alloc, r_off = self._regions
        written = np.array(self._written, dtype=bool)
        live = self.region >= 0
        if not (written & live).any():
            return
        count, region = len(r_lo), self.region[live]
        any_written = np.bincount(region, weights=written[live], minlength=count) > 0
        plain = written & np.array(self._gapless, dtype=bool)  # a region of such arrays goes back whole
        whole = any_written & (np.bincount(region, weights=~plain[live], minlength=count) == 0)
        if self.arena_index >= 0 and (any_written & (r_alloc == self.arena_index)).any():
            arena = self.allocations[self.arena_index]
            events.append(self.queue.memcpy_async(self.arena_host, arena, len(self.arena_host), [after]))
        scratch: dict[int, np.ndarray] = {}  # own-allocation region -> its bytes on the host
        for r in np.flatnonzero(any_written).tolist():
            size, index, offset = int(r_hi[r] - r_lo[r]), int(r_alloc[r]), int(r_off[r])
            if index == self.arena_index:
                if whole[r]:
                    regions.append((int(r_lo[r]), size, offset))
            elif whole[r]:
                source = self._device_span(index, offset, size)
                events.append(self.queue.memcpy_async(host_bytes(self.arrays, int(r_lo[r]), size), source, size, [after]))
            else:
                scratch[r] = np.empty(size, dtype=np.uint8)
                source = self._device_span(index, offset, size)
                events.append(self.queue.memcpy_async(scratch[r], source, size, [after]))
        for handle in np.flatnonzero(written & live & ~whole[np.maximum(self.region, 0)]).tolist():
            r = int(self.region[handle])
            array = self.arrays[handle]
            if int(r_alloc[r]) == self.arena_index:
                pending.append((array, self.arena_host, int(self.offset[handle])))
            else:
                pending.append((array, scratch[r], int(self._lo[handle] - r_lo[r])))
