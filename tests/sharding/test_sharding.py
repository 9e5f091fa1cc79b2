"""A batch split over devices gives what one launch gives: `k(..., device=[d0, d1])`.

The CPU device splits into two sub-devices (tinyc.devices(..., split=True)),
so every path here runs on the real device. Each test compares the split
launch with one launch on the whole device and with NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest
from sharding_testlib import NOT_SPLIT, SHARDED, UsmArray, fortran, sample

import tinyc
from tinyc.runtime import sharding


@pytest.fixture(scope="module")
def subs(device):
    found = tinyc.devices("opencl:cpu", split=True)
    assert len(found) == 2, "the CPU device of the test machine splits into two sub-devices"
    return found


@pytest.fixture(scope="module")
def programs(device):
    return {}


def kernel(programs, source: str, name: str):
    """Compile each source once per module (builds are cached per device)."""
    if source not in programs:
        programs[source] = tinyc.compile(source)
    return programs[source][name]


@pytest.fixture
def rng():
    return np.random.default_rng(7)


# -- devices -----------------------------------------------------------------------------
def test_sub_devices(subs, device):
    assert all(d.parent_device == device for d in subs)
    assert sum(d.max_compute_units for d in subs) == device.max_compute_units
    assert subs.weights == tuple(float(d.max_compute_units) for d in subs)
    assert subs.labels == (f"{device.filter_string}/0", f"{device.filter_string}/1")
    again = tinyc.devices("opencl:cpu", split=True)
    assert list(again) == list(subs), "splitting again returns the same sub-devices"
    assert subs.queues[0].sycl_context == subs.queues[1].sycl_context  # one shared context
    whole = tinyc.devices("opencl:cpu")
    assert list(whole) == [device]


def test_devices_object_and_weights(subs):
    chosen = tinyc.Devices(subs[0], subs[1], weights=[3, 1])
    assert len(chosen) == 2 and chosen.weights == (3.0, 1.0)
    assert list(tinyc.Devices(list(subs))) == list(subs)
    for bad, message in [([1], "2 devices"), ([-1, 1], ">= 0"), ([0, 0], "all be 0"), (["x", 1], ">= 0")]:
        with pytest.raises(tinyc.LaunchError, match=message):
            tinyc.Devices(list(subs), weights=bad)


def test_bad_filter_and_split():
    with pytest.raises(tinyc.LaunchError, match="filter string"):
        tinyc.devices("opencl:nonsense")
    with pytest.raises(tinyc.LaunchError, match="split"):
        tinyc.devices("opencl:cpu", split=0)
    with pytest.raises(tinyc.LaunchError, match="cannot be split into 64 parts"):
        tinyc.devices("opencl:cpu", split=64)


@pytest.mark.parametrize("batch, weights, expect", [
    (10, [1, 1], [5, 5]), (11, [1, 1], [6, 5]), (10, [3, 1], [8, 2]), (1, [1, 1], [1, 0]),
    (7, [1, 0, 1], [4, 0, 3]), (100, [2, 3, 5], [20, 30, 50]), (5, [1, 1, 1], [2, 2, 1]),
])
def test_split_counts(batch, weights, expect):
    counts = sharding.split_counts(batch, weights)
    assert counts == expect and sum(counts) == batch


# -- the samples of the must-show list -----------------------------------------------------
def fused_reference(alpha, A, B, C, D):
    return D + alpha * np.einsum("ijb,kj,kl->ilb", np.stack(A, -1) if isinstance(A, list) else A, B, C)


@pytest.mark.parametrize("weights", [None, [3, 1]])
def test_fused_kernel(programs, subs, rng, weights):
    k = kernel(programs, sample("fused_kernel"), "fused_kernel")
    n = 203
    A = [fortran(rng, (16, 8)) for _ in range(n)]
    B, C, D = fortran(rng, (8, 8)), fortran(rng, (8, 16)), fortran(rng, (16, 16, n))
    one, split = D.copy(order="F"), D.copy(order="F")
    k(0.5, A, B, C, one, batch=n)
    k(0.5, A, B, C, split, batch=n, device=subs, weights=weights)
    np.testing.assert_array_equal(split, one)
    np.testing.assert_allclose(split, fused_reference(0.5, A, B, C, D), rtol=1e-5, atol=1e-4)


def test_fused_kernel_stacked_group_devices_object(programs, subs, rng):
    """Members stacked along the last mode, split by a Devices with weights."""
    k = kernel(programs, sample("fused_kernel"), "fused_kernel")
    n = 50
    A, B, C, D = fortran(rng, (16, 8, n)), fortran(rng, (8, 8)), fortran(rng, (8, 16)), fortran(rng, (16, 16, n))
    split = D.copy(order="F")
    k(-1.5, A, B, C, split, batch=n, device=tinyc.Devices(list(subs), weights=[1, 4]))
    np.testing.assert_allclose(split, fused_reference(-1.5, A, B, C, D), rtol=1e-5, atol=1e-4)


def test_batched_gemm(programs, subs, rng):
    k = kernel(programs, sample("batched_gemm"), "batched_gemm")
    n = 37
    A, B = fortran(rng, (32, 32, n + 3)), fortran(rng, (32, 32, n))
    one, split = np.zeros((32, 32, n), order="F", dtype=np.float32), np.zeros((32, 32, n), order="F", dtype=np.float32)
    k(A, B, one, batch=n)
    k(A, B, split, batch=n, device=list(subs))
    np.testing.assert_array_equal(split, one)
    np.testing.assert_allclose(split, np.einsum("ikb,kjb->ijb", A[:, :, :n], B), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("offset", [0, 3])
def test_group_with_dynamic_offset(programs, subs, rng, offset):
    k = kernel(programs, sample("group_offset"), "group_offset")
    n = 21
    members = [rng.standard_normal(offset + 64).astype(np.float32) for _ in range(n)]
    x, y = fortran(rng, (8, n)), fortran(rng, (8, n))
    split = y.copy(order="F")
    k(tinyc.Group(members, offset=offset), x, split, batch=n, device=subs)
    mats = np.stack([m[offset:offset + 64].reshape(8, 8, order="F") for m in members], -1)
    np.testing.assert_allclose(split, y + np.einsum("ijb,jb->ib", mats, x), rtol=1e-5, atol=1e-5)


def test_batch_mode_first_and_dynamic_sizes(programs, subs, rng):
    """Slices of mode 0 interleave in memory: each device writes only its rows."""
    k = kernel(programs, SHARDED, "scale_rows")
    X, Y = fortran(rng, (30, 7)), fortran(rng, (30, 7))
    before = Y.copy()
    k(2.0, X, Y[:25], batch=25, device=subs)
    np.testing.assert_array_equal(Y[:25], 2 * X[:25])
    np.testing.assert_array_equal(Y[25:], before[25:])


def test_static_batch_sizes(programs, subs, rng):
    """A batch mode or group size fixed by the type is padded per slice, never read."""
    k = kernel(programs, SHARDED, "static_batch")
    X, Y = fortran(rng, (4, 10)), fortran(rng, (4, 10))
    split = Y.copy(order="F")
    k(3.0, X, split, batch=10, device=subs, weights=[7, 3])
    np.testing.assert_allclose(split, Y + 3 * X, rtol=1e-6)
    g = kernel(programs, SHARDED, "static_group")
    A = [rng.standard_normal(4).astype(np.float32) for _ in range(6)]
    Y = fortran(rng, (4, 6))
    split = Y.copy(order="F")
    g(A, split, batch=6, device=subs)
    np.testing.assert_allclose(split, Y + np.stack(A, -1), rtol=1e-6)


def test_members_of_different_sizes(programs, subs, rng):
    k = kernel(programs, SHARDED, "ragged")
    G = tuple(rng.standard_normal(n).astype(np.float32) for n in range(1, 16))
    s = np.zeros(15, dtype=np.float32)
    k(G, s, batch=15, device=subs, weights=[1, 2])
    np.testing.assert_allclose(s, [g.sum() for g in G], rtol=1e-5, atol=1e-6)
    w = kernel(programs, SHARDED, "scale_members")
    members = [g.copy() for g in G]
    w(-3.0, members, batch=15, device=subs)
    for got, g in zip(members, G):
        np.testing.assert_array_equal(got, -3 * g)


def test_a_list_of_numpy_members_is_read_once_per_split_call(programs, subs, rng, monkeypatch):
    """The slices of one call share one read of the list's members (passed by address)."""
    from tinyc.runtime import groups

    w = kernel(programs, SHARDED, "scale_members")
    members = [rng.standard_normal(5).astype(np.float32) for _ in range(40)]  # one layout
    want = [m.copy() for m in members]
    reads = []
    real = groups.host_numpy
    monkeypatch.setattr(groups, "host_numpy", lambda *a: reads.append(1) or real(*a))
    for factor in (-3.0, 0.5):
        w(factor, members, batch=40, device=subs, weights=[1, 3])
        want = [factor * m for m in want]
        for got, m in zip(members, want):
            np.testing.assert_array_equal(got, m)
    assert len(reads) == (2 if all(k.host_pointers for k in sharding.kernels_on(w, subs.queues)) else 0)
    members[30] = members[30].astype(np.float64)  # the last slice's member 20: named as the slice sees it
    with pytest.raises(tinyc.LaunchError, match="member 20"):
        w(1.0, members, batch=40, device=subs, weights=[1, 3])
    members[30] = np.ones(7, np.float32)  # another length: the slices take the members one by one
    w(2.0, members, batch=40, device=subs)
    np.testing.assert_array_equal(members[0], 2 * want[0])
    np.testing.assert_array_equal(members[30], 2)


def test_scalars_of_several_types(programs, subs, rng):
    k = kernel(programs, SHARDED, "elements")
    x, y = rng.standard_normal(9), np.arange(9, dtype=np.int32)
    k(x, y, 5, batch=9, device=subs)
    np.testing.assert_array_equal(y, np.arange(9) + 5)


def test_more_devices_than_work_groups(programs, subs, rng):
    k = kernel(programs, SHARDED, "elements")
    x, y = np.array([3.0]), np.array([1], dtype=np.int32)
    k(x, y, -2, batch=1, device=[subs[0], subs[1], subs[0]])
    assert x[0] == 9.0 and y[0] == -1


# -- kernels that cannot be split ---------------------------------------------------------------
@pytest.mark.parametrize("name, reason", [
    ("sum_all", "writes %s, which is not indexed by the group id"),
    ("uses_size", "builtin.group_size"),
    ("neighbour", "group id is used by `arith`"),
    ("batch_size", "`size` of mode 0"),
    ("other_entry", "also accessed otherwise"),
    ("stores_id", "used by `store`"),
])
def test_split_problems_are_found(name, reason):
    from tinyc.compiler import compile_to_spirv

    info = compile_to_spirv(NOT_SPLIT).kernels[name]
    assert reason in info.batch_split_problem
    assert sharding.split_problem(info) == info.batch_split_problem


def test_split_problem_none_for_samples():
    from tinyc.compiler import compile_to_spirv

    for name in ("fused_kernel", "batched_gemm", "group_offset", "dg_volume", "cumsum"):
        info = compile_to_spirv(sample(name)).kernels[name]
        assert info.batch_split_problem is None, name


def test_shared_output_runs_on_one_device(programs, subs, rng):
    """An atomic sum into a shared output: split slices could not be combined, so one
    device runs the whole batch (the one with the largest weight) and the sum is right."""
    k = kernel(programs, NOT_SPLIT, "sum_all")
    X = fortran(rng, (8, 40))
    s = np.ones(8, dtype=np.float32)
    k(X, s, batch=40, device=subs, weights=[1, 2])
    np.testing.assert_allclose(s, 1 + X.sum(axis=1), rtol=1e-5)
    assert [part.queue for part in sharding.plan(k.info, 40, tinyc.Devices(list(subs), weights=[1, 2]))] == [
        subs.queues[1]]
    g = kernel(programs, NOT_SPLIT, "uses_size")
    out = np.zeros(12, dtype=np.float32)
    g(out, batch=12, device=subs)
    np.testing.assert_array_equal(out, np.full(12, 12, dtype=np.float32))


# -- errors leave the outputs alone ----------------------------------------------------------------
def test_too_small_for_the_batch(programs, subs, rng):
    k = kernel(programs, sample("fused_kernel"), "fused_kernel")
    A = [fortran(rng, (16, 8)) for _ in range(10)]
    B, C, D = fortran(rng, (8, 8)), fortran(rng, (8, 16)), fortran(rng, (16, 16, 12))
    with pytest.raises(tinyc.LaunchError, match=r"argument 'A'.*too few for batch=12"):
        k(1.0, A, B, C, D, batch=12, device=subs)
    with pytest.raises(tinyc.LaunchError, match=r"argument 'D'.*mode 2 has size 12, too small for batch=13"):
        k(1.0, A + A, B, C, D, batch=13, device=subs)
    with pytest.raises(tinyc.LaunchError, match="unknown keyword"):
        k(1.0, A, B, C, D, batch=10, device=subs, dveice=1)


def test_run_together_submits_the_first_slice_last():
    """The waiting thread of Intel's CPU runtime works on the first sub-device only:
    it must be submitted after the others (which its workers run) and waited for first."""
    log = []

    class Event:
        def __init__(self, i):
            self.i = i

        def wait(self):
            log.append(("wait", self.i))

    def submit(i):
        log.append(("submit", i))
        return Event(i)

    events = sharding.run_together([lambda i=i: submit(i) for i in range(3)])
    assert [e.i for e in events] == [0, 1, 2]
    assert log == [("submit", 2), ("submit", 1), ("submit", 0), ("wait", 0), ("wait", 1), ("wait", 2)]


def test_split_launch_submits_the_first_slice_last(programs, subs, rng, monkeypatch):
    k = kernel(programs, sample("batched_gemm"), "batched_gemm")
    n = 12
    A, B, C = fortran(rng, (32, 32, n)), fortran(rng, (32, 32, n)), np.zeros((32, 32, n), order="F", dtype=np.float32)
    order, real = [], sharding._Running.submit

    def logged(self):
        order.append(list(subs.queues).index(self.part.queue))
        return real(self)

    monkeypatch.setattr(sharding._Running, "submit", logged)
    k(A, B, C, batch=n, device=subs)
    assert order == [1, 0]
    np.testing.assert_allclose(C, np.einsum("ikb,kjb->ijb", A, B), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("step, which", [("stage", 1), ("submit", 1), ("wait", 1), ("stage", 0), ("wait", 0)])
def test_failure_on_one_device_changes_nothing(programs, subs, rng, monkeypatch, step, which):
    """Slices are submitted last first, waited for first first: a failure of either
    device, before or after the other one's kernel ran, leaves the outputs as they were."""
    k = kernel(programs, sample("fused_kernel"), "fused_kernel")
    n = 30
    A = [fortran(rng, (16, 8)) for _ in range(n)]
    B, C, D = fortran(rng, (8, 8)), fortran(rng, (8, 16)), fortran(rng, (16, 16, n))
    before = D.copy()
    second = sharding.kernels_on(k, subs.queues)[which]

    class Broken(RuntimeError):
        pass

    if step == "stage":
        monkeypatch.setattr(second, "_bound", lambda *a: (_ for _ in ()).throw(Broken("no memory")))
    elif step == "submit":
        monkeypatch.setattr(second, "submit", lambda *a: (_ for _ in ()).throw(Broken("lost device")))
    else:
        real = second.submit

        class FailingEvent:
            def __init__(self, event):
                self.event = event

            def wait(self):
                self.event.wait()
                raise Broken("kernel failed")

        monkeypatch.setattr(second, "submit", lambda *a: FailingEvent(real(*a)))
    with pytest.raises(sharding.DeviceError) as caught:
        k(1.0, A, B, C, D, batch=n, device=subs)
    assert f"{subs.labels[which]} ({subs[which].name})" in str(caught.value)
    assert caught.value.device == subs[which]
    assert isinstance(caught.value, tinyc.LaunchError)
    if step == "wait" and k.host_pointers:  # D went by address: the other slice wrote its part
        assert "may have written their parts of NumPy outputs" in str(caught.value)
        D[...] = before
    else:
        assert "no output was changed" in str(caught.value)
    np.testing.assert_array_equal(D, before)
    monkeypatch.undo()
    k(1.0, A, B, C, D, batch=n, device=subs)  # the devices still work afterwards
    np.testing.assert_allclose(D, fused_reference(1.0, A, B, C, before), rtol=1e-5, atol=1e-4)


def test_read_only_output_is_refused(programs, subs, rng):
    k = kernel(programs, SHARDED, "static_batch")
    X, Y = fortran(rng, (4, 10)), fortran(rng, (4, 10))
    Y.flags.writeable = False
    with pytest.raises(tinyc.LaunchError, match="argument 'Y'.*read-only"):
        k(1.0, X, Y, batch=10, device=subs)


# -- USM arrays -----------------------------------------------------------------------------
def test_usm_arrays(programs, subs, rng, device):
    """USM arrays of the whole device (another SYCL context than the sub-devices')
    and of a sub-device's context: read through views or host copies, written ones
    updated once every device succeeded."""
    from tinyc.runtime.device import select_queue

    k = kernel(programs, sample("batched_gemm"), "batched_gemm")
    n = 9
    A, B = fortran(rng, (32, 32, n)), fortran(rng, (32, 32, n))
    expect = np.einsum("ikb,kjb->ijb", A, B)
    for queue in (select_queue(device), subs.queues[0]):
        a, b = UsmArray(queue, A), UsmArray(queue, B)
        c = UsmArray(queue, np.zeros((32, 32, n), dtype=np.float32))
        k(a, b, c, batch=n, device=subs)
        np.testing.assert_allclose(c.to_host(), expect, rtol=1e-4, atol=1e-4)


def test_benchmark_script_runs(subs):
    """benchmarks/sharding.py end to end at a tiny batch (timings are not asserted)."""
    from benchmarks.sharding import run_case

    result = run_case("gemm", rounds=3, batch=6, log=lambda _: None)
    assert result["devices"] == list(subs.labels)
    for key in ("numpy args", "resident", "tiny"):
        assert result[key]["first_ms"] > 0 and result[key]["second_ms"] > 0


def test_dpnp_arrays(programs, subs, rng):
    """dpnp arrays on the whole device and on a sub-device, read and written, stacked groups."""
    dpnp = pytest.importorskip("dpnp")
    k = kernel(programs, sample("fused_kernel"), "fused_kernel")
    n = 13
    A, B, C, D = fortran(rng, (16, 8, n)), fortran(rng, (8, 8)), fortran(rng, (8, 16)), fortran(rng, (16, 16, n))
    for queue in (None, subs.queues[1]):
        on = {} if queue is None else {"sycl_queue": queue}
        d = dpnp.asarray(D, order="F", **on)
        k(0.5, *(dpnp.asarray(x, order="F", **on) for x in (A, B, C)), d, batch=n, device=subs)
        np.testing.assert_allclose(dpnp.asnumpy(d), fused_reference(0.5, A, B, C, D), rtol=1e-5, atol=1e-4)
