"""Which failures are the user's and which are tinyc's: the narrow excepts.

`device_limits` falls back to the CPU defaults only when there is no device
(no dpctl, or no device that builds SPIR-V), and the CLI turns only its own
UsageError into exit code 2; anything else is a bug and stays visible.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import tinyc.runtime.device as runtime_device
from tinyc.cli import cli
from tinyc.cli.errors import UsageError
from tinyc.compiler import device_limits
from tinyc.diagnostics import LaunchError
from tinyc.target.device_info import CPU_DEVICE


def _raising(exc: BaseException):
    def select_device(device=None):
        raise exc
    return select_device


@pytest.mark.parametrize("exc", [LaunchError("no SYCL device accepts SPIR-V"), ImportError("dpctl")])
def test_no_device_means_cpu_defaults(monkeypatch, exc):
    monkeypatch.setattr(runtime_device, "select_device", _raising(exc))
    assert device_limits(None) is CPU_DEVICE


def test_a_requested_device_that_fails_is_an_error(monkeypatch):
    monkeypatch.setattr(runtime_device, "select_device", _raising(LaunchError("no such device")))
    with pytest.raises(LaunchError, match="no such device"):
        device_limits("level_zero:gpu:7")


@pytest.mark.parametrize("exc", [RuntimeError("driver crashed"), AttributeError("sub_group_sizes"),
                                 ValueError("bad")])
def test_other_device_errors_are_not_hidden(monkeypatch, exc):
    monkeypatch.setattr(runtime_device, "select_device", _raising(exc))
    with pytest.raises(type(exc)):
        device_limits(None)


def _run_with(monkeypatch, exc: BaseException):
    import tinyc.cli.run as run_module

    def run_kernel(*args, **kwargs):
        raise exc

    monkeypatch.setattr(run_module, "run_kernel", run_kernel)
    return CliRunner().invoke(cli, ["run", "samples/fused_kernel.ir"])


def test_a_usage_error_exits_2(monkeypatch):
    result = _run_with(monkeypatch, UsageError("--size expects NAME=VALUE, got 'oops'"))
    assert result.exit_code == 2
    assert "--size expects NAME=VALUE, got 'oops'" in result.stderr


def test_a_value_error_is_not_a_usage_error(monkeypatch):
    """A bug is an internal error (exit 3) that names the exception, not bad input."""
    result = _run_with(monkeypatch, ValueError("a bug deep inside"))
    assert result.exit_code == 3
    assert "internal error: ValueError: a bug deep inside" in result.stderr
    assert "Traceback" not in result.stderr
