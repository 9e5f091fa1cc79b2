"""Kernels of every origin at any batch from 0 to 10^9: NumPy's result, or a refusal first.

Issue 19 §1: hand-written `.ir`, the builder, recipes and `tinyc einsum` output
(tests/analysis/test_crash_reproductions.py has that one) are launched with
batches from 0 to 10^9. Each launch computes what NumPy computes for the
work-groups that fit (worked out here from the kernel's meaning), or raises
LaunchError before anything runs: the error names the argument, the mode and
the largest batch that fits, and no array changed. Batch 0 runs nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tinyc
from tinyc.builder import Program, f32, memref

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_launch_bounds import SOURCE  # noqa: E402 (its @by_four: the hand-written kernel)

BATCHES = [0, 1, 2, 7, 25, 26, 1000, 2**20, 10**9]
ENTRIES = 100  # entries of the arrays: 25 work-groups of 4 fit

def built_by_four() -> Program:
    """test_launch_bounds.py's @by_four (g·4 + i for i < 4), made with tinyc.builder."""
    prog = Program()
    fn = prog.function("by_four", A=memref(f32, None), B=memref(f32, None))
    A, B = fn.params
    first = fn.mul(fn.group_id(), 4)
    with fn.for_(0, 4) as loop:
        k = fn.add(first, loop.var)
        v = fn.load(A, [k])
        fn.store(fn.add(v, v), B, [k])
    return prog


@pytest.fixture(scope="module", params=["hand-written", "builder"])
def by_four(request, device):
    if request.param == "hand-written":
        return tinyc.compile(SOURCE, name="launch_bounds.ir", std="newest")["by_four"]
    return tinyc.compile(built_by_four(), name="by_four.ir")["by_four"]


@pytest.mark.parametrize("batch", BATCHES)
def test_four_entries_per_work_group_at_any_batch(by_four, batch):
    A = np.arange(1, ENTRIES + 1, dtype=np.float32)
    B = np.zeros(ENTRIES, np.float32)
    fits = ENTRIES // 4
    if batch > fits:
        with pytest.raises(tinyc.LaunchError) as caught:
            by_four(A, B, batch=batch)
        assert "argument 'A'" in str(caught.value) or "argument 'B'" in str(caught.value)
        assert "mode 0" in str(caught.value) and f"largest batch these arguments take is {fits}" in str(caught.value)
        assert caught.value.max_batch == fits
        np.testing.assert_array_equal(B, 0)  # nothing ran
        return
    by_four(A, B, batch=batch)
    want = np.zeros(ENTRIES, np.float32)
    want[:4 * batch] = 2 * A[:4 * batch]
    np.testing.assert_array_equal(B, want)


@pytest.mark.parametrize("batch", BATCHES)
def test_a_recipe_at_any_batch(device, batch):
    """small_gemm_batched over (M, K, N-entries) arrays: `howmany` beyond the arrays' batch mode
    is refused by the kernel's launch check, naming the argument."""
    M, N, K, held = 3, 4, 2, 26
    r = tinyc.recipes.small_gemm_batched("f32", False, False, M, N, K, M, M * K, K, K * N, M, M * N)
    rng = np.random.default_rng(batch % 97)
    A = np.asfortranarray(rng.standard_normal((M, K, held)).astype(np.float32))
    B = np.asfortranarray(rng.standard_normal((K, N, held)).astype(np.float32))
    C = np.zeros((M, N, held), np.float32, order="F")
    if batch == 0:  # the recipe's own argument check: howmany must be positive
        with pytest.raises((ValueError, tinyc.LaunchError)):
            r(1.0, A, B, 0.0, C, howmany=0)
        np.testing.assert_array_equal(C, 0)
        return
    if batch > held:
        with pytest.raises(tinyc.LaunchError) as caught:
            r(1.0, A, B, 0.0, C, howmany=batch)
        assert "argument '" in str(caught.value) and "mode 2" in str(caught.value)
        np.testing.assert_array_equal(C, 0)
        return
    r(1.0, A, B, 0.0, C, howmany=batch)
    want = np.einsum("ikb,kjb->ijb", A[:, :, :batch], B[:, :, :batch])
    np.testing.assert_allclose(C[:, :, :batch], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(C[:, :, batch:], 0)


def test_batch_left_out_is_inferred_for_every_origin(by_four):
    A = np.arange(1, 23, dtype=np.float32)
    B = np.zeros(22, np.float32)
    assert by_four.inferred_batch(A, B) == 5  # 5 work-groups of 4 fit 22 entries
    by_four(A, B)
    np.testing.assert_array_equal(B, np.r_[2 * A[:20], [0, 0]])
