"""Raw OpenCL through ctypes: a failed build's log (and binaries, see binary_cache.py).

dpctl raises SyclProgramCompilationError with an empty message, so after a
failed build we repeat it with clCreateProgramWithIL / clBuildProgram on the
same OpenCL device and read CL_PROGRAM_BUILD_LOG (RUNTIME-NOTES §0). Load the
library only after dpctl made a queue: before that, libsvml.so is not found.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Any

from tinyc.opencl_loader import prefix_library

CL_SUCCESS = 0
CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
CL_DEVICE_NAME = 0x102B
CL_DRIVER_VERSION = 0x102D
CL_PROGRAM_BUILD_LOG = 0x1183

_vp = ctypes.c_void_p
_u32, _i32p, _sizep = ctypes.c_uint32, ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_size_t)
_lib: list[ctypes.CDLL] = []


def _opencl() -> ctypes.CDLL:
    """libOpenCL.so.1 of the prefix pip installed it into (the loader dpctl uses), else the
    system one."""
    if not _lib:
        path = prefix_library("libOpenCL.so.1")
        if not os.path.exists(path):
            path = ctypes.util.find_library("OpenCL") or "libOpenCL.so.1"
        lib = ctypes.CDLL(path)
        u32p, vpp = ctypes.POINTER(_u32), ctypes.POINTER(_vp)
        lib.clGetPlatformIDs.argtypes = [_u32, vpp, u32p]
        lib.clGetDeviceIDs.argtypes = [_vp, ctypes.c_uint64, _u32, vpp, u32p]
        lib.clGetDeviceInfo.argtypes = [_vp, _u32, ctypes.c_size_t, _vp, _sizep]
        lib.clCreateContext.restype = _vp
        lib.clCreateContext.argtypes = [_vp, _u32, vpp, _vp, _vp, _i32p]
        lib.clCreateProgramWithIL.restype = _vp
        lib.clCreateProgramWithIL.argtypes = [_vp, ctypes.c_char_p, ctypes.c_size_t, _i32p]
        lib.clBuildProgram.argtypes = [_vp, _u32, vpp, ctypes.c_char_p, _vp, _vp]
        lib.clGetProgramBuildInfo.argtypes = [_vp, _vp, _u32, ctypes.c_size_t, _vp, _sizep]
        lib.clReleaseProgram.argtypes = [_vp]
        lib.clReleaseContext.argtypes = [_vp]
        _lib.append(lib)
    return _lib[0]


def opencl_library() -> ctypes.CDLL:
    """The OpenCL library dpctl's loader uses (load it only after dpctl made a queue)."""
    return _opencl()


def _device_text(lib: ctypes.CDLL, device: int, what: int) -> str:
    size = ctypes.c_size_t(0)
    lib.clGetDeviceInfo(device, what, 0, None, ctypes.byref(size))
    buffer = ctypes.create_string_buffer(size.value)
    lib.clGetDeviceInfo(device, what, size.value, buffer, None)
    return buffer.value.decode(errors="replace")


def find_device(name: str, driver_version: str) -> int | None:
    """The cl_device_id whose name and driver version match a dpctl device."""
    lib = _opencl()
    count = ctypes.c_uint32(0)
    if lib.clGetPlatformIDs(0, None, ctypes.byref(count)) != CL_SUCCESS or not count.value:
        return None
    platforms = (_vp * count.value)()
    lib.clGetPlatformIDs(count.value, platforms, None)
    for platform in platforms:
        found = ctypes.c_uint32(0)
        if lib.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, None, ctypes.byref(found)) != CL_SUCCESS:
            continue
        devices = (_vp * found.value)()
        lib.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, found.value, devices, None)
        for device in devices:
            if (
                _device_text(lib, device, CL_DEVICE_NAME) == name
                and _device_text(lib, device, CL_DRIVER_VERSION) == driver_version
            ):
                return device
    return None


def build_log(sycl_device: Any, spirv: bytes, options: str = "") -> str:
    """Build `spirv` with raw OpenCL on the device and return what went wrong."""
    if sycl_device.backend.name != "opencl":
        return f"(no build log: the {sycl_device.backend.name} backend is not read through OpenCL)"
    try:
        lib = _opencl()
        device = find_device(sycl_device.name, sycl_device.driver_version)
    except OSError as exc:
        return f"(no build log: cannot load libOpenCL: {exc})"
    if device is None:
        return "(no build log: the device is not visible through libOpenCL)"
    error = ctypes.c_int32(0)
    devices = (_vp * 1)(device)
    context = lib.clCreateContext(None, 1, devices, None, None, ctypes.byref(error))
    if not context:
        return f"(no build log: clCreateContext failed with {error.value})"
    try:
        program = lib.clCreateProgramWithIL(context, spirv, len(spirv), ctypes.byref(error))
        if not program:
            return f"clCreateProgramWithIL rejected the module (error {error.value})"
        try:
            status = lib.clBuildProgram(program, 1, devices, options.encode(), None, None)
            size = ctypes.c_size_t(0)
            lib.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, None, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value + 1)
            lib.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size.value, log, None)
            text = log.value.decode(errors="replace").strip()
            if status == CL_SUCCESS:
                return text or "(the raw OpenCL build succeeded; the failure is in dpctl/SYCL)"
            return f"clBuildProgram returned {status}\n{text}"
        finally:
            lib.clReleaseProgram(program)
    finally:
        lib.clReleaseContext(context)
