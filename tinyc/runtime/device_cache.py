"""What tinyc learns about a device, kept on disk: SPIR-V acceptance, limits, subgroup sizes.

Whether a device builds SPIR-V is only known by building a probe program, a
JIT build of 100-300 ms that every process paid before its first result. The
answer, and the limits the passes read (tinyc.target.device_info), are stored
per device in `<cache dir>/devices/` and keyed by

- the device: backend, type, vendor and name,
- its driver version,
- tinyc's version and code (`disk_cache.tinyc_version`),

so another device, a driver update or another tinyc asks the device again.
An unreadable or malformed entry is ignored with a `TuningWarning` and
replaced. Sub-devices use their root device's entry for the SPIR-V answer
(a sub-device builds what its device builds) but read their limits from the
driver, which is cheap (microseconds) and may differ from the root's.
"""

from __future__ import annotations

import threading
from typing import Any

from tinyc import disk_cache
from tinyc.target.device_info import sycl_limits

FORMAT = 1
"""Bump when the meaning of an entry changes."""
SUBDIRECTORY = "devices"

_lock = threading.Lock()
_known: dict[tuple, dict[str, Any]] = {}  # the key's items -> entry, for this process

LIMITS = ("subgroup_sizes", "max_work_group_size", "local_mem_size", "is_cpu", "native_vector_width_float")
"""The device properties an entry keeps (tinyc.target.device_info.sycl_limits)."""


def device_key(device: Any) -> dict[str, Any]:
    """The fields an entry is keyed by."""
    return {"backend": device.backend.name, "type": device.device_type.name,
            "vendor": str(device.vendor), "name": str(device.name),
            "driver": str(device.driver_version), "tinyc": disk_cache.tinyc_version(),
            "format": FORMAT}


def _valid(entry: dict[str, Any]) -> bool:
    limits = entry.get("limits")
    return (isinstance(entry.get("spirv"), bool) and isinstance(limits, dict)
            and set(limits) == set(LIMITS)
            and isinstance(limits["subgroup_sizes"], list)
            and all(type(s) is int and s > 0 for s in limits["subgroup_sizes"])
            and all(type(limits[k]) is int and limits[k] > 0
                    for k in ("max_work_group_size", "local_mem_size", "native_vector_width_float"))
            and isinstance(limits["is_cpu"], bool))


def entry(device: Any, probe: Any) -> dict[str, Any]:
    """The entry of a root device: from this process, else from disk, else asked now
    (`probe(device)` answers whether it builds SPIR-V) and stored."""
    key = device_key(device)
    known = tuple(sorted(key.items()))
    with _lock:
        found = _known.get(known)
    if found is not None:
        return found
    # No lock held while probing (the probe takes the runtime's queue lock); two threads
    # may both probe the first time, and agree.
    path = disk_cache.cache_dir() / SUBDIRECTORY / f"{disk_cache.key_digest(key)}.json"
    found = disk_cache.read_json(path, key)
    if found is not None:
        if _valid(found):
            found = {"spirv": found["spirv"], "limits": found["limits"]}
        else:
            disk_cache.ignore(path, "malformed entry", stacklevel=2)
            found = None
    if found is None:
        found = {"spirv": bool(probe(device)), "limits": sycl_limits(device)}
        disk_cache.write_json(path, key, found)
    with _lock:
        return _known.setdefault(known, found)


def forget() -> None:
    """Drop what this process remembers (the disk entries stay)."""
    with _lock:
        _known.clear()


def clear() -> int:
    """Delete every stored device entry; returns how many there were."""
    forget()
    return disk_cache.clear(SUBDIRECTORY, "*.json")
