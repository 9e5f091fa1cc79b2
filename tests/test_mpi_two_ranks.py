"""The MPI tests once more over two ranks, as `mpiexec -n 2` runs them.

`tests/distributed` runs on one rank inside this session (MPI as a
singleton); this test starts the same tests over two ranks with the
mpiexec of the `mpich` wheel, so that the README's one test command covers
the scatter/gather paths between ranks too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _mpiexec() -> Path | None:
    """The mpich wheel's mpiexec: in this environment's scripts, or in the base
    environment's (a virtual environment that sees the system's packages)."""
    for scripts in (sysconfig.get_path("scripts"),
                    sysconfig.get_path("scripts", vars={"base": sys.base_prefix})):
        candidate = Path(scripts) / "mpiexec"
        if candidate.exists():
            return candidate
    return None


def test_distributed_tests_pass_over_two_ranks():
    mpiexec = _mpiexec()
    if mpiexec is None:
        if os.environ.get("TINYC_REQUIRE_DEVICE") == "1":
            pytest.fail("mpiexec of the mpich wheel is missing (pip install '.[mpi]')")
        pytest.skip("mpiexec of the mpich wheel is missing (pip install '.[mpi]')")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    proc = subprocess.run(
        [str(mpiexec), "-n", "2", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(ROOT / "tests" / "distributed")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert proc.stdout.count(" passed") == 2, proc.stdout[-2000:]  # one summary per rank
