"""tinyc: a compiler toolchain for the tiny tensor language (SPIR-V, OpenCL/SYCL).

    prog = tinyc.compile(source)
    prog["kernel"](*args, batch=1000)

Importing tinyc does not import dpctl; the runtime loads on the first launch.
It points the OpenCL loader at the pip-installed CPU runtime (OCL_ICD_FILENAMES,
unless set), so `import tinyc` before `import dpnp` makes the CPU device visible
to dpnp too.
"""

from tinyc.version import __version__  # noqa: F401 (public here)

from tinyc.opencl_loader import ensure_opencl_icd as _ensure_opencl_icd  # noqa: E402

_ensure_opencl_icd()

from tinyc.compiler import CompilationWarning, Program, compile  # noqa: E402
from tinyc.diagnostics import BoundsError, CompilationError, LaunchError  # noqa: E402

__all__ = ["BoundsError", "CompilationError", "CompilationWarning", "LaunchError", "Program", "compile",
           "Group", "Devices", "devices", "distributed", "einsum", "contract", "Contraction", "builder",
           "recipes", "TuningWarning"]

_RUNTIME = {  # public names that load the runtime (and dpctl) only when asked for
    "Group": "tinyc.runtime.arguments",
    "Devices": "tinyc.runtime.devices",
    "devices": "tinyc.runtime.devices",
    "TuningWarning": "tinyc.disk_cache",  # the tuner's and the on-disk caches' warnings
}
_LAZY = {  # name -> (module, attribute or None for the module itself)
    "einsum": ("tinyc.contractions", "einsum"),
    "contract": ("tinyc.contractions", "contract"),
    "Contraction": ("tinyc.contractions", "Contraction"),
    "builder": ("tinyc.builder", None),
    "recipes": ("tinyc.recipes", None),
}


def __dir__() -> list[str]:
    """The public API (what `__all__` lists, loaded lazily or not) and the module's own names,
    so `dir(tinyc)` and editors' completion show einsum, contract, devices, ... too."""
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str):
    """`tinyc.Group`, `tinyc.devices`, ... live in the runtime; einsum/contract (NumPy), the
    builder and the recipes load on first use too, so `tinyc check` and `tinyc compile`
    import neither NumPy nor dpctl."""
    from importlib import import_module

    if name in _RUNTIME:
        value = getattr(import_module(_RUNTIME[name]), name)
    elif name in _LAZY:
        module_name, attribute = _LAZY[name]
        module = import_module(module_name)
        value = module if attribute is None else getattr(module, attribute)
    else:
        value = None
    if value is not None:
        globals()[name] = value   # loaded once: later lookups are plain attributes (einsum per call)
        return value
    if name == "distributed":
        return import_module("tinyc.distributed")
    raise AttributeError(f"module 'tinyc' has no attribute '{name}'")
