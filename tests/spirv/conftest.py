"""Fixtures for the SPIR-V tests."""

import pytest

from spirv_testlib import Device, device_or_skip


@pytest.fixture(scope="session")
def device() -> Device:
    """The Intel CPU OpenCL device (tests skip without it)."""
    return device_or_skip()
