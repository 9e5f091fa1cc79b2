"""Where tinyc keeps what it learns across processes, and how an entry is read and written.

Every on-disk cache (tuned schedules, device binaries, device facts, compiled
modules) lives under one directory: `$TINYC_CACHE_DIR` if set (tests point it
at a temporary directory), else the user's cache directory (platformdirs:
`~/.cache/tinyc` on Linux). Entries are written atomically (a temporary file
renamed into place), so a reader sees a whole entry or none; an entry that
cannot be read or parsed is ignored with a `TuningWarning`, never an error.

Only the standard library is imported here: the device and compile caches are
read on the way to a process's first result, before anything else is loaded.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
import zlib
from pathlib import Path
from typing import Any

CACHE_ENV = "TINYC_CACHE_DIR"


class TuningWarning(UserWarning):
    """Something about tuning or tinyc's on-disk caches that the user should know, but not an
    error (a corrupt entry ignored, a stale binary rebuilt)."""


def cache_dir() -> Path:
    """`$TINYC_CACHE_DIR`, else the platform's user cache directory for tinyc.

    On Linux that is the XDG rule, written out: importing platformdirs took
    3-20 ms of a process's first result (a test keeps the two equal).
    """
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        return Path(xdg or os.path.expanduser("~/.cache")) / "tinyc"
    import platformdirs

    return Path(platformdirs.user_cache_dir("tinyc"))


_fingerprint: list[str] = []


def tinyc_version() -> str:
    """tinyc's version and a fingerprint of its code (each module's path, size and mtime).

    The fingerprint makes an edited checkout (the version stays the same between
    releases) miss every cache entry made by other code; it costs one `stat` per
    module, once per process.
    """
    if not _fingerprint:
        from tinyc.version import __version__

        root = Path(__file__).resolve().parent
        listing = []
        for directory, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".lark")):
                    stat = os.stat(os.path.join(directory, name))
                    listing.append(f"{directory}/{name}\0{stat.st_size}\0{stat.st_mtime_ns}")
        _fingerprint.append(f"{__version__}+{checksum(chr(0).join(listing).encode())}")
    return _fingerprint[0]


def checksum(data: bytes) -> str:
    """64 bits of checksum. Not cryptographic, and need not be: every entry stores its whole
    key and a reader compares it, so two keys with one digest only share a file (hashlib
    would load OpenSSL, milliseconds on the way to a first result)."""
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def key_digest(fields: dict[str, Any]) -> str:
    """A file name for an entry: the digest of its key (JSON, sorted keys)."""
    return checksum(json.dumps(fields, sort_keys=True, default=str).encode())


def ignore(path: Path, why: str, stacklevel: int = 3) -> None:
    """Warn that a cache entry is unusable (it is then rebuilt and replaced)."""
    warnings.warn(f"ignoring the cache entry {path}: {why}", TuningWarning, stacklevel=stacklevel + 1)


def read_json(path: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    """The entry at `path` if it holds a JSON object stored under exactly `key`; None if there
    is none. A file that cannot be read or holds anything else warns and gives None."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):  # no entry (or no cache directory)
        return None
    except (OSError, UnicodeDecodeError) as exc:
        ignore(path, str(exc))
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        ignore(path, f"not JSON ({exc})")
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        ignore(path, "not an entry for this key")
        return None
    return data


def write_json(path: Path, key: dict[str, Any], data: dict[str, Any]) -> None:
    """Store `data` under `key` atomically; a read-only or full directory is not an error."""
    write_bytes(path, json.dumps({**data, "key": key}, sort_keys=True).encode())


def write_bytes(path: Path, blob: bytes) -> bool:
    """Write `blob` atomically (a temporary file renamed into place); False if it failed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return False  # costs the work again next time, nothing else
    return True


def prune_after(stored: Path, pattern: str, max_bytes: int) -> None:
    """`prune` after one store in sixteen (which ones: by the entry's checksum name), so that
    a cache of many small entries does not list its directory on every store."""
    if stored.stem.endswith("0"):
        prune(stored.parent, pattern, max_bytes)


def prune(directory: Path, pattern: str, max_bytes: int) -> None:
    """Delete the least recently used entries beyond `max_bytes` (readers touch what they use)."""
    try:
        files = sorted(directory.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True)
        total = 0
        for f in files:
            total += f.stat().st_size
            if total > max_bytes:
                f.unlink(missing_ok=True)
    except OSError:
        pass  # another process pruned at the same time


def clear(subdirectory: str, pattern: str) -> int:
    """Delete the entries of one cache; returns how many there were."""
    directory = cache_dir() / subdirectory
    found = list(directory.glob(pattern)) if directory.is_dir() else []
    for path in found:
        path.unlink(missing_ok=True)
    return len(found)
