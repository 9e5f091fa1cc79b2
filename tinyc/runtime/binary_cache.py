"""Built programs kept on disk, so the runtime's JIT is paid once per machine, not per process.

The Intel OpenCL CPU runtime caches nothing (its configuration has no cache
setting; `SYCL_CACHE_PERSISTENT` does not apply to dpctl's interop builds,
RUNTIME-NOTES §13), and dpctl builds programs only from SPIR-V or OpenCL C.
But OpenCL itself round-trips program binaries, and dpctl's context is an
OpenCL context underneath. So on the OpenCL backend tinyc:

1. builds the SPIR-V itself on dpctl's own context (clCreateProgramWithIL,
   clBuildProgram, through ctypes) and stores the device binary
   (clGetProgramInfo(CL_PROGRAM_BINARIES)) in `<cache dir>/programs/`;
2. later, in any process, creates the program from that binary
   (clCreateProgramWithBinary + clBuildProgram: ~5 ms instead of 100-600 ms);
3. hands the cl_program to SYCL exactly as dpctl does after its own builds
   (`sycl::detail::make_kernel_bundle(handle, context, false, executable,
   opencl)`, the libsycl function dpctl itself calls) and wraps the bundle
   with dpctl's C API (`DPCTLKernelBundle_Copy`, `SyclProgram_Make`), which
   gives an ordinary `dpctl.program.SyclProgram`.

Step 3 calls a C++ function of libsycl through ctypes, so it is used only
where it was verified (`applies`): dpctl 0.22 on libsycl.so.9, the OpenCL
backend, a root device whose queue's context holds that device alone (not the
sub-devices of `tinyc.devices(split=True)`), one build at a time. Anything
else, or any failure before that call, falls back to dpctl's own build.
`TINYC_BINARY_CACHE=0` turns it off. Entries are keyed by the SPIR-V, the
device, its driver, the host CPU's features and the build options; a binary
the driver rejects is rebuilt. The directory is the tuning cache's
(`TINYC_CACHE_DIR`, else the user's cache directory); `tinyc tune --clear`
empties both.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import Any

from tinyc.opencl_loader import prefix_library
from tinyc.runtime.opencl import CL_SUCCESS, opencl_library

ENV = "TINYC_BINARY_CACHE"
MAX_BYTES = 256 << 20   # the directory is pruned to this size, oldest first
CL_PROGRAM_BINARY_SIZES = 0x1165
CL_PROGRAM_BINARIES = 0x1166
_BACKEND_OPENCL = 1         # sycl::backend::opencl
_BUNDLE_EXECUTABLE = 2      # sycl::bundle_state::executable
_MAKE_KERNEL_BUNDLE = ("_ZN4sycl3_V16detail18make_kernel_bundleEmRKNS0_7contextEb"
                       "NS0_12bundle_stateENS0_7backendE")
_CONTEXT_NATIVE = ("_ZN4sycl3_V110get_nativeILNS0_7backendE1ENS0_7contextEEENS0_14"
                   "backend_traitsIXT_EE11return_typeIT0_EERKS7_")
_DEVICE_NATIVE = "_ZNK4sycl3_V16device9getNativeEv"

_vp = ctypes.c_void_p
_lock = threading.Lock()
_build_lock = threading.Lock()
_bridge: list[Any] = []     # the loaded interop functions, or [None] when unavailable


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0"


SUBDIRECTORY = "programs"


def programs_dir() -> Path:
    from tinyc.disk_cache import cache_dir

    return cache_dir() / SUBDIRECTORY


class _Bridge:
    """The OpenCL, libsycl and dpctl entry points the round trip needs."""

    def __init__(self) -> None:
        import dpctl
        import dpctl.program._program as dpctl_program

        if not dpctl.__version__.startswith("0.22."):
            raise OSError(f"verified with dpctl 0.22 only, found {dpctl.__version__}")
        self.cl = opencl_library()
        cl = self.cl
        cl.clCreateProgramWithIL.restype = _vp
        cl.clCreateProgramWithIL.argtypes = [_vp, ctypes.c_char_p, ctypes.c_size_t,
                                             ctypes.POINTER(ctypes.c_int32)]
        cl.clCreateProgramWithBinary.restype = _vp
        cl.clCreateProgramWithBinary.argtypes = [
            _vp, ctypes.c_uint32, ctypes.POINTER(_vp), ctypes.POINTER(ctypes.c_size_t),
            ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int32),
            ctypes.POINTER(ctypes.c_int32)]
        cl.clBuildProgram.argtypes = [_vp, ctypes.c_uint32, ctypes.POINTER(_vp), ctypes.c_char_p,
                                      _vp, _vp]
        cl.clGetProgramInfo.argtypes = [_vp, ctypes.c_uint32, ctypes.c_size_t, _vp,
                                        ctypes.POINTER(ctypes.c_size_t)]
        cl.clReleaseProgram.argtypes = [_vp]
        dpctl_lib = ctypes.CDLL(os.path.join(os.path.dirname(dpctl.__file__),
                                             "libDPCTLSyclInterface.so"))
        sycl = ctypes.CDLL(prefix_library("libsycl.so.9"))
        self.context_native = getattr(dpctl_lib, _CONTEXT_NATIVE)
        self.context_native.restype, self.context_native.argtypes = _vp, [_vp]
        self.device_native = getattr(sycl, _DEVICE_NATIVE)
        self.device_native.restype, self.device_native.argtypes = ctypes.c_uint64, [_vp]
        self.make_kernel_bundle = getattr(sycl, _MAKE_KERNEL_BUNDLE)
        # Returns std::shared_ptr<kernel_bundle_impl> (16 bytes, through a hidden pointer).
        self.make_kernel_bundle.restype = _vp
        self.make_kernel_bundle.argtypes = [_vp, ctypes.c_uint64, _vp, ctypes.c_bool,
                                            ctypes.c_int, ctypes.c_int]
        self.bundle_copy = dpctl_lib.DPCTLKernelBundle_Copy
        self.bundle_copy.restype, self.bundle_copy.argtypes = _vp, [_vp]
        capsule = dpctl_program.__pyx_capi__["SyclProgram_Make"]
        api = ctypes.pythonapi
        api.PyCapsule_GetName.restype, api.PyCapsule_GetName.argtypes = \
            ctypes.c_char_p, [ctypes.py_object]
        api.PyCapsule_GetPointer.restype = _vp
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        name = api.PyCapsule_GetName(capsule)
        if name != b"struct PySyclProgramObject *(DPCTLSyclKernelBundleRef)":
            raise OSError(f"unexpected SyclProgram_Make signature {name!r}")
        # PYFUNCTYPE keeps the GIL: SyclProgram_Make creates a Python object.
        self.program_make = ctypes.PYFUNCTYPE(ctypes.py_object, _vp)(
            api.PyCapsule_GetPointer(capsule, name))

    def handles(self, queue: Any) -> tuple[int, int]:
        """(cl_context, cl_device_id) under dpctl's context and device."""
        context = self.context_native(queue.sycl_context.addressof_ref())
        device = self.device_native(queue.sycl_device.addressof_ref())
        if not context or not device:
            raise OSError("no native OpenCL handles")
        return context, device

    def build(self, context: int, device: int, create: Any) -> int | None:
        """A cl_program created by `create(error)` and built for `device`, or None."""
        error = ctypes.c_int32(0)
        program = create(ctypes.byref(error))
        if not program:
            return None
        devices = (_vp * 1)(device)
        if self.cl.clBuildProgram(program, 1, devices, b"", None, None) != CL_SUCCESS:
            self.cl.clReleaseProgram(program)
            return None
        return program

    def binary(self, program: int) -> bytes:
        size = ctypes.c_size_t(0)
        self.cl.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, ctypes.sizeof(size),
                                 ctypes.byref(size), None)
        buffer = ctypes.create_string_buffer(size.value)
        pointers = (ctypes.c_char_p * 1)(ctypes.cast(buffer, ctypes.c_char_p))
        status = self.cl.clGetProgramInfo(program, CL_PROGRAM_BINARIES, ctypes.sizeof(pointers),
                                          pointers, None)
        return buffer.raw if status == CL_SUCCESS else b""

    def sycl_program(self, queue: Any, program: int) -> Any:
        """A dpctl SyclProgram owning the built cl_program (SYCL releases it)."""
        bundle = ctypes.create_string_buffer(32)   # sycl::kernel_bundle: one shared_ptr
        self.make_kernel_bundle(ctypes.addressof(bundle), program,
                                queue.sycl_context.addressof_ref(), False, _BUNDLE_EXECUTABLE,
                                _BACKEND_OPENCL)
        # The copy belongs to dpctl; `bundle` keeps one reference (a few bytes per program).
        return self.program_make(self.bundle_copy(ctypes.addressof(bundle)))


def _load_bridge() -> Any:
    with _lock:
        if not _bridge:
            try:
                _bridge.append(_Bridge())
            except Exception:  # another dpctl/libsycl, no OpenCL library: dpctl builds alone
                _bridge.append(None)
        return _bridge[0]


def _runtime_settings() -> str:
    """The CPU runtime's code-generation settings from the environment (CL_CONFIG_CPU_TARGET_ARCH
    makes AVX2 code on an AVX-512 host, CL_CONFIG_CPU_VECTORIZER_MODE another vector width)."""
    return ";".join(f"{k}={v}" for k, v in sorted(os.environ.items())
                    if k.startswith("CL_CONFIG_") and not k.startswith("CL_CONFIG_DUMP"))


def _host_features() -> str:
    """The CPU features the JIT may have used (the binaries are machine code)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return line
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def cache_key(queue: Any, spirv: bytes, options: str = "") -> bytes:
    """Everything a binary depends on, as the header its file starts with."""
    device = queue.sycl_device
    text = "\0".join([device.name, device.driver_version, _host_features(), _runtime_settings(), options])
    key = text.encode() + b"\0" + spirv
    return _MAGIC + len(key).to_bytes(8, "little") + key


_MAGIC = b"tinyc program binary 2\0"


def applies(queue: Any) -> bool:
    """Only where the round trip was verified: the OpenCL backend, a root device, a context
    of that one device. (SYCL rejects a program whose devices do not match its context by
    throwing a C++ exception, which would end the process under ctypes.)"""
    device = queue.sycl_device
    if device.backend.name != "opencl" or getattr(device, "parent_device", None) is not None:
        return False
    devices = queue.sycl_context.get_devices()
    return len(devices) == 1 and devices[0] == device


def stored(queue: Any, spirv: bytes) -> bool:
    """Whether `build` would load `spirv` from a stored binary (cheap to build, then)."""
    if not enabled() or not applies(queue):
        return False
    from tinyc.disk_cache import checksum

    return (programs_dir() / f"{checksum(cache_key(queue, spirv))}.bin").is_file()


def build(queue: Any, spirv: bytes) -> Any | None:
    """The program of `spirv`, from the disk cache or built and stored; None to let dpctl build.

    One build at a time: the interop calls are not made from several threads.
    """
    if not enabled() or not applies(queue):
        return None
    bridge = _load_bridge()
    if bridge is None:
        return None
    with _build_lock:
        return _build_locked(bridge, queue, spirv)


def _build_locked(bridge: Any, queue: Any, spirv: bytes) -> Any | None:
    try:
        context, device = bridge.handles(queue)
    except Exception:
        return None
    from tinyc.disk_cache import checksum

    header = cache_key(queue, spirv)
    path = programs_dir() / f"{checksum(header)}.bin"
    program = _from_binary(bridge, context, device, path, header)
    if program is None:
        program = bridge.build(context, device, lambda error: bridge.cl.clCreateProgramWithIL(
            context, spirv, len(spirv), error))
        if program is None:
            return None  # dpctl builds it again and reports the build log
        binary = bridge.binary(program)
        if binary:
            _store(path, header + binary)
    return bridge.sycl_program(queue, program)


def _from_binary(bridge: Any, context: int, device: int, path: Path, header: bytes) -> int | None:
    try:
        stored = path.read_bytes()
    except OSError:
        return None
    if not stored.startswith(header):
        if not stored.startswith(_MAGIC):
            _ignore(path, "not a program binary tinyc stored")
        return None  # another key with the same checksum: replaced by this one
    binary = stored[len(header):]
    if not binary:
        return None
    os.utime(path)  # recently used: pruned last
    devices = (_vp * 1)(device)
    sizes = (ctypes.c_size_t * 1)(len(binary))
    blobs = (ctypes.c_char_p * 1)(binary)
    status = ctypes.c_int32(0)
    program = bridge.build(context, device, lambda error: bridge.cl.clCreateProgramWithBinary(
        context, 1, devices, sizes, blobs, ctypes.byref(status), error))
    if program is None:  # stale or damaged: rebuilt from SPIR-V
        _ignore(path, "the driver rejects it")
        path.unlink(missing_ok=True)
    return program


def _ignore(path: Path, why: str) -> None:
    import warnings

    from tinyc.disk_cache import TuningWarning

    warnings.warn(f"ignoring the program binary {path}: {why} (rebuilt from SPIR-V)", TuningWarning,
                  stacklevel=5)


def _store(path: Path, entry: bytes) -> None:
    """Keep the entry (a read-only or full cache directory only costs the JIT next time)."""
    from tinyc.disk_cache import prune, write_bytes

    if write_bytes(path, entry):
        prune(path.parent, "*.bin", MAX_BYTES)


def clear() -> int:
    from tinyc.disk_cache import clear as clear_entries

    return clear_entries(SUBDIRECTORY, "*.bin")
