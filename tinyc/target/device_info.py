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
    vector_bytes: int = 64            # one SIMD register (AVX-512)
    vector_registers: int = 32        # SIMD registers per hardware thread

    @classmethod
    def from_sycl_device(cls, device: Any) -> "DeviceInfo":
        """Read the limits from a dpctl.SyclDevice (duck-typed; dpctl is not imported)."""
        return cls.from_limits(sycl_limits(device))

    @classmethod
    def from_limits(cls, limits: dict[str, Any]) -> "DeviceInfo":
        """From the properties `sycl_limits` reads (as the runtime's device cache keeps them)."""
        vector_bytes = 4 * limits["native_vector_width_float"]
        return cls(
            subgroup_sizes=tuple(sorted(limits["subgroup_sizes"])),
            max_work_group_size=limits["max_work_group_size"],
            local_memory_size=limits["local_mem_size"],
            is_cpu=limits["is_cpu"],
            vector_bytes=vector_bytes,
            vector_registers=vector_registers(vector_bytes),
        )

    def registers_per_value(self, size: int, subgroup_size: int) -> int:
        """SIMD registers that hold one per-lane value of `size` bytes across a subgroup.

        The CPU runtime vectorizes across the lanes of a subgroup, so a value
        of a subgroup of S lanes is S·size bytes: ⌈S·size / vector_bytes⌉ registers.
        """
        return max(1, -(-size * subgroup_size // self.vector_bytes))


def sycl_limits(device: Any) -> dict[str, Any]:
    """The properties of a dpctl.SyclDevice that DeviceInfo is made of (JSON-ready; named as
    dpctl names them)."""
    return {"subgroup_sizes": sorted(int(s) for s in device.sub_group_sizes),
            "max_work_group_size": int(device.max_work_group_size),
            "local_mem_size": int(device.local_mem_size),
            "is_cpu": bool(getattr(device, "is_cpu", False)),
            "native_vector_width_float": int(getattr(device, "native_vector_width_float", 16) or 16)}


def vector_registers(vector_bytes: int) -> int:
    """x86: 32 zmm registers with AVX-512, 16 xmm/ymm registers below it.

    (`native_vector_width_float` is 16 on AVX-512 and 8 on AVX2 machines; GPUs
    report other widths, where the register count is a rough stand-in.)
    """
    return 32 if vector_bytes >= 64 else 16


CPU_DEVICE = DeviceInfo()
"""The Intel OpenCL CPU runtime measured in RUNTIME-NOTES §14 (an AVX-512 machine)."""


def device_of(options: Any) -> DeviceInfo:
    """The options' device, or the CPU device when the driver gave none."""
    info = getattr(options, "device_info", None)
    if info is None:
        return CPU_DEVICE
    if not isinstance(info, DeviceInfo):
        raise TypeError(f"PassOptions.device_info must be a tinyc.target.device_info.DeviceInfo, "
                        f"got {type(info).__name__}")
    return info
