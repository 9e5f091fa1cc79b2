"""Compiled modules kept on disk, so a new process's `tinyc.compile` of a program compiled
before skips the front end, the passes and codegen (and their imports).

With the device facts (runtime/device_cache.py) and the device binaries
(runtime/binary_cache.py) also on disk, a process reaches its first result
from the caches alone. An entry holds the whole CompileResult but the IR
objects (SPIR-V, kernel signatures, the IR text of each stage, warnings,
schedules) and is keyed by everything the compilation reads:

- the source text, its name (diagnostics quote it), `std`, `defines`,
  `subgroup_size` and the warning options (`warnings=`: which are reported,
  which are errors);
- the target: the device's limits (tinyc.target.device_info.DeviceInfo) and,
  when there is a device, its name and driver (tuned schedules are per device);
- the tuned schedules: the name, size and modification time of every file in
  the schedules cache (tinyc/tune/cache.py), so tuning anything recompiles;
- tinyc's version and code (disk_cache.tinyc_version).

Calls with a `schedule=` or `tune=True` compile as before, uncached. The
bounds-checked variant of a cached program (compiled when a kernel first runs
checked) is kept the same way (`checked_variant`). An entry
that cannot be read is ignored with a `TuningWarning` and replaced.
`TINYC_COMPILE_CACHE=0` turns the cache off; `tinyc tune --clear` empties it.
On a hit, `Program.timings` holds one stage, "cache" (the lookup).
"""

from __future__ import annotations

import io
import os
import pickle
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from tinyc import disk_cache

ENV = "TINYC_COMPILE_CACHE"
KEYED = ("source", "name", "device", "subgroup_size", "std", "defines", "warnings", "fp_contract")
"""The parameters of `tinyc.compile` in the key (the source as text, the device as its limits,
name and driver); the others (`schedule`, `tune`) compile uncached. A test keeps this list
and `tinyc.compile`'s signature in step: a new parameter must join one or the other."""
UNCACHED = ("schedule", "tune")
FORMAT = 1
"""Bump when the meaning of an entry changes."""
SUBDIRECTORY = "modules"
SCHEDULES = "schedules"
"""The tuned schedules' subdirectory (tinyc.tune.cache.schedules_dir; a test keeps them equal)."""
MAX_BYTES = 64 << 20
"""The directory is pruned to this size, least recently used first."""


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0"


def _schedules_state() -> list[tuple[str, int, int]]:
    """What the tuned-schedule lookup could read: every entry's name, size and mtime."""
    try:
        with os.scandir(disk_cache.cache_dir() / SCHEDULES) as found:
            return sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in found)
    except (FileNotFoundError, NotADirectoryError):
        return []


def cache_key(text: str, name: str, device: Any, info: Any, subgroup_size: Any, std: Any,
              defines: Any, warnings: Any, fp_contract: bool = False) -> dict[str, Any]:
    """Everything a compilation without a given schedule depends on (`warnings`: the
    tinyc.lint.WarningOptions)."""
    return {"source": text, "name": name, "subgroup_size": subgroup_size, "fp_contract": fp_contract,
            "std": getattr(std, "value", std), "defines": defines,
            "warnings": [sorted(warnings.disabled), warnings.as_errors, warnings.silenced],
            "device": None if device is None else [str(device.name), str(device.driver_version)],
            "limits": repr(info), "schedules": _schedules_state(),
            "tinyc": disk_cache.tinyc_version(), "format": FORMAT}


class _Loader(pickle.Unpickler):
    """Loads tinyc's own classes (and the interning of IR types) and nothing else: an entry
    is data, and may not call anything else that a tinyc module happens to import."""

    def find_class(self, module: str, name: str) -> Any:
        if (module == "tinyc" or module.startswith("tinyc.")) and "." not in name:
            found = super().find_class(module, name)
            if isinstance(found, type) and found.__module__ == module:
                return found
            from tinyc.ir.types import _interned

            if found is _interned:
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not one of tinyc's classes")


class Entry:
    """Where the result of one compilation is (or will be) kept, and its key."""

    def __init__(self, key: dict[str, Any]) -> None:
        self.key = key
        self.path = disk_cache.cache_dir() / SUBDIRECTORY / f"{disk_cache.key_digest(key)}.pickle"


def lookup(text: str, name: str, device: Any, info: Any, subgroup_size: Any, std: Any,
           defines: Any, warnings: Any, fp_contract: bool = False) -> tuple[Any, Entry | None]:
    """(the stored CompileResult or None, the entry to `store` a fresh one in; None when
    the cache is off)."""
    if not enabled():
        return None, None
    start = time.perf_counter()
    entry = Entry(cache_key(text, name, device, info, subgroup_size, std, defines, warnings,
                            fp_contract))
    found = _load(entry.path, entry.key)
    if found is not None:
        found = replace(found, timings={"cache": time.perf_counter() - start})
    return found, entry


def checked_variant(result: Any, compile_now: Any) -> Any:
    """The bounds-checked variant of a compiled program (`Program._checked_kernel`): from the
    cache, else `compile_now()`'s, stored. Keyed like the program itself, with the tuned
    schedules it was compiled with instead of the state of their cache."""
    if not enabled() or result.given is not None:
        return compile_now()
    entry = Entry({"source": result.source, "name": result.name, "subgroup_size": result.subgroup_size,
                   "std": getattr(result.std, "value", result.std), "defines": result.defines,
                   "limits": repr(result.device_info), "tuned": result.tuned, "check_bounds": True,
                   "fp_contract": result.fp_contract,
                   "tinyc": disk_cache.tinyc_version(), "format": FORMAT})
    found = _load(entry.path, entry.key)
    if found is None:
        found = compile_now()
        store(entry, found)
    return found


def store(entry: Entry | None, result: Any) -> None:
    """Keep `result` for the next process (nothing without an entry)."""
    if entry is not None:
        _store(entry.path, entry.key, result)


def _load(path: Path, key: dict[str, Any]) -> Any:
    try:
        blob = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        disk_cache.ignore(path, str(exc))
        return None
    try:
        entry = _Loader(io.BytesIO(blob)).load()
        if not isinstance(entry, dict) or entry.get("key") != key or entry.get("result") is None:
            raise ValueError("not an entry for this key")
    except Exception as exc:  # any damage: compile again
        disk_cache.ignore(path, f"{type(exc).__name__}: {str(exc)[:200]}")
        return None
    try:
        os.utime(path)  # recently used: pruned last
    except OSError:
        pass
    return entry["result"]


def _store(path: Path, key: dict[str, Any], result: Any) -> None:
    try:
        blob = pickle.dumps({"key": key, "result": replace(result, ir=None)},
                            protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # something in the result that does not pickle: not cached
        return
    if disk_cache.write_bytes(path, blob):
        disk_cache.prune_after(path, "*.pickle", MAX_BYTES)


def clear() -> int:
    """Delete every stored module; returns how many there were."""
    return disk_cache.clear(SUBDIRECTORY, "*.pickle")
