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


def test_a_member_resized_in_place_is_checked_again(fused):
    """`resize(refcheck=False)` moves a member's data within the same object (NumPy calls it
    unsafe; the group's cached plan holds a reference, so only this resize can): the launch
    sees the moved pointer and checks every member again, so the new shape is refused."""
    group, B, C, D, want = _inputs(np.random.default_rng(7))
    group[11] = group[11].copy(order="F")  # owns its data: resize may move it
    fused(np.float32(0.5), group, B, C, D, batch=N)
    np.testing.assert_allclose(D, want, rtol=1e-5, atol=1e-5)
    before = group[11].__array_interface__["data"][0]
    group[11].resize((16, 8 << 17), refcheck=False)  # 64 MB: past the heap, so it moves (mmap)
    assert group[11].__array_interface__["data"][0] != before
    D0 = D.copy()
    with pytest.raises(tinyc.LaunchError, match=r"member 11"):
        fused(np.float32(0.5), group, B, C, D, batch=N)
    np.testing.assert_array_equal(D, D0)  # nothing ran


def test_where_arrays_are_copied_only_what_the_kernel_touches(device, monkeypatch):
    """Copying path: an array the kernel only asks the size of is not copied in or out; one it
    reads is copied in only; one it writes is copied in (it may be written in part) and back."""
    program = tinyc.compile("""
func @k(%S: memref<f32x?>, %R: memref<f32x?>, %W: memref<f32x?>) {
  %g = builtin.group_id : index
  %n = size %S[0] : index
  %m = cast %n : f32
  %v = load %R[%g] : f32
  %w = arith.add %v, %m : f32
  store %w, %W[%g]
}""")
    k = program["k"]
    assert [(p.read, p.written) for p in k.info.params] == [(False, False), (True, False), (False, True)]
    added: list[int] = []
    original = staging.Staging.add

    def spy(self, array, *args, **kwargs):
        added.append(array.size)
        return original(self, array, *args, **kwargs)

    monkeypatch.setattr(staging.Staging, "add", spy)
    S, R, W = np.zeros(7, np.float32), np.arange(3, dtype=np.float32), np.zeros(3, np.float32)
    k.host_pointers = False
    k(S, R, W)
    assert sorted(added) == [3, 3]  # R and W, not S
    np.testing.assert_array_equal(W, R + 7)
