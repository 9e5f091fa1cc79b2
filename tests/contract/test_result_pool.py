"""Large new results on recycled memory (tinyc/runtime/results.py): the values are NumPy's,
a dropped result's memory serves the next one, and memory still reachable through any array
is never handed out again."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import tinyc
from tinyc.runtime import results

rng = np.random.default_rng(5)
SUBSCRIPTS = "ijkb,li->ljkb"      # a tensor-times-matrix: its result is 1.5x its tensor operand
BATCH = 6000                       # 12*8*8*6000 int32 = 18.4 MB, above results.SMALLEST


def operands(seed: int) -> tuple[np.ndarray, np.ndarray]:
    r = np.random.default_rng(seed)
    return r.integers(-9, 10, (8, 8, 8, BATCH), dtype=np.int32), r.integers(-9, 10, (12, 8), dtype=np.int32)


@pytest.fixture()
def fresh_pool(monkeypatch):
    pool = results._Pool(256 << 20)
    monkeypatch.setattr(results, "_pool", pool)
    return pool


def test_a_dropped_result_serves_the_next_call(device, fresh_pool):
    a, s = operands(1)
    first = tinyc.einsum(SUBSCRIPTS, a, s)
    assert first.nbytes >= results.SMALLEST
    np.testing.assert_array_equal(first, np.einsum(SUBSCRIPTS, a, s))
    address = first.ctypes.data
    del first
    gc.collect()
    assert fresh_pool.held_bytes >= 12 * 8 * 8 * BATCH * 4
    b, t = operands(2)
    second = tinyc.einsum(SUBSCRIPTS, b, t)
    assert second.ctypes.data == address and fresh_pool.held_bytes == 0
    np.testing.assert_array_equal(second, np.einsum(SUBSCRIPTS, b, t))


def test_memory_reachable_through_a_view_is_never_reused(device, fresh_pool):
    a, s = operands(3)
    result = tinyc.einsum(SUBSCRIPTS, a, s)
    view = result[2:5, :, 3].T          # the result itself is dropped, a view of it kept
    kept = view.copy()
    del result
    gc.collect()
    assert fresh_pool.held_bytes == 0
    b, t = operands(4)
    other = tinyc.einsum(SUBSCRIPTS, b, t)
    assert not np.shares_memory(other, view)
    np.testing.assert_array_equal(other, np.einsum(SUBSCRIPTS, b, t))
    np.testing.assert_array_equal(view, kept)
    del view
    gc.collect()
    assert fresh_pool.held_bytes > 0


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_pooled_result_has_numpys_layout(device, fresh_pool, order):
    a, s = operands(5)
    got = tinyc.einsum(SUBSCRIPTS, a, s, order=order)
    want = np.einsum(SUBSCRIPTS, a, s, order=order)
    assert isinstance(got.base, results.Lease)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)
    assert got.strides == want.strides and got.flags.writeable
    np.testing.assert_array_equal(got, want)


def test_statement_outputs_come_from_the_pool(device, fresh_pool):
    c = tinyc.contract(["Y[l,j,k,e] = S[l,i] * X[i,j,k,e]"],
                       shapes={"S": (12, 8), "X": (8, 8, 8, None), "Y": (12, 8, 8, None)}, dtype="i32")
    a, s = operands(6)
    y = c(S=s, X=a)["Y"]
    assert isinstance(y.base, results.Lease)
    np.testing.assert_array_equal(y, np.einsum("li,ijke->ljke", s, a))


def test_small_arrays_and_a_disabled_pool_use_numpy(monkeypatch):
    assert results.empty((100, 100), np.float32).base is None
    monkeypatch.setattr(results, "_pool", results._Pool(0))
    assert results.empty((4096, 4096), np.float32).base is None   # 64 MiB, pool off
    monkeypatch.setenv("TINYC_RESULT_POOL_MB", "0")
    assert results._limit() == 0
    monkeypatch.setenv("TINYC_RESULT_POOL_MB", "many")
    assert results._limit() == 256 << 20


def test_the_pool_keeps_its_limit_newest_first():
    pool = results._Pool(3072)
    blocks = [np.empty(n, np.uint8) for n in (1024, 1024, 2048, 4096)]
    for block in blocks:
        pool.give(block)
    assert pool.held_bytes == 3072                # the oldest dropped to keep the limit; 4096 never kept
    assert pool.take(2048) is blocks[2] and pool.held_bytes == 1024
    assert pool.take(1024) is blocks[1]
    assert pool.take(1024) is not blocks[0]       # dropped: a new block


def test_a_result_collected_while_the_pool_is_locked_does_not_deadlock(fresh_pool):
    """The collector may free a result inside any allocation, one made under the pool's lock
    too: its Lease must not wait for that lock."""
    def collect_under_the_lock() -> None:
        cycle = [results.empty((5 << 20,), np.float32)]
        cycle.append(cycle)
        del cycle
        with fresh_pool._blocks._lock:
            gc.collect()

    worker = threading.Thread(target=collect_under_the_lock, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "a Lease's __del__ waited for the pool's lock"
    assert fresh_pool.held_bytes == 20 << 20
