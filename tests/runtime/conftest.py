"""Fixtures for runtime tests: the hand-written SPIR-V kernels, built once.

The module is assembled with spirv-as, validated with spirv-val and built once
per session (the program cache makes every Kernel over the same bytes share
one build). The `device` fixture (tests/conftest.py) skips without a
SPIR-V capable device.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from runtime_testlib import SIGNATURES, assemble, info

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def queue(device):
    """tinyc's cached queue on the selected device."""
    from tinyc.runtime.device import select_queue

    return select_queue(device)


@pytest.fixture(scope="session")
def spirv(tmp_path_factory) -> bytes:
    return assemble((HERE / "kernels.spvasm").read_text(), tmp_path_factory.mktemp("spv"))


@pytest.fixture(scope="session", params=["by-address", "copied"])
def kernels(request, queue, spirv):
    """Every test kernel, plus `axpy_w` (axpy whose X is marked written); NumPy data passed
    by address (the device reads host memory), and copied through device memory as on a
    device that does not."""
    from tinyc.runtime.kernel import Kernel

    made = {name: Kernel(spirv, info(name), queue) for name in SIGNATURES}
    made["axpy_w"] = Kernel(spirv, info("axpy", X={"written": True}), queue)
    for kernel in made.values():
        kernel.host_pointers = kernel.host_pointers and request.param == "by-address"
    return made


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)
