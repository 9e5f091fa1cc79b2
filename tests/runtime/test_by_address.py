"""NumPy arrays passed by address where the device reads host memory: no copy in, no copy out.

The runtime's staging is the only place that copies host data to or from the
device; these tests watch it (as tests/device/test_dpnp.py does) and compare
every result with NumPy. The same launches with `host_pointers = False`
(the path of devices without system allocations) do copy, which shows the
watch works.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tinyc
import tinyc.runtime.staging as staging

REPO = Path(__file__).resolve().parents[2]
N = 23


@pytest.fixture(scope="module")
def fused(device):
    return tinyc.compile((REPO / "samples" / "fused_kernel.ir").read_text(), device=device)["fused_kernel"]


@pytest.fixture
def copies(monkeypatch) -> list[str]:
    moved: list[str] = []
    original = staging.Staging.__init__

    def spy(self, *args, **kwargs):
        moved.append("staging")
        original(self, *args, **kwargs)

    monkeypatch.setattr(staging.Staging, "__init__", spy)
    return moved


def _inputs(rng, stacked=False):
    A = rng.standard_normal((16, 8, N)).astype(np.float32, order="F")
    B = np.asfortranarray(rng.standard_normal((8, 8)).astype(np.float32))
    C = np.asfortranarray(rng.standard_normal((8, 16)).astype(np.float32))
    D = np.asfortranarray(rng.standard_normal((16, 16, N)).astype(np.float32))
    want = D + 0.5 * np.einsum("ikb,jk,jl->ilb", A, B, C)
    group = A if stacked else [np.asfortranarray(A[:, :, i]) for i in range(N)]
    return group, B, C, D, want


@pytest.mark.parametrize("stacked", [False, True], ids=["list", "stacked"])
def test_numpy_arguments_go_by_address(fused, copies, stacked):
    assert fused.host_pointers  # this CPU device reads host memory
    group, B, C, D, want = _inputs(np.random.default_rng(1), stacked)
    address = D.__array_interface__["data"][0]
    fused(np.float32(0.5), group, B, C, D, batch=N)
    assert copies == []
    assert D.__array_interface__["data"][0] == address
    np.testing.assert_allclose(D, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stacked", [False, True], ids=["list", "stacked"])
def test_the_same_launch_copies_where_the_device_cannot_read_host_memory(fused, copies, stacked):
    group, B, C, D, want = _inputs(np.random.default_rng(2), stacked)
    fused.host_pointers = False
    try:
        fused(np.float32(0.5), group, B, C, D, batch=N)
    finally:
        fused.host_pointers = True
    assert copies
    np.testing.assert_allclose(D, want, rtol=1e-5, atol=1e-5)


def test_a_view_is_written_in_place(fused, copies):
    """The output is a slice of a larger array: only its entries change."""
    group, B, C, _, _ = _inputs(np.random.default_rng(3))
    big = np.asfortranarray(np.random.default_rng(4).standard_normal((16, 16, N + 9)).astype(np.float32))
    before = big.copy()
    view = big[:, :, 5:5 + N]
    want = view + 0.5 * np.einsum("ikb,jk,jl->ilb", np.stack(group, axis=-1), B, C)
    fused(np.float32(0.5), group, B, C, view, batch=N)
    assert copies == []
    np.testing.assert_allclose(big[:, :, 5:5 + N], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(big[:, :, :5], before[:, :, :5])
    np.testing.assert_array_equal(big[:, :, 5 + N:], before[:, :, 5 + N:])


def test_read_only_inputs_are_read_and_a_read_only_output_is_refused(fused):
    group, B, C, D, want = _inputs(np.random.default_rng(5))
    for member in group:
        member.flags.writeable = False
    B.flags.writeable = False
    fused(np.float32(0.5), group, B, C, D, batch=N)
    np.testing.assert_allclose(D, want, rtol=1e-5, atol=1e-5)
    D.flags.writeable = False
    with pytest.raises(tinyc.LaunchError, match="argument 'D'.*read-only"):
        fused(np.float32(0.5), group, B, C, D, batch=N)


def test_list_members_changed_between_calls_are_read_again(fused):
    """The same list launched twice: a member replaced, and another member's data, are seen."""
    group, B, C, D, _ = _inputs(np.random.default_rng(6))
    D0 = D.copy()
    fused(np.float32(0.5), group, B, C, D, batch=N)
    group[3] = np.asfortranarray(group[3] * 2)
    group[7][...] = 1.0
    D[...] = D0
    fused(np.float32(0.5), group, B, C, D, batch=N)
    want = D0 + 0.5 * np.einsum("ikb,jk,jl->ilb", np.stack(group, axis=-1), B, C)
    np.testing.assert_allclose(D, want, rtol=1e-5, atol=1e-5)
    group[5] = group[5].astype(np.float64)
    with pytest.raises(tinyc.LaunchError, match="member 5.*float64"):
        fused(np.float32(0.5), group, B, C, D, batch=N)
