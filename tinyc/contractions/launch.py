"""Launching a contraction kernel: arrays passed by address, nothing copied.

A contraction kernel's arrays are plain memref arguments: a pointer, then
one 64-bit integer per `?` size and stride (the dynamic batch). dpctl's
Python `submit` accepts a pointer only as USM memory of the queue's
context, but the device reads any host memory when it supports system
allocations (`aspect::usm_system_allocations`, true for the CPU OpenCL
runtime), so calls go through `DPCTLQueue_SubmitNDRange` (dpctl's C
interface, which its `submit` calls too): argument values and kinds as
arrays, a pointer as its value. NumPy arrays go in and come out without
a copy; USM arrays (dpnp, dpctl) by their address.

A device without system allocations gets NumPy data copied to USM device
memory and the output copied back (`Staged`).

This is the contractions' own launcher until `Kernel.__call__` passes NumPy
arrays by address (issue 19); then contractions move onto it.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Sequence

import numpy as np

from tinyc.ir.types import ScalarType
from tinyc.runtime.device import import_dpctl
from tinyc.runtime.staging import host_bytes

_VOID_PTR, _RAW, _INT64, _FLOAT, _DOUBLE = 10, 13, 6, 8, 9   # DPCTLKernelArgType
_lib: list[Any] = []


def _library() -> Any:
    if not _lib:
        dpctl = import_dpctl()
        lib = ctypes.CDLL(os.path.join(os.path.dirname(dpctl.__file__), "libDPCTLSyclInterface.so"))
        vp, size = ctypes.c_void_p, ctypes.c_size_t
        lib.DPCTLQueue_SubmitNDRange.restype = vp
        lib.DPCTLQueue_SubmitNDRange.argtypes = [vp, vp, vp, vp, size, vp, vp, size, vp, size]
        lib.DPCTLEvent_Wait.argtypes = [vp]
        lib.DPCTLEvent_Delete.argtypes = [vp]
        _lib.append(lib)
    return _lib[0]


class LaunchRefused(RuntimeError):
    """The SYCL runtime refused the submission."""


class Packed:
    """The kernel arguments of one call signature: value and kind arrays, the `?` values
    boxed once; a call writes alpha, beta and the addresses, then submits."""

    def __init__(self, launcher: "Launcher", dynamic: Sequence[Sequence[int]], batch: int):
        n = 2 + sum(1 + len(dyn) for dyn in dynamic)
        self.values = (ctypes.c_void_p * n)()
        self.codes = (ctypes.c_int * n)()
        self.batch = batch
        self.grange = (ctypes.c_size_t * 3)(batch, launcher._y, launcher._x)
        self.alpha, self.beta = launcher._alpha(), launcher._beta()
        self.keep: list[Any] = []
        self.slots: list[int] = []          # positions of the array addresses
        i = 2
        for dyn in dynamic:
            self.slots.append(i)
            self.codes[i] = _VOID_PTR
            i += 1
            for v in dyn:
                box = ctypes.c_int64(v)
                self.keep.append(box)
                self.values[i], self.codes[i] = ctypes.addressof(box), _INT64
                i += 1


class Launcher:
    """Submits one kernel with alpha, beta, and per array its address and `?` values."""

    def __init__(self, kernel: Any, compute: ScalarType, result: ScalarType):
        dpctl = import_dpctl()
        self.kernel = kernel
        self.queue = kernel.queue
        self._lib = _library()
        self._kref = kernel.sycl_kernel.addressof_ref()
        self._qref = self.queue.addressof_ref()
        x, y = kernel.info.work_group_size
        self._x, self._y = x, y
        self._local = (ctypes.c_size_t * 3)(1, y, x)
        self._alpha = _scalar_box(compute, dpctl)
        self._beta = _scalar_box(result, dpctl)
        self._lock = threading.Lock()
        device = self.queue.sycl_device
        self.host_pointers = bool(getattr(device, "has_aspect_usm_system_allocations", False))
        self._memory = dpctl.memory

    def pack(self, dynamic: Sequence[Sequence[int]], batch: int) -> Packed:
        """The argument arrays of calls whose arrays have these `?` values."""
        return Packed(self, dynamic, batch)

    def __call__(self, alpha: Any, beta: Any, arrays: Sequence[tuple[int, Sequence[int]]], batch: int,
                 staged: "Staged | None" = None) -> None:
        """Run over `batch` work-groups: `arrays` are (address, `?` values) per memref argument."""
        self.launch(self.pack([dyn for _, dyn in arrays], batch), alpha, beta, [a for a, _ in arrays], staged)

    def launch(self, packed: Packed, alpha: Any, beta: Any, addresses: Sequence[int],
               staged: "Staged | None" = None) -> None:
        """Run a packed call with these alpha, beta and array addresses; waits."""
        if packed.batch <= 0:
            return
        values, codes = packed.values, packed.codes
        with self._lock:
            values[0], codes[0] = packed.alpha(alpha)
            values[1], codes[1] = packed.beta(beta)
            for slot, address in zip(packed.slots, addresses):
                values[slot] = address
            event = self._lib.DPCTLQueue_SubmitNDRange(self._kref, self._qref, values, codes, len(codes),
                                                        packed.grange, self._local, 3, None, 0)
            if not event:
                raise LaunchRefused(f"the SYCL runtime refused to submit {self.kernel.name!r}")
            try:
                self._lib.DPCTLEvent_Wait(event)
            finally:
                self._lib.DPCTLEvent_Delete(event)
        if staged is not None:
            staged.copy_back()


def _scalar_box(t: ScalarType, dpctl: Any):
    """A factory of setters: setter(value) -> (address of the value's bytes, argument kind)."""
    if t.name in ("c32", "c64"):
        real = np.float32 if t.name == "c32" else np.float64

        def complex_box():
            held: list[Any] = [None]

            def put(value: Any) -> tuple[int, int]:
                held[0] = dpctl.RawKernelArg(np.array([value.real, value.imag], real))
                return held[0]._ref, _RAW
            return put
        return complex_box
    kind, code = (ctypes.c_float, _FLOAT) if t.name == "f32" else (ctypes.c_double, _DOUBLE)

    def real_box():
        box = kind(0)
        address = ctypes.addressof(box)

        def put(value: Any) -> tuple[int, int]:
            box.value = value.real if isinstance(value, complex) else value
            return address, code
        put.box = box  # type: ignore[attr-defined]
        return put
    return real_box


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
