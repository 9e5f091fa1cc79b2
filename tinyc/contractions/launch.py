"""Launching a contraction kernel: arguments passed by address, nothing copied.

Every array argument of an einsum kernel is a `group<memref<...>x1>`: a
pointer to a table holding the array's address. The table lives in USM
shared memory (allocated once per kernel) and the address in it may be
any memory the device can read:

  * USM arrays (dpnp, dpctl) — their own address;
  * NumPy arrays, when the device supports system allocations
    (`aspect::usm_system_allocations`, true for the CPU OpenCL runtime) —
    the NumPy buffer itself: no copy in, no copy back.

A device without system allocations gets NumPy data copied to USM device
memory and the output copied back (`Staged`). The static memref types
(shapes and strides are part of the cache key) mean no size or stride
arguments: a call writes the addresses into the table and submits.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from tinyc.runtime.device import import_dpctl
from tinyc.runtime.scalars import scalar_packer
from tinyc.runtime.staging import USMPointer, host_bytes
from tinyc.ir.types import ScalarType


class Launcher:
    """Submits one kernel with alpha, beta and the array addresses of a call."""

    def __init__(self, kernel: Any, compute: ScalarType, result: ScalarType, n_arrays: int):
        dpctl = import_dpctl()
        self.kernel = kernel
        self.queue = kernel.queue
        self._alpha = scalar_packer(compute, "alpha", dpctl.RawKernelArg)
        self._beta = scalar_packer(result, "beta", dpctl.RawKernelArg)
        self._table = dpctl.memory.MemoryUSMShared(8 * max(n_arrays, 1), queue=self.queue)
        self._slots = np.frombuffer(self._table, dtype=np.uint64, count=max(n_arrays, 1))
        base = self._table._pointer
        self._arguments = [dpctl.memory.MemoryUSMShared(USMPointer(base + 8 * k, 8, self.queue))
                           for k in range(n_arrays)]
        self._lock = threading.Lock()
        device = self.queue.sycl_device
        self.host_pointers = bool(getattr(device, "has_aspect_usm_system_allocations", False))
        self._memory = dpctl.memory

    def __call__(self, alpha: Any, beta: Any, addresses: Sequence[int], batch: int,
                 staged: "Staged | None" = None) -> None:
        args = [self._alpha(alpha), self._beta(beta), *self._arguments]
        with self._lock:
            self._slots[: len(addresses)] = addresses
            self.kernel.submit(args, batch).wait()
        if staged is not None:
            staged.copy_back()


class Staged:
    """NumPy arrays copied to USM device memory for a device that cannot read host memory."""

    def __init__(self, queue: Any, memory: Any):
        self.queue, self.memory = queue, memory
        self.buffers: list[Any] = []
        self.back: list[tuple[Any, np.ndarray, int, int]] = []

    def address(self, array: np.ndarray, address: int, nbytes: int, written: bool) -> int:
        """Device address of a copy of the bytes [address, address + nbytes) of `array`."""
        buffer = self.memory.MemoryUSMDevice(max(nbytes, 1), queue=self.queue)
        if nbytes:
            buffer.copy_from_host(host_bytes(array, address, nbytes))
        self.buffers.append(buffer)
        if written:
            self.back.append((buffer, array, address, nbytes))
        return buffer._pointer

    def copy_back(self) -> None:
        """The written arrays' bytes back from the device (gaps of a strided view included:
        they went in and come back unchanged)."""
        for buffer, array, address, nbytes in self.back:
            if nbytes:
                buffer.copy_to_host(host_bytes(array, address, nbytes))
