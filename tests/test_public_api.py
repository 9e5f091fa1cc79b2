"""`dir(tinyc)` lists the public API (DESIGN.md), including the names that load lazily, and
listing them loads nothing: `import tinyc; dir(tinyc)` imports neither NumPy nor dpctl."""

from __future__ import annotations

import subprocess
import sys

import tinyc

DESIGN_NAMES = ["compile", "Program", "CompilationError", "CompilationWarning", "LaunchError", "BoundsError",
                "einsum", "contract", "Contraction", "builder", "recipes", "devices", "Devices", "Group",
                "distributed", "TuningWarning"]


def test_dir_lists_the_public_api():
    listed = dir(tinyc)
    assert listed == sorted(listed)
    for name in DESIGN_NAMES + tinyc.__all__:
        assert name in listed, name
        assert getattr(tinyc, name) is not None


def test_listing_the_api_loads_nothing():
    code = ("import sys, tinyc; names = dir(tinyc); "
            "assert 'einsum' in names and 'devices' in names; "
            "print(sorted(m for m in ('numpy', 'dpctl') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
