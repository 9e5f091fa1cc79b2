"""tinyc: a compiler toolchain for the tiny tensor language (SPIR-V, OpenCL/SYCL).

    prog = tinyc.compile(source)
    prog["kernel"](*args, batch=1000)

Importing tinyc does not import dpctl; the runtime loads on the first launch.
"""

from tinyc.compiler import Program, compile
from tinyc.diagnostics import CompilationError, LaunchError

__all__ = ["CompilationError", "LaunchError", "Program", "compile", "Group", "einsum", "contract",
           "Contraction", "builder", "recipes"]

_LAZY = {
    "Group": ("tinyc.runtime.arguments", "Group"),
    "einsum": ("tinyc.contractions", "einsum"),
    "contract": ("tinyc.contractions", "contract"),
    "Contraction": ("tinyc.contractions", "Contraction"),
    "builder": ("tinyc.builder", None),
    "recipes": ("tinyc.recipes", None),
}


def __getattr__(name: str):
    """The runtime (Group), einsum/contract (NumPy), the builder and the recipes load when
    first asked for, so `tinyc check` and `tinyc compile` import neither NumPy nor dpctl."""
    if name in _LAZY:
        import importlib

        module_name, attribute = _LAZY[name]
        module = importlib.import_module(module_name)
        value = module if attribute is None else getattr(module, attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tinyc' has no attribute '{name}'")
