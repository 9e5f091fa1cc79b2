"""The on-disk cache of tuned schedules.

One JSON file per kernel and device under `<cache dir>/schedules/`. The
cache directory is `$TINYC_CACHE_DIR` if set (tests point it at a temporary
directory), else the user's cache directory (platformdirs: `~/.cache/tinyc`
on Linux). An entry is keyed by

- the kernel's source: the text of its checked IR (comments and layout do
  not matter; editing another kernel of the file does not either),
- the device's name and driver version,
- tinyc's version and the cache format,
- what the caller fixed: the given schedule of the kernel and a requested
  subgroup size (the tuner never changes those, so they shape its result).

A file that cannot be read or does not hold a valid entry is ignored with a
`TuningWarning` (and replaced by the next tuning of that kernel).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tinyc.disk_cache import CACHE_ENV, TuningWarning, cache_dir  # noqa: F401 (public here too)

FORMAT = 1
"""Bump when the meaning of a cached schedule changes."""


def schedules_dir() -> Path:
    return cache_dir() / "schedules"


def tinyc_version() -> str:
    from tinyc.version import __version__

    return __version__


@dataclass(frozen=True)
class CacheKey:
    """What a tuned schedule depends on."""

    kernel: str            # the kernel's name
    source: str            # its checked IR, printed
    device: str
    driver: str
    fixed: dict[str, Any] = field(default_factory=dict)  # knobs the caller fixed
    tinyc: str = field(default_factory=tinyc_version)
    format: int = FORMAT

    def digest(self) -> str:
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:40]

    def summary(self) -> dict[str, Any]:
        """The key as stored in the entry (the source by its hash)."""
        out = asdict(self)
        out["source"] = hashlib.sha256(self.source.encode()).hexdigest()
        return out


@dataclass
class Entry:
    """A tuned schedule and how it was found."""

    schedule: dict[str, Any]        # the kernel's knobs ({"subgroup_size": ..., "gemm#0": {...}})
    default_seconds: float          # measured time of the default schedule
    tuned_seconds: float            # measured time of the chosen one
    tuning_seconds: float           # wall time of the search
    batch: int
    candidates: int                 # schedules timed (the default not counted)
    space: int = 0                  # candidates the cost model ranked (the search space, pruned)
    ranking: list[dict[str, Any]] = field(default_factory=list)  # the fastest measured
    key: dict[str, Any] = field(default_factory=dict)
    created: str = ""


def path_of(key: CacheKey) -> Path:
    return schedules_dir() / f"{key.digest()}.json"


def load(key: CacheKey) -> Entry | None:
    """The cached entry, None when there is none; a corrupt file warns and is ignored."""
    path = path_of(key)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        warnings.warn(f"ignoring the tuned-schedule cache entry {path}: {exc}", TuningWarning,
                      stacklevel=3)
        return None
    try:
        data = json.loads(text)
        entry = Entry(**{k: data[k] for k in Entry.__dataclass_fields__ if k in data})
        if not isinstance(entry.schedule, dict) or data.get("key", {}).get("kernel") != key.kernel:
            raise ValueError("not an entry for this kernel")
        from tinyc.schedule import Schedule

        Schedule({key.kernel: entry.schedule}, str(path))  # knob names and ranges
    except Exception as exc:
        warnings.warn(f"ignoring the corrupt tuned-schedule cache entry {path} "
                      f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
                      TuningWarning, stacklevel=3)
        return None
    return entry


def store(key: CacheKey, entry: Entry) -> Path:
    """Write the entry atomically (a temporary file renamed into place)."""
    path = path_of(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    entry.key = key.summary()
    entry.created = time.strftime("%Y-%m-%d %H:%M:%S")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(asdict(entry), f, indent=2, sort_keys=True)
    os.replace(tmp, path)
    return path


def entries() -> list[Path]:
    directory = schedules_dir()
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def clear() -> int:
    """Delete every cached schedule; returns how many there were."""
    found = entries()
    for path in found:
        path.unlink(missing_ok=True)
    return len(found)
