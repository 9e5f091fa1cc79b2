"""tinyc: a compiler toolchain for the tiny tensor language (SPIR-V, OpenCL/SYCL).

    prog = tinyc.compile(source)
    prog["kernel"](*args, batch=1000)

Importing tinyc does not import dpctl; the runtime loads on the first launch.
It points the OpenCL loader at the pip-installed CPU runtime (OCL_ICD_FILENAMES,
unless set), so `import tinyc` before `import dpnp` makes the CPU device visible
to dpnp too.
"""

__version__ = "0.1.0"

from tinyc.opencl_loader import ensure_opencl_icd as _ensure_opencl_icd  # noqa: E402

_ensure_opencl_icd()

from tinyc.compiler import Program, compile  # noqa: E402
from tinyc.diagnostics import CompilationError, LaunchError  # noqa: E402

__all__ = ["CompilationError", "LaunchError", "Program", "compile", "Group"]


def __getattr__(name: str):
    """`tinyc.Group` lives in the runtime; load it only when asked for."""
    if name == "Group":
        from tinyc.runtime.arguments import Group

        return Group
    raise AttributeError(f"module 'tinyc' has no attribute '{name}'")
