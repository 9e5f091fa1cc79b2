"""tinyc: a compiler toolchain for the tiny tensor language (SPIR-V, OpenCL/SYCL).

    prog = tinyc.compile(source)
    prog["kernel"](*args, batch=1000)

Importing tinyc does not import dpctl; the runtime loads on the first launch.
"""

from tinyc.compiler import Program, compile
from tinyc.diagnostics import CompilationError, LaunchError

__all__ = ["CompilationError", "LaunchError", "Program", "compile", "Group", "Devices", "devices", "distributed"]

_RUNTIME = {  # public names that load the runtime (and dpctl) only when asked for
    "Group": "tinyc.runtime.arguments",
    "Devices": "tinyc.runtime.devices",
    "devices": "tinyc.runtime.devices",
}


def __getattr__(name: str):
    """`tinyc.Group`, `tinyc.devices`, ... live in the runtime; load them on first use."""
    from importlib import import_module

    if name in _RUNTIME:
        return getattr(import_module(_RUNTIME[name]), name)
    if name == "distributed":
        return import_module("tinyc.distributed")
    raise AttributeError(f"module 'tinyc' has no attribute '{name}'")
