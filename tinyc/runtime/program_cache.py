"""Built programs, cached per (context, device, SPIR-V bytes) for the process.

The CPU runtime caches nothing: every create_program_from_spirv JITs the
module again (100-300 ms, RUNTIME-NOTES §13), so tinyc keeps the programs.

Across processes, binary_cache.py keeps the device binaries on disk (OpenCL
program binaries handed to SYCL as dpctl does after its own builds): a
program built once on a machine then loads in ~5 ms. `TINYC_BINARY_CACHE=0`
turns that off; without it (or where it does not apply) dpctl builds.
"""

from __future__ import annotations

import threading
from typing import Any

from tinyc.runtime.device import device_label, import_dpctl
from tinyc.runtime.opencl import build_log


class BuildError(RuntimeError):
    """The device rejected a SPIR-V module; `.log` is the driver's build log."""

    def __init__(self, message: str, log: str):
        self.log = log
        super().__init__(f"{message}\n{log}" if log else message)


_lock = threading.Lock()
_programs: dict[tuple[Any, Any, bytes], Any] = {}


def spirv_key(spirv: bytes) -> bytes:
    """The cache key of a module's bytes: the bytes themselves (Python hashes them once per
    object; a hit compares them, microseconds for a module of tens of kilobytes)."""
    return bytes(spirv)


_building: dict[tuple[Any, Any, bytes], threading.Lock] = {}  # one lock per key being built


def build_program(queue: Any, spirv: bytes) -> Any:
    """The dpctl SyclProgram for `spirv` on the queue's context and device.

    Builds of different keys run at the same time (the runtime's JIT releases
    the GIL: a batch split over two devices builds for both at once)."""
    key = (queue.sycl_context, queue.sycl_device, spirv_key(spirv))
    with _lock:
        program = _programs.get(key)
        if program is not None:
            return program
        building = _building.setdefault(key, threading.Lock())
    with building:
        with _lock:
            program = _programs.get(key)
        if program is None:
            program = _build(queue, bytes(spirv))
            with _lock:
                _programs[key] = program
                _building.pop(key, None)
        return program


def _build(queue: Any, spirv: bytes) -> Any:
    from tinyc.runtime import binary_cache

    dpctl = import_dpctl()
    cached = binary_cache.build(queue, spirv)
    if cached is not None:
        return cached
    try:
        return dpctl.program.create_program_from_spirv(queue, spirv)
    except dpctl.program.SyclProgramCompilationError:
        device = queue.sycl_device
        log = build_log(device, spirv)
        raise BuildError(
            f"the SPIR-V module ({len(spirv)} bytes) does not build on "
            f"{device_label(device)} ({device.name}, driver {device.driver_version}); build log:",
            log,
        ) from None


def prefetch(queue: Any, spirv: bytes) -> None:
    """Build `spirv` in a background thread if its device binary is on disk.

    Loading a stored binary still takes the driver ~10 ms, with the GIL
    released; started when a program is compiled (tinyc.compile), it overlaps
    what the caller does before the first launch (importing the launcher,
    making the arrays), which then finds the program built. A failure is left
    to that launch's own build, which reports it. Not a daemon thread: the
    interpreter waits for it at exit instead of tearing the runtime down under
    a build.
    """
    from tinyc.runtime import binary_cache

    key = (queue.sycl_context, queue.sycl_device, spirv_key(spirv))
    with _lock:
        if key in _programs or key in _building:
            return
    if binary_cache.stored(queue, spirv):
        threading.Thread(target=_build_quietly, args=(queue, spirv), name="tinyc-prefetch").start()


def _build_quietly(queue: Any, spirv: bytes) -> None:
    try:
        build_program(queue, spirv)
    except Exception:  # the launch builds again and reports it
        pass


def cached_programs() -> int:
    """How many programs the process holds (for tests and `tinyc devices`)."""
    return len(_programs)


def clear_program_cache() -> None:
    """Forget every built program (they are freed when no Kernel uses them)."""
    with _lock:
        _programs.clear()
