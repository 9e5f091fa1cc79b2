"""tinyc: a compiler toolchain for the tiny tensor language (SPIR-V, OpenCL/SYCL).

    prog = tinyc.compile(source)
    prog["kernel"](*args, batch=1000)

Importing tinyc does not import dpctl; the runtime loads on the first launch.
"""

from tinyc.compiler import CompilationWarning, Program, compile
from tinyc.diagnostics import BoundsError, CompilationError, LaunchError

__all__ = ["BoundsError", "CompilationError", "CompilationWarning", "LaunchError", "Program", "compile", "Group"]


def __getattr__(name: str):
    """`tinyc.Group` lives in the runtime; load it only when asked for."""
    if name == "Group":
        from tinyc.runtime.arguments import Group

        return Group
    raise AttributeError(f"module 'tinyc' has no attribute '{name}'")
