"""MPI tests: every test is collective over MPI_COMM_WORLD.

`python -m pytest tests` runs them on one rank (MPI as a singleton: root
scatters to itself); CI also runs `mpiexec -n 2 python -m pytest
tests/distributed`, where both ranks run the same tests in the same order.
A test raises on one rank only after its last collective, so a failure never
leaves the other rank waiting. Without mpi4py (the `mpi` extra) they skip,
except under TINYC_REQUIRE_DEVICE=1 (CI), where that is a failure.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sharding"))  # the kernels of sharding_testlib


@pytest.fixture(scope="session")
def comm(device):
    try:
        from mpi4py import MPI
    except ImportError as exc:
        if os.environ.get("TINYC_REQUIRE_DEVICE") == "1":
            pytest.fail(f"mpi4py is not installed (pip install '.[mpi]'): {exc}")
        pytest.skip(f"mpi4py is not installed (pip install '.[mpi]'): {exc}")
    return MPI.COMM_WORLD


@pytest.fixture(scope="session")
def local(comm):
    """This rank's device and its queue."""
    import tinyc

    return tinyc.Devices([tinyc.distributed.local_device(comm)])


@pytest.fixture(scope="session")
def programs(local):
    return {}
