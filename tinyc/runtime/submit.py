"""Submitting a kernel through dpctl's C interface, so any address the device reads is an argument.

dpctl's Python `submit` takes a pointer argument only as a USM memory object,
which it checks against the queue's context: a NumPy array's own address is
refused, although a device with system allocations
(`aspect::usm_system_allocations`, true for Intel's OpenCL CPU runtime)
reads host memory directly. `DPCTLQueue_SubmitNDRange` (libDPCTLSyclInterface,
which dpctl itself calls) takes the argument values and their kinds as
arrays, a pointer as its value: so a NumPy array goes in by address, without
a copy, and a USM array without the ~8 us it costs to wrap it. Kernel
arguments are, as the packers make them (arguments.py, groups.py):

    Address(address, keep)    a pointer the device can read (host or USM)
    ctypes scalars            c_uint8 .. c_uint64, c_float, c_double
    dpctl USM memory objects  their `_pointer`
    dpctl.RawKernelArg        complex scalars (their bytes)

The events come back as `dpctl.SyclEvent`s (a copy of the submission's
event, through the "SyclEventRef" capsule dpctl documents), or, on the fast
path of a call that only waits, as the raw event, waited for and deleted here.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any, Sequence

VOID_PTR, RAW_KERNEL_ARG = 10, 13  # DPCTLKernelArgType (dpctl_sycl_enum_types.h)
_SCALAR_CODES: dict[type, int] = {
    ctypes.c_int8: 0, ctypes.c_uint8: 1, ctypes.c_int16: 2, ctypes.c_uint16: 3, ctypes.c_int32: 4,
    ctypes.c_uint32: 5, ctypes.c_int64: 6, ctypes.c_uint64: 7, ctypes.c_float: 8, ctypes.c_double: 9,
}


class Address:
    """A pointer argument: an address the device reads, and what keeps its memory alive."""

    __slots__ = ("address", "keep")

    def __init__(self, address: int, keep: Any = None):
        self.address = int(address)
        self.keep = keep

    def __repr__(self) -> str:
        return f"Address({self.address:#x})"


_lib: list[Any] = []


def _library() -> Any:
    """libDPCTLSyclInterface with the prototypes used here (dpctl is imported already)."""
    if not _lib:
        import dpctl

        lib = ctypes.CDLL(os.path.join(os.path.dirname(dpctl.__file__), "libDPCTLSyclInterface.so"))
        vp, size = ctypes.c_void_p, ctypes.c_size_t
        lib.DPCTLQueue_SubmitNDRange.restype = vp
        lib.DPCTLQueue_SubmitNDRange.argtypes = [vp, vp, vp, vp, size, vp, vp, size, vp, size]
        lib.DPCTLEvent_Wait.argtypes = [vp]
        lib.DPCTLEvent_WaitAndThrow.argtypes = [vp]
        lib.DPCTLEvent_Delete.argtypes = [vp]
        _lib.append(lib)
    return _lib[0]


_capsule = ctypes.pythonapi.PyCapsule_New
_capsule.restype = ctypes.py_object
_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class SubmitError(RuntimeError):
    """The runtime refused a submission (its message went to the error handler)."""


class Submitter:
    """Submits one kernel (a dpctl SyclKernel) to queues, arguments as packed."""

    def __init__(self, sycl_kernel: Any):
        self._lib = _library()
        self._kernel = sycl_kernel  # kept alive: its reference is used below
        self._kref = sycl_kernel.addressof_ref()
        self._ranges: dict[tuple, tuple[Any, Any]] = {}

    def _range(self, global_range: Sequence[int], local_range: Sequence[int]) -> tuple[Any, Any]:
        key = (*global_range, *local_range)
        found = self._ranges.get(key)
        if found is None:
            found = ((ctypes.c_size_t * 3)(*global_range), (ctypes.c_size_t * 3)(*local_range))
            if len(self._ranges) > 64:
                self._ranges.clear()
            self._ranges[key] = found
        return found

    def submit_raw(self, queue: Any, packed: Sequence[Any], global_range: Sequence[int],
                   local_range: Sequence[int], after: Sequence[Any] = ()) -> int:
        """Submit; returns the raw event (the caller waits for it and deletes it: `finish`)."""
        n = len(packed)
        values = (ctypes.c_void_p * max(n, 1))()
        codes = (ctypes.c_int * max(n, 1))()
        for i, arg in enumerate(packed):
            kind = type(arg)
            if kind is Address:
                values[i], codes[i] = arg.address, VOID_PTR
                continue
            code = _SCALAR_CODES.get(kind)
            if code is not None:
                values[i], codes[i] = ctypes.addressof(arg), code
            elif hasattr(arg, "_pointer"):  # a dpctl USM memory object
                values[i], codes[i] = arg._pointer, VOID_PTR
            elif hasattr(arg, "_ref"):  # dpctl.RawKernelArg
                values[i], codes[i] = arg._ref, RAW_KERNEL_ARG
            else:
                raise TypeError(f"kernel argument {i} has an unsupported kind {kind.__name__}")
        deps = None
        if after:
            deps = (ctypes.c_void_p * len(after))(*(e.addressof_ref() for e in after))
        grange, lrange = self._range(global_range, local_range)
        event = self._lib.DPCTLQueue_SubmitNDRange(self._kref, queue.addressof_ref(), values, codes, n,
                                                    grange, lrange, 3, deps, len(after))
        if not event:
            raise SubmitError(f"the SYCL runtime refused to submit kernel {self._kernel.get_function_name()!r}")
        return event

    def finish(self, event: int) -> None:
        """Wait for a raw event (rethrowing asynchronous errors) and delete it."""
        try:
            self._lib.DPCTLEvent_Wait(event)
        finally:
            self._lib.DPCTLEvent_Delete(event)

    def submit(self, queue: Any, packed: Sequence[Any], global_range: Sequence[int],
               local_range: Sequence[int], after: Sequence[Any] = ()) -> Any:
        """Submit; returns a dpctl.SyclEvent (for profiling and as a dependency)."""
        import dpctl

        event = self.submit_raw(queue, packed, global_range, local_range, after)
        try:
            return dpctl.SyclEvent(_capsule(event, b"SyclEventRef", None))  # dpctl keeps a copy
        finally:
            self._lib.DPCTLEvent_Delete(event)
