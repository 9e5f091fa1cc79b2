"""tinyc.einsum and tinyc.contract compose with the launch path (issue 20 §5): `device=` as a
filter string, a list of devices, a `tinyc.Devices` and sub-devices (the batch split over
them), and `check_bounds=True` (the bounds-checked kernel); every result against NumPy
within the summation bound of tests/tolerances.py."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import tinyc
from tinyc.contractions import split as split_module
from tinyc.runtime.kernel import Kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tolerances import assert_within, sum_error_bound  # noqa: E402

rng = np.random.default_rng(20)


def rand(*shape, dtype="float32", order="C"):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return np.asarray(values.astype(dtype), order=order)


def check(got, subscripts, ops, alpha=1.0, beta=0.0, before=None, t=None):
    """got == alpha·einsum + beta·before within γ_K·Σ|terms| (K: the summed terms per entry)."""
    wide = [o.astype(np.complex128) for o in ops]
    want = alpha * np.einsum(subscripts, *wide)
    magnitude = abs(alpha) * np.einsum(subscripts, *[np.abs(o) for o in wide])
    if before is not None:
        want, magnitude = want + beta * before, magnitude + abs(beta) * np.abs(before)
    lhs, out = subscripts.split("->")
    labels = {c for term in lhs.split(",") for c in term}
    sizes = {c: n for term, o in zip(lhs.split(","), ops) for c, n in zip(term, o.shape)}
    terms = math.prod(sizes[c] for c in labels - set(out)) + len(ops)
    t = t or ("f64" if all(o.dtype in (np.float64, np.complex128) for o in ops) else "f32")
    assert np.asarray(got).shape == want.shape
    assert_within(got, want, sum_error_bound(terms, t, magnitude) + 1e-30, subscripts)


@pytest.fixture
def seen(monkeypatch):
    """Records the slices (start, work-groups) of every split einsum launch and counts
    bounds-checked kernel calls."""
    record = {"split": [], "checked": 0}
    launch, checked = split_module.launch_sliced, Kernel._call_checked
    monkeypatch.setattr(split_module, "launch_sliced", lambda parts: record["split"].append(
        [(s.start, s.count, s.queue) for _, _, s in parts]) or launch(parts))

    def counting(self, *args, **kwargs):
        record["checked"] += 1
        return checked(self, *args, **kwargs)

    monkeypatch.setattr(Kernel, "_call_checked", counting)
    return record


@pytest.fixture(scope="module")
def halves(device):
    return tinyc.devices(device.filter_string, split=True)


CASES = [
    ("ikb,kjb->ijb", [(16, 8, 301), (8, 12, 301)], "C"),     # batch last: lanes
    ("bij,bjk->bik", [(301, 16, 8), (301, 8, 12)], "C"),     # batch first: entries per work-group
    ("ikb,kj->ijb", [(16, 8, 301), (8, 12)], "F"),            # a shared operand, whole on every device
    ("kl,lmb,mn->knb", [(9, 9), (9, 5, 120), (5, 5)], "C"),   # a chain
    ("abij,abjk->abik", [(20, 70, 4, 4), (20, 70, 4, 4)], "C"),   # two batch labels
    ("bii,bij->bj", [(90, 5, 5), (90, 5, 7)], "C"),           # a diagonal: each slice copies its own
    ("ijb->b", [(16, 12, 200)], "F"),                         # a reduction
]


@pytest.mark.parametrize("subscripts, shapes, order", CASES)
def test_the_batch_split_over_sub_devices_and_lists(device, halves, seen, subscripts, shapes, order):
    ops = [rand(*s, order=order) for s in shapes]
    for where in (halves, list(halves.queues)):
        check(tinyc.einsum(subscripts, *ops, device=where), subscripts, ops)
        parts = seen["split"][-1]
        assert [q for _, _, q in parts] == list(halves.queues)          # every device got a slice
        assert parts[1][0] == parts[0][1]                                # contiguous work-groups


def test_out_alpha_beta_and_dtypes_over_devices(device, halves, seen):
    A, B = rand(12, 6, 257, dtype="complex64"), rand(6, 5, 257, dtype="complex64")
    C = rand(12, 5, 257, dtype="complex128", order="F")
    before = C.copy()
    tinyc.einsum("ikb,kjb->ijb", A, B, out=C, alpha=0.5 - 1j, beta=2.0, device=halves)
    check(C, "ikb,kjb->ijb", [A, B], 0.5 - 1j, 2.0, before)
    assert len(seen["split"][-1]) == 2
    X = rand(64, 9, 10, dtype="float64")
    check(tinyc.einsum("bij->bji", X, dtype="float32", casting="same_kind", device=halves), "bij->bji", [X],
          t="f32")   # (below the operands' type: NumPy's default 'safe' refuses it)


def test_a_filter_string_and_a_contraction_over_devices(device, halves, seen):
    A, B = rand(8, 8, 100), rand(8, 8, 100)
    check(tinyc.einsum("ijb,jkb->ikb", A, B, device=device.filter_string), "ijb,jkb->ikb", [A, B])
    assert not seen["split"]                                             # one device: not split
    c = tinyc.contract("ijb,jkb->ikb", (8, 8, None), (8, 8, None), device=halves)
    for n in (1, 2, 77, 1000):
        A, B = rand(8, 8, n), rand(8, 8, n)
        check(c(A, B), "ijb,jkb->ikb", [A, B])
        assert len(seen["split"][-1]) == (2 if n > 1 else 1)


def test_check_bounds_runs_the_checked_kernel(device, seen):
    A, B = rand(30, 7, 6), rand(30, 6, 5)
    for _ in range(2):   # the second call of a signature too (never the unchecked fast path)
        check(tinyc.einsum("bij,bjk->bik", A, B, check_bounds=True), "bij,bjk->bik", [A, B])
    assert seen["checked"] == 2
    C = rand(30, 7, 5)
    before = C.copy()
    tinyc.einsum("bij,bjk->bik", A, B, out=C, alpha=2.0, beta=-1.0, check_bounds=True)
    check(C, "bij,bjk->bik", [A, B], 2.0, -1.0, before)
    assert seen["checked"] == 3
    tinyc.einsum("bij,bjk->bik", A, B)
    assert seen["checked"] == 3                                          # off by default


def test_contract_with_check_bounds(device, halves, seen):
    c = tinyc.contract("ikb,kj->ijb", (16, 8, None), (8, 12), check_bounds=True)
    A, B = rand(16, 8, 50), rand(8, 12)
    check(c(A, B), "ikb,kj->ijb", [A, B])
    assert seen["checked"] == 1
    check(c(A, B, check_bounds=False), "ikb,kj->ijb", [A, B])
    assert seen["checked"] == 1
    split = tinyc.contract("ikb,kj->ijb", A, B, device=halves, check_bounds=True)
    check(split(A, B), "ikb,kj->ijb", [A, B])                            # checked: on one device
    assert seen["checked"] == 2 and not seen["split"]


def test_a_scaled_sum_over_devices(device, halves, seen):
    """An operand broadcast along a summed label: the kernel multiplies by its size (the
    call's scale), once per slice."""
    X = np.broadcast_to(rand(300, 4, 1), (300, 4, 5))
    check(tinyc.einsum("bij->b", X, device=halves), "bij->b", [X])
    check(tinyc.einsum("bij->b", X, alpha=-2.0, out=np.zeros(300, np.float32), device=halves),
          "bij->b", [X], -2.0)


def test_bind_gives_the_kernel_and_its_arguments(device):
    c = tinyc.contract("bij,bjk->bik", (None, 6, 5), (None, 5, 4))
    A, B = rand(70, 6, 5), rand(70, 5, 4)
    b = c.bind(A, B, alpha=3.0)
    b.kernel(*b.args, batch=b.groups)
    check(b.written["out"], "bij,bjk->bik", [A, B], 3.0)


def test_dpnp_arrays_over_devices(device, halves, seen):
    """dpnp arrays made on one of the devices run split; arrays of another SYCL context are
    refused before anything runs (DeviceError naming the argument), the output unchanged."""
    dpnp = pytest.importorskip("dpnp")
    from tinyc.runtime.sharding import DeviceError

    A, B = rand(8, 6, 300, dtype="float64"), rand(6, 5, 300, dtype="float64")
    dA, dB = (dpnp.asarray(x, sycl_queue=halves.queues[0]) for x in (A, B))
    check(dpnp.asnumpy(tinyc.einsum("ikb,kjb->ijb", dA, dB, device=halves)), "ikb,kjb->ijb", [A, B])
    assert len(seen["split"][-1]) == 2
    other = [dpnp.asarray(x, device=device.filter_string) for x in (A, B)]
    out = dpnp.zeros((8, 5, 300), device=device.filter_string)
    if other[0].sycl_context == halves.queues[0].sycl_context:
        pytest.skip("the sub-devices share the root device's context here")
    with pytest.raises(DeviceError, match="argument 'A'"):
        tinyc.einsum("ikb,kjb->ijb", *other, out=out, device=halves)
    assert not dpnp.asnumpy(out).any()
