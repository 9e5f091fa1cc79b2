"""Runtime: device selection, program cache, argument packing and launch.

Importing this package only points the OpenCL loader at the pip-installed
CPU runtime (see device.py); dpctl is imported on first use. The public
names load lazily so `tinyc check` does not pay for them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from tinyc.runtime.device import ensure_opencl_icd
from tinyc.signature import KernelInfo, ParamInfo

ensure_opencl_icd()

_LAZY = {
    "Kernel": "tinyc.runtime.kernel",
    "PreparedCall": "tinyc.runtime.kernel",
    "Group": "tinyc.runtime.arguments",
    "BuildError": "tinyc.runtime.program_cache",
    "build_program": "tinyc.runtime.program_cache",
    "select_queue": "tinyc.runtime.device",
    "select_device": "tinyc.runtime.device",
    "list_devices": "tinyc.runtime.device",
    "DeviceInfo": "tinyc.runtime.device",
}

__all__ = ["KernelInfo", "ParamInfo", "ensure_opencl_icd", *_LAZY]


def __getattr__(name: str) -> Any:
    """Load `Kernel`, `Group`, ... on first access."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tinyc.runtime' has no attribute '{name}'")
    return getattr(import_module(module), name)
