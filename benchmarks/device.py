"""The device, queue and USM arrays every implementation of a case shares.

All device-side implementations (tinyc through its API, tinyc's SPIR-V
submitted raw, the hand-written OpenCL C) run on one in-order queue with
event profiling, over the same USM allocations, so they differ only in the
code that runs. This module does not depend on tinyc's runtime: the
baselines must still run when the compiler cannot build a case yet.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from tinyc.runtime.staging import USMPointer

DEFAULT_DEVICE = "opencl:cpu:0"


def ensure_opencl_icd() -> None:
    """Point the OpenCL loader at the pip-installed Intel CPU runtime.

    The ICD file pip installs has a placeholder path (DESIGN.md "Devices
    here"), and the loader reads OCL_ICD_FILENAMES only once, when dpctl is
    first imported; a value the user set is kept.
    """
    library = os.path.join(sys.prefix, "lib", "libintelocl.so")
    if not os.environ.get("OCL_ICD_FILENAMES") and os.path.exists(library):
        os.environ["OCL_ICD_FILENAMES"] = library


def import_dpctl() -> Any:
    """dpctl with its memory and program submodules, after the ICD fix."""
    ensure_opencl_icd()
    import dpctl
    import dpctl.memory  # noqa: F401
    import dpctl.program  # noqa: F401

    return dpctl


def make_queue(device: str | None = None) -> Any:
    """An in-order, profiling queue on the benchmark device.

    In-order because every measurement is submit-then-wait anyway; profiling
    so that the raw and OpenCL C launches also report device (event) time.
    `$TINYC_DEVICE` picks the device like tinyc does; else opencl:cpu:0
    (opencl:cpu:1 is PoCL, which cannot build SPIR-V; RUNTIME-NOTES §0).
    """
    dpctl = import_dpctl()
    spec = device or os.environ.get("TINYC_DEVICE", "").strip() or DEFAULT_DEVICE
    return dpctl.SyclQueue(dpctl.SyclDevice(spec), property=["in_order", "enable_profiling"])


def describe_device(queue: Any) -> dict[str, Any]:
    """What the results were measured on (goes into results.json)."""
    device = queue.sycl_device
    return {
        "filter_string": device.filter_string,
        "name": device.name,
        "driver_version": device.driver_version,
        "max_compute_units": device.max_compute_units,
        "sub_group_sizes": list(device.sub_group_sizes),
    }


class UsmArray:
    """A Fortran-order array in USM device memory, usable by all three sides.

    tinyc takes it without copies through `__sycl_usm_array_interface__`
    (DESIGN.md: USM objects are passed as is); raw submissions and the OpenCL
    C kernels take `memory` (or a view's `memory`) as a pointer argument.
    """

    def __init__(self, queue: Any, host: np.ndarray, base: "UsmArray | None" = None,
                 offset: int = 0, shape: tuple[int, ...] | None = None):
        dpctl = import_dpctl()
        self.queue = queue
        self.dtype = host.dtype
        self.shape = tuple(shape if shape is not None else host.shape)
        self.strides = _fortran_strides(self.shape)
        self._memory: Any = None
        if base is None:
            self._memory = dpctl.memory.MemoryUSMDevice(max(host.nbytes, 1), queue=queue)
            self.address = int(self._memory.__sycl_usm_array_interface__["data"][0])
            self.upload(host)
        else:  # a view into `base` (group members); shares its allocation
            self.address = base.address + offset * self.dtype.itemsize
        self.base = base

    @property
    def memory(self) -> Any:
        """The dpctl USM memory object (made on demand for views: groups have many)."""
        if self._memory is None:
            dpctl = import_dpctl()
            self._memory = dpctl.memory.MemoryUSMDevice(USMPointer(self.address, self.nbytes, self.queue))
        return self._memory

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def __sycl_usm_array_interface__(self) -> dict[str, Any]:
        """Built once: tinyc reads it per group member on every call, and the
        benchmark should time tinyc's work, not this wrapper's."""
        iface = self.__dict__.get("_iface")
        if iface is None:
            iface = self.__dict__["_iface"] = {
                "data": (self.address, False),
                "shape": self.shape,
                "strides": self.strides,
                "typestr": self.dtype.str,
                "version": 1,
                "syclobj": self.queue,
            }
        return iface

    def upload(self, host: np.ndarray) -> None:
        """Copy a host array (any order) into the device buffer, column-major."""
        flat = np.asarray(host, dtype=self.dtype).reshape(-1, order="F")
        self.memory.copy_from_host(np.ascontiguousarray(flat).view(np.uint8))

    def download(self) -> np.ndarray:
        """The buffer's contents as a Fortran-order host array."""
        raw = np.asarray(self.memory.copy_to_host(), dtype=np.uint8)
        return raw.view(self.dtype).reshape(self.shape, order="F")

    def view(self, offset: int, shape: tuple[int, ...]) -> "UsmArray":
        """A column-major sub-array starting `offset` elements in."""
        return UsmArray(self.queue, np.empty(0, self.dtype), base=self, offset=offset, shape=shape)


def _fortran_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a packed column-major array."""
    strides, step = [], 1
    for n in shape:
        strides.append(step)
        step *= max(n, 1)
    return tuple(strides)


def pointer_table(queue: Any, addresses: np.ndarray) -> Any:
    """A device array of uint64 addresses: a group's pointer-to-pointers."""
    dpctl = import_dpctl()
    table = np.ascontiguousarray(addresses, dtype=np.uint64)
    memory = dpctl.memory.MemoryUSMDevice(table.nbytes, queue=queue)
    memory.copy_from_host(table.view(np.uint8))
    return memory


def blas_info() -> dict[str, Any]:
    """Which BLAS kernel NumPy runs, and the OpenBLAS variables that slow it.

    OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE may be set on these machines (older
    OpenBLAS builds crash without them) and make a current NumPy pick a slow
    kernel; the README says how to unset them for a benchmark run.
    """
    info: dict[str, Any] = {
        "numpy": np.__version__,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE"),
    }
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        info["threadpools"] = "threadpoolctl not installed"
        return info
    info["threadpools"] = [
        {k: pool.get(k) for k in ("internal_api", "architecture", "num_threads", "version")}
        for pool in threadpool_info()
    ]
    return info
