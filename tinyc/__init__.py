"""tinyc: a compiler toolchain for the tiny tensor language (SPIR-V, OpenCL/SYCL).

    prog = tinyc.compile(source)
    prog["kernel"](*args, batch=1000)

Importing tinyc does not import dpctl; the runtime loads on the first launch.
"""

from tinyc.compiler import Program, compile
from tinyc.diagnostics import CompilationError, LaunchError

__all__ = ["CompilationError", "LaunchError", "Program", "compile", "Group", "TuningWarning"]


def __getattr__(name: str):
    """`tinyc.Group` lives in the runtime, `tinyc.TuningWarning` with the tuner's cache;
    load them only when asked for."""
    if name == "Group":
        from tinyc.runtime.arguments import Group

        return Group
    if name == "TuningWarning":
        from tinyc.tune.cache import TuningWarning

        return TuningWarning
    raise AttributeError(f"module 'tinyc' has no attribute '{name}'")
