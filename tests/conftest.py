"""Shared test setup: the SPIR-V device, and the rule that CI must not skip device tests."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

REQUIRE_DEVICE = os.environ.get("TINYC_REQUIRE_DEVICE") == "1"

# Tests never read or write the user's cache of tuned schedules (tinyc/tune/cache.py):
# the whole session, subprocesses included, uses a fresh directory.
_CACHE_DIR = tempfile.mkdtemp(prefix="tinyc-test-cache-")
os.environ["TINYC_CACHE_DIR"] = _CACHE_DIR
_skipped_device_tests: list[str] = []


def _find_device():
    try:
        from tinyc.runtime.device import select_device

        return select_device()
    except Exception as exc:  # any failure means: no usable device here
        return exc


@pytest.fixture(scope="session")
def device():
    """The SPIR-V capable SYCL device; skips (or fails under CI) when there is none."""
    found = _find_device()
    if isinstance(found, Exception):
        message = f"no SPIR-V capable SYCL device: {found}"
        if REQUIRE_DEVICE:
            pytest.fail(message + " (TINYC_REQUIRE_DEVICE=1: device tests must run)")
        pytest.skip(message)
    return found


def pytest_collection_modifyitems(config, items):
    """Tests that use the `device` fixture carry the `device` marker."""
    for item in items:
        if "device" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.device)


def pytest_runtest_logreport(report):
    if report.skipped and "device" in report.keywords and not hasattr(report, "wasxfail"):
        _skipped_device_tests.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    """Under CI a skipped device test is a failure: the device is installed from PyPI."""
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)
    if REQUIRE_DEVICE and _skipped_device_tests:
        print(f"\n{len(_skipped_device_tests)} device tests were skipped; failing "
              "because TINYC_REQUIRE_DEVICE=1:")
        for node in _skipped_device_tests[:20]:
            print("  ", node)
        session.exitstatus = 1
