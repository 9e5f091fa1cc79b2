"""Which SYCL device runs tinyc's SPIR-V, and one cached queue per device.

The pip-installed Intel OpenCL CPU runtime ships an ICD file with a
placeholder path, so the OpenCL loader only finds it when `OCL_ICD_FILENAMES`
names `<prefix>/lib/libintelocl.so`. The loader reads that variable once, when
dpctl is first imported, so `ensure_opencl_icd()` (tinyc/opencl_loader.py)
runs when `tinyc` is imported and before every import of dpctl here. dpctl itself is imported
lazily: `tinyc check` and `tinyc compile` never load it.

Not every SYCL device takes SPIR-V (PoCL's `opencl:cpu:1` has no IL support;
CUDA/HIP devices neither), and the device lists of the drivers are not exact,
so the test is to build a tiny SPIR-V 1.4 kernel. That is a JIT build, so the
answer is kept on disk with the device's limits (device_cache.py, keyed by
device, driver and tinyc version) and a device is probed once per machine.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from tinyc.diagnostics import LaunchError
from tinyc.opencl_loader import ICD_VARIABLE, ensure_opencl_icd, icd_library  # noqa: F401
from tinyc.opencl_loader import icd_state as _icd_state

DEVICE_VARIABLE = "TINYC_DEVICE"

# spirv-as --target-env spv1.4 of:
#   OpCapability Addresses / Kernel / Int64; OpMemoryModel Physical64 OpenCL
#   OpEntryPoint Kernel %k "tinyc_probe"; an empty void() function %k.
_PROBE_SPIRV = bytes.fromhex(
    "030223070004010000000700050000000000000011000200040000001100020006000000"
    "110002000b0000000e00030002000000020000000f000600060000000100000074696e79"
    "635f70726f62650013000200020000002100030003000000020000003600050002000000"
    "010000000000000003000000f800020004000000fd00010038000100"
)

_lock = threading.RLock()
_queues: dict[Any, Any] = {}  # SyclDevice -> in-order SyclQueue
_profiling_queues: dict[Any, Any] = {}  # (context, device) -> profiling queue
_default: list[Any] = []  # the chosen default queue, once found
_labels: dict[Any, str] = {}  # sub-device -> "parent/i" (sub-devices have no filter string)


def import_dpctl() -> ModuleType:
    """dpctl with its program and memory submodules, after fixing the ICD path."""
    ensure_opencl_icd()
    import dpctl
    import dpctl.memory  # noqa: F401
    import dpctl.program  # noqa: F401

    return dpctl


def _new_queue(dpctl: ModuleType, device: Any) -> Any:
    """An in-order queue: tinyc chains copy-in, kernel, copy-out anyway."""
    return dpctl.SyclQueue(device, property="in_order")


def queue_for_device(device: Any) -> Any:
    """The cached queue of a SyclDevice (no SPIR-V check)."""
    dpctl = import_dpctl()
    with _lock:
        queue = _queues.get(device)
        if queue is None:
            queue = _queues[device] = _new_queue(dpctl, device)
        return queue


def register_queue(device: Any, queue: Any, label: str) -> None:
    """Use `queue` for a sub-device (made by tinyc.devices), and name it `label`."""
    with _lock:
        _queues[device] = queue
        _labels[device] = label


def device_label(device: Any) -> str:
    """A short name of a device: its filter string, or `parent/i` for a sub-device."""
    label = _labels.get(device)
    if label is not None:
        return label
    try:
        return device.filter_string
    except ValueError:  # a sub-device tinyc did not make
        return f"sub-device of {device_label(device.get_unpartitioned_parent_device())}"


def _root(device: Any) -> Any:
    """The device itself, or the unpartitioned device a sub-device belongs to."""
    return device if device.parent_device is None else device.get_unpartitioned_parent_device()


def profiling_queue(queue: Any) -> Any:
    """A queue with event profiling on the same context and device as `queue`."""
    if queue.has_enable_profiling:
        return queue
    dpctl = import_dpctl()
    key = (queue.sycl_context, queue.sycl_device)
    with _lock:
        found = _profiling_queues.get(key)
        if found is None:
            found = dpctl.SyclQueue(
                queue.sycl_context, queue.sycl_device, property=["in_order", "enable_profiling"]
            )
            _profiling_queues[key] = found
        return found


def accepts_spirv(device: Any) -> bool:
    """True if the device builds a SPIR-V 1.4 kernel (probed once, then cached on disk)."""
    from tinyc.runtime import device_cache

    # A sub-device builds what its device builds.
    return device_cache.entry(_root(device), _try_probe)["spirv"]


def device_info(device: Any) -> Any:
    """The limits the passes read (tinyc.target.device_info.DeviceInfo): a root device's from
    the device cache, a sub-device's from the driver."""
    from tinyc.runtime import device_cache
    from tinyc.target.device_info import DeviceInfo

    if device.parent_device is not None:
        return DeviceInfo.from_sycl_device(device)
    return DeviceInfo.from_limits(device_cache.entry(device, _try_probe)["limits"])


def _try_probe(device: Any) -> bool:
    if device.backend.name not in ("opencl", "level_zero"):
        return False  # dpctl builds SPIR-V only through these backends
    dpctl = import_dpctl()
    try:
        program = dpctl.program.create_program_from_spirv(queue_for_device(device), _PROBE_SPIRV)
        return program.has_sycl_kernel("tinyc_probe")
    except Exception:  # any failure means: not usable for tinyc
        return False


def _describe(device: Any) -> str:
    return f"{device_label(device)} ({device.name}, driver {device.driver_version})"


def _no_device_message(seen: list[Any]) -> str:
    found = ", ".join(_describe(d) for d in seen) or "none"
    hint = (
        f"install the CPU runtime (pip install intel-opencl-rt) or a GPU driver; "
        f"for the pip CPU runtime set {ICD_VARIABLE}={icd_library()}"
    )
    if _icd_state["dpctl_was_loaded"]:
        hint += " (dpctl was imported before tinyc could set it: import tinyc first or export it)"
    return f"no SYCL device accepts SPIR-V (devices found: {found}); {hint}"


def _device_order(device: Any) -> int:
    """GPUs first (the main target), then CPUs, then the rest; sorted() is stable."""
    kind = device.device_type.name
    return 0 if kind == "gpu" else 1 if kind == "cpu" else 2


def _default_queue(dpctl: ModuleType) -> Any:
    with _lock:
        if _default:
            return _default[0]
        devices = sorted(dpctl.get_devices(), key=_device_order)
        for device in devices:
            if accepts_spirv(device):
                _default.append(queue_for_device(device))
                return _default[0]
        raise LaunchError(_no_device_message(devices))


def _device_from_filter(dpctl: ModuleType, text: str, origin: str) -> Any:
    try:
        return dpctl.SyclDevice(text)
    except Exception as exc:
        raise LaunchError(
            f"no SYCL device matches {origin} {text!r} ({exc}); 'tinyc devices' lists the devices"
        ) from None


def select_queue(device: Any = None) -> Any:
    """The queue tinyc launches on.

    `device` may be a dpctl.SyclQueue (used as is), a dpctl.SyclDevice or a
    filter string such as "opencl:cpu:0"; else $TINYC_DEVICE; else the first
    device (GPUs first) that builds SPIR-V. Raises LaunchError when the chosen
    device cannot take SPIR-V or none can.
    """
    dpctl = import_dpctl()
    if isinstance(device, dpctl.SyclQueue):
        queue = device
    else:
        if device is None:
            spec = os.environ.get(DEVICE_VARIABLE, "").strip()
            if not spec:
                return _default_queue(dpctl)
            device = _device_from_filter(dpctl, spec, f"${DEVICE_VARIABLE}")
        elif isinstance(device, str):
            device = _device_from_filter(dpctl, device, "filter string")
        elif not isinstance(device, dpctl.SyclDevice):
            raise LaunchError(
                f"device must be a filter string, dpctl.SyclDevice or dpctl.SyclQueue, "
                f"got {type(device).__name__}"
            )
        queue = queue_for_device(device)
    if not accepts_spirv(queue.sycl_device):
        raise LaunchError(
            f"device {_describe(queue.sycl_device)} cannot build SPIR-V; "
            f"'tinyc devices' lists the devices that can"
        )
    return queue


def select_device(device: Any = None) -> Any:
    """The dpctl.SyclDevice that `select_queue(device)` launches on."""
    return select_queue(device).sycl_device


@dataclass(frozen=True)
class DeviceInfo:
    """One line of `tinyc devices`."""

    filter_string: str
    name: str
    driver_version: str
    device_type: str
    subgroup_sizes: tuple[int, ...]
    local_mem_size: int
    max_work_group_size: int
    spirv: bool  # builds tinyc's SPIR-V

    def __str__(self) -> str:
        sizes = ",".join(map(str, self.subgroup_sizes)) or "-"
        mark = "yes" if self.spirv else "no"
        return (
            f"{self.filter_string:<16} {self.name} (driver {self.driver_version}); "
            f"subgroups {sizes}; local mem {self.local_mem_size // 1024} KiB; "
            f"SPIR-V: {mark}"
        )


def list_devices() -> list[DeviceInfo]:
    """Every SYCL device dpctl sees, with whether tinyc can use it."""
    dpctl = import_dpctl()
    infos = []
    for device in dpctl.get_devices():
        infos.append(
            DeviceInfo(
                filter_string=device.filter_string,
                name=device.name,
                driver_version=device.driver_version,
                device_type=device.device_type.name,
                subgroup_sizes=tuple(device.sub_group_sizes),
                local_mem_size=device.local_mem_size,
                max_work_group_size=device.max_work_group_size,
                spirv=accepts_spirv(device),
            )
        )
    return infos
