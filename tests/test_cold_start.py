"""`tinyc check`, `tinyc compile` and `tinyc fmt` start fast: they never load the runtime, dpctl,
NumPy or lark (the parser's tables are generated; see benchmarks/compile_speed.py
for the times)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# `cli`, not `main`: `main` ends `tinyc check` with os._exit, before the modules could be listed.
SCRIPT = """
import sys
from tinyc.cli import cli
sys.argv = ["tinyc", *sys.argv[1:]]
try:
    cli(prog_name="tinyc")
except SystemExit:
    pass
print(sorted({m for m in sys.modules if m.split(".")[0] in ("dpctl", "numpy", "lark")
              or m.startswith("tinyc.runtime") or m.split(".")[0] in ("pygls", "pygments")}),
      file=sys.stderr)
"""


@pytest.mark.parametrize("command", [["check", "samples/fused_kernel.ir"],
                                     ["compile", "samples/fused_kernel.ir", "-o", "{out}"],
                                     ["compile", "samples/dg_volume.ir", "--emit", "lowered", "-o", "-"],
                                     ["fmt", "--check", "samples/fused_kernel.ir"]])
def test_check_and_compile_import_no_runtime(command, tmp_path):
    args = [a.format(out=tmp_path / "k.spv") for a in command]
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *args], cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr
