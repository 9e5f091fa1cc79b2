"""The recipes compose with the rest of the launch path: device= lists, `tinyc.Devices` and
sub-devices (the batch split over them), `check_bounds=True`, and dpnp arrays; every result
against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.runtime import sharding
from tinyc.runtime.kernel import Kernel

rng = np.random.default_rng(21)


def fortran(*shape):
    return np.asfortranarray(rng.standard_normal(shape))


@pytest.fixture
def launches(monkeypatch):
    """Records (batch, device=) of every split launch and every bounds-checked call."""
    seen = {"split": [], "checked": 0}
    split, checked = sharding.launch, Kernel._call_checked
    monkeypatch.setattr(sharding, "launch", lambda k, args, batch, where, weights:
                        seen["split"].append((batch, where)) or split(k, args, batch, where, weights))

    def counting(self, *args, **kwargs):
        seen["checked"] += 1
        return checked(self, *args, **kwargs)

    monkeypatch.setattr(Kernel, "_call_checked", counting)
    return seen


def test_small_gemm_batched_over_sub_devices_and_lists(device, launches):
    devices = tinyc.devices(device.filter_string, split=True)
    for where in (devices, list(devices.queues)):
        r = tinyc.recipes.small_gemm_batched("f64", "n", "t", 6, 5, 4, 6, 24, 5, 20, 6, 30, device=where)
        A, B, C = fortran(6, 4, 33), fortran(5, 4, 33), fortran(6, 5, 33)
        want = 0.5 * np.einsum("mkb,nkb->mnb", A, B) - C
        r(0.5, A, B, -1.0, C)
        assert np.abs(C - want).max() <= 1e-12 * np.abs(want).max()
        assert launches["split"][-1] == (33, where)


def test_tall_and_skinny_over_devices(device, launches):
    devices = tinyc.devices(device.filter_string, split=True)
    t = tinyc.recipes.tall_and_skinny("f64", 3, 5, M_block=16, device=devices)
    A, B, C = fortran(100, 5), fortran(5, 3), fortran(100, 3)
    want = 2.0 * A @ B
    t(2.0, A, B, 0.0, C)
    assert np.abs(C - want).max() <= 1e-12 * np.abs(want).max()
    assert launches["split"][-1] == (7, devices)   # ceil(100 / 16) work-groups


def test_check_bounds(device, launches):
    r = tinyc.recipes.small_gemm_batched("f32", "n", "n", 4, 4, 4, 4, 16, 4, 16, 4, 16)
    A, B = fortran(4, 4, 8).astype(np.float32, order="F"), fortran(4, 4, 8).astype(np.float32, order="F")
    C = np.zeros((4, 4, 8), np.float32, order="F")
    r(1.0, A, B, 0.0, C, check_bounds=True)
    assert launches["checked"] == 1
    assert np.abs(C - np.einsum("mkb,knb->mnb", A, B)).max() < 1e-4
    t = tinyc.recipes.tall_and_skinny("f32", 2, 3, M_block=8)
    A2, B2 = fortran(20, 3).astype(np.float32, order="F"), fortran(3, 2).astype(np.float32, order="F")
    C2 = np.zeros((20, 2), np.float32, order="F")
    t(1.0, A2, B2, 0.0, C2, check_bounds=True)
    assert launches["checked"] == 2
    assert np.abs(C2 - A2 @ B2).max() < 1e-4


def test_dpnp_arrays(device):
    dpnp = pytest.importorskip("dpnp")
    r = tinyc.recipes.small_gemm_batched("f64", "n", "n", 5, 3, 4, 5, 20, 4, 12, 5, 15)
    A, B, C = fortran(5, 4, 7), fortran(4, 3, 7), np.zeros((5, 3, 7), order="F")
    dA, dB, dC = (dpnp.asarray(x, order="F") for x in (A, B, C))
    r(1.0, dA, dB, 0.0, dC)
    want = np.einsum("mkb,knb->mnb", A, B)
    assert np.abs(dpnp.asnumpy(dC) - want).max() <= 1e-12 * np.abs(want).max()
    t = tinyc.recipes.tall_and_skinny("f64", 3, 4, M_block=8)
    A2, B2 = fortran(30, 4), fortran(4, 3)
    dA2, dB2, dC2 = (dpnp.asarray(x, order="F") for x in (A2, B2, np.zeros((30, 3), order="F")))
    t(1.0, dA2, dB2, 0.0, dC2)
    assert np.abs(dpnp.asnumpy(dC2) - A2 @ B2).max() <= 1e-12 * np.abs(A2 @ B2).max()
