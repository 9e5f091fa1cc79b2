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
from types import SimpleNamespace
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
    """The functions of libDPCTLSyclInterface used here (dpctl is imported already).

    The submission holds the GIL (it is short; released, it measured several times slower
    under load, the runtime's threads and Python's handing the GIL back and forth); the wait
    releases it, as dpctl's own `wait` does."""
    if not _lib:
        import dpctl

        lib = ctypes.CDLL(os.path.join(os.path.dirname(dpctl.__file__), "libDPCTLSyclInterface.so"))
        vp, size = ctypes.c_void_p, ctypes.c_size_t

        def function(name: str, kind: Any, restype: Any, *argtypes: Any) -> Any:
            return kind(restype, *argtypes)(ctypes.cast(getattr(lib, name), vp).value)

        _lib.append(SimpleNamespace(
            submit=function("DPCTLQueue_SubmitNDRange", ctypes.PYFUNCTYPE, vp, vp, vp, vp, vp, size, vp, vp,
                            size, vp, size),
            wait=function("DPCTLEvent_Wait", ctypes.CFUNCTYPE, None, vp),
            delete=function("DPCTLEvent_Delete", ctypes.PYFUNCTYPE, None, vp),
        ))
    return _lib[0]


_capsule = ctypes.pythonapi.PyCapsule_New
_capsule.restype = ctypes.py_object
_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class SubmitError(RuntimeError):
    """The runtime refused a submission (its message went to the error handler)."""


Ranges = tuple  # (global, local): ctypes size_t[3] arrays, slowest dimension first


def ranges(global_range: Sequence[int], local_range: Sequence[int]) -> Ranges:
    """An ND-range as DPCTLQueue_SubmitNDRange takes it (dpctl's order: slowest first)."""
    return (ctypes.c_size_t * 3)(*global_range), (ctypes.c_size_t * 3)(*local_range)


_ARRAYS = [(ctypes.c_void_p * max(n, 1), ctypes.c_int * max(n, 1)) for n in range(65)]


class Submitter:
    """Submits one kernel (a dpctl SyclKernel) to queues, arguments as packed."""

    def __init__(self, sycl_kernel: Any):
        self._lib = _library()
        self._kernel = sycl_kernel  # kept alive: its reference is used below
        self._kref = sycl_kernel.addressof_ref()
        self._submit, self._wait, self._delete = self._lib.submit, self._lib.wait, self._lib.delete
        self._last: tuple | None = None
        """(the packed objects, their value and kind arrays, the Address slots) of the last
        submission: a packing launched again (tinyc.einsum's relaunches) rewrites only its
        addresses. Held objects keep their ctypes addresses; a packing of other objects, or
        the same list changed, is packed anew."""

    def _arrays(self, packed: Sequence[Any]) -> tuple[Any, Any, int]:
        """The value and kind arrays of a packing (module docs), and its length."""
        last, objects = self._last, tuple(packed)
        if last is not None and last[0] == objects:   # (identity first: no __eq__ is called)
            values = last[1]
            for i in last[3]:
                values[i] = packed[i].address
            return values, last[2], len(objects)
        values, codes, slots = self._pack(packed)
        self._last = (objects, values, codes, slots)
        return values, codes, len(objects)

    @staticmethod
    def _pack(packed: Sequence[Any]) -> tuple[Any, Any, tuple[int, ...]]:
        n = len(packed)
        kinds = _ARRAYS[n] if n < len(_ARRAYS) else (ctypes.c_void_p * n, ctypes.c_int * n)
        values, codes = kinds[0](), kinds[1]()
        slots = []
        for i, arg in enumerate(packed):
            kind = type(arg)
            if kind is Address:
                values[i], codes[i] = arg.address, VOID_PTR
                slots.append(i)
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
        return values, codes, tuple(slots)

    def submit_raw(self, queue: Any, packed: Sequence[Any], nd_range: Ranges, after: Sequence[Any] = ()) -> int:
        """Submit; returns the raw event (the caller waits for it and deletes it: `finish`)."""
        values, codes, n = self._arrays(packed)
        deps = None
        if after:
            deps = (ctypes.c_void_p * len(after))(*(e.addressof_ref() for e in after))
        event = self._submit(self._kref, queue.addressof_ref(), values, codes, n, nd_range[0], nd_range[1], 3,
                             deps, len(after))
        if not event:
            raise SubmitError(f"the SYCL runtime refused to submit kernel {self._kernel.get_function_name()!r}")
        return event

    def finish(self, event: int) -> None:
        """Wait for a raw event and delete it."""
        try:
            self._wait(event)
        finally:
            self._delete(event)

    def submit(self, queue: Any, packed: Sequence[Any], nd_range: Ranges, after: Sequence[Any] = ()) -> Any:
        """Submit; returns a dpctl.SyclEvent (for profiling and as a dependency)."""
        import dpctl

        event = self.submit_raw(queue, packed, nd_range, after)
        try:
            return dpctl.SyclEvent(_capsule(event, b"SyclEventRef", None))  # dpctl keeps a copy
        finally:
            self._delete(event)
