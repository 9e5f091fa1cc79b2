"""What the passes know about the target device.

The passes never import dpctl: the driver describes the device with a
`DeviceInfo` (see `DeviceInfo.from_sycl_device`) and hands it over in
`PassOptions.device_info`. Without one, passes assume the Intel OpenCL CPU
device of the development machines (RUNTIME-NOTES §14).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DeviceInfo:
    """Limits that decide work-group size and local-memory layout."""

    subgroup_sizes: tuple[int, ...] = (4, 8, 16, 32, 64)
    max_work_group_size: int = 8192
    local_memory_size: int = 262144   # bytes per work-group
    is_cpu: bool = True

    @classmethod
    def from_sycl_device(cls, device: Any) -> "DeviceInfo":
        """Read the limits from a dpctl.SyclDevice (duck-typed; dpctl is not imported)."""
        return cls(
            subgroup_sizes=tuple(sorted(int(s) for s in device.sub_group_sizes)),
            max_work_group_size=int(device.max_work_group_size),
            local_memory_size=int(device.local_mem_size),
            is_cpu=bool(getattr(device, "is_cpu", False)),
        )


CPU_DEVICE = DeviceInfo()
"""The Intel OpenCL CPU runtime measured in RUNTIME-NOTES §14."""


def device_of(options: Any) -> DeviceInfo:
    """The options' device, or the CPU device when the driver gave none."""
    info = getattr(options, "device_info", None)
    if info is None:
        return CPU_DEVICE
    if not isinstance(info, DeviceInfo):
        raise TypeError(f"PassOptions.device_info must be a tinyc.target.device_info.DeviceInfo, "
                        f"got {type(info).__name__}")
    return info
