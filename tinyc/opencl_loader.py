"""Point the OpenCL loader at the pip-installed Intel CPU runtime, before dpctl loads.

pip installs `intel-opencl-rt` with an ICD file whose library path is a
placeholder, so the OpenCL loader finds the CPU device only when
`OCL_ICD_FILENAMES` names `<prefix>/lib/libintelocl.so`, and it reads that
variable once, when dpctl (or dpnp) is first imported. `import tinyc` calls
`ensure_opencl_icd()`, so `import tinyc` followed by `import dpnp` sees the
CPU device; the runtime calls it again before its own import of dpctl. A
value the user set is kept. Nothing else is imported here.
"""

from __future__ import annotations

import os
import sys
from typing import Any

ICD_VARIABLE = "OCL_ICD_FILENAMES"

icd_state: dict[str, Any] = {"set_by_tinyc": False, "dpctl_was_loaded": False}


def prefix_library(name: str) -> str:
    """`<prefix>/lib/<name>` for the prefix pip installed it into: this environment's or,
    in a virtual environment that sees the system's packages (`--system-site-packages`),
    the one its site-packages belong to. The first candidate if none has it."""
    prefixes = [sys.prefix, sys.base_prefix]
    for entry in sys.path:  # <prefix>/lib/pythonX.Y/site-packages -> <prefix>
        if entry.endswith("site-packages"):
            prefixes.append(os.path.dirname(os.path.dirname(os.path.dirname(entry))))
    candidates = [os.path.join(prefix, "lib", name) for prefix in dict.fromkeys(prefixes)]
    return next((path for path in candidates if os.path.exists(path)), candidates[0])


def icd_library() -> str:
    """Where pip put the Intel OpenCL CPU runtime."""
    return prefix_library("libintelocl.so")


def ensure_opencl_icd() -> None:
    """Set OCL_ICD_FILENAMES to the pip CPU runtime unless the user set it."""
    if os.environ.get(ICD_VARIABLE) or icd_state["set_by_tinyc"]:
        return
    if os.path.exists(icd_library()):
        os.environ[ICD_VARIABLE] = icd_library()
        icd_state["set_by_tinyc"] = True
        icd_state["dpctl_was_loaded"] = "dpctl" in sys.modules
