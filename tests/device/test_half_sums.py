"""Sums of 16-bit floats run in f32 and round once per stored value (tinyc.ir.types.
accumulation_type, docs/decisions.md): sum, cumsum, gemm and generated contractions. In half
precision a running sum stagnates at 2048 (2048 + 1 rounds back to 2048), so sums of ones
show the difference exactly: every count below is exact in f16."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tinyc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tolerances import UNIT_ROUNDOFF, assert_within, sum_error_bound  # noqa: E402

SUM = """func @total(%A: memref<{t}x?>, %out: memref<{t}>) {{
  %one = constant 1.0 : {t}
  %zero = constant 0.0 : {t}
  sum.n %one, %A, %zero, %out
}}
func @rows(%A: memref<{t}x?x?>, %out: memref<{t}x?>) {{
  %one = constant 1.0 : {t}
  %zero = constant 0.0 : {t}
  sum.n %one, %A, %zero, %out
}}
func @columns(%A: memref<{t}x?x?>, %out: memref<{t}x?>) {{
  %one = constant 1.0 : {t}
  %zero = constant 0.0 : {t}
  sum.t %one, %A, %zero, %out
}}
func @prefix(%A: memref<{t}x?x?>, %B: memref<{t}x?x?>) {{
  %one = constant 1.0 : {t}
  %zero = constant 0.0 : {t}
  cumsum %one, %A, 0, %zero, %B
}}
func @prefix1(%A: memref<{t}x?x?>, %B: memref<{t}x?x?>) {{
  %one = constant 1.0 : {t}
  %zero = constant 0.0 : {t}
  cumsum %one, %A, 1, %zero, %B
}}
func @product(%A: memref<{t}x4x?>, %B: memref<{t}x?x4>, %C: memref<{t}x4x4>) {{
  %one = constant 1.0 : {t}
  %zero = constant 0.0 : {t}
  gemm.n.n %one, %A, %B, %zero, %C
}}
"""


@pytest.fixture(scope="module")
def half(device):
    return tinyc.compile(SUM.format(t="f16"))


def ones(*shape):
    return np.ones(shape, np.float16, order="F")


def test_a_long_sum_does_not_stagnate(half):
    out = np.zeros((), np.float16)
    half["total"](ones(40000), out, batch=1)    # 16 lanes of 2500 ones each: 2048 per lane in f16
    assert out == 40000
    rows, columns = np.zeros(3, np.float16), np.zeros(3, np.float16)
    half["rows"](ones(3, 5000), rows, batch=1)
    half["columns"](ones(5000, 3), columns, batch=1)
    np.testing.assert_array_equal(rows, [5000] * 3)
    np.testing.assert_array_equal(columns, [5000] * 3)


@pytest.mark.parametrize("kernel, shape, mode", [("prefix", (5000, 2), 0), ("prefix1", (2, 5000), 1)])
def test_prefix_sums_count_past_2048(half, kernel, shape, mode):
    B = np.zeros(shape, np.float16, order="F")
    half[kernel](ones(*shape), B, batch=1)
    want = np.cumsum(np.ones(shape), axis=mode)   # in float64: exact, and exact in f16 up to 2048,
    assert np.array_equal(B, want.astype(np.float16))   # then each rounded once


def test_a_half_gemm_with_a_long_k(half):
    K = 3000
    C = np.zeros((4, 4), np.float16, order="F")
    half["product"](ones(4, K), ones(K, 4), C, batch=1)
    np.testing.assert_array_equal(C, np.full((4, 4), K, np.float16))


@pytest.mark.parametrize("subscripts, shapes", [
    ("kb,k->b", [(3000, 64), (3000,)]),        # a lane kernel (batch last)
    ("bk,bk->b", [(64, 3000), (64, 3000)]),
    ("ik,kj->ij", [(4, 3000), (3000, 5)]),     # a gemm
])
def test_einsum_half_sums(device, subscripts, shapes):
    got = tinyc.einsum(subscripts, *[np.ones(s, np.float16) for s in shapes])
    np.testing.assert_array_equal(got, np.einsum(subscripts, *[np.ones(s) for s in shapes]).astype(np.float16))


@pytest.mark.parametrize("subscripts, shapes", [
    ("ijb->b", [(64, 64, 100)]),                  # a streamed reduction (was a pass per 4 rows)
    ("ijb->ib", [(16, 200, 300)]),
    ("ijb,jb->ib", [(16, 200, 300), (200, 300)]),  # a register block over 200 rows (was passes of 2)
])
def test_einsum_half_results_round_once(device, subscripts, shapes):
    """Positive terms: the exact sum within one f16 rounding plus the f32 sums' own bound. A
    partial sum stored in f16 after every pass erred 10-25 times that."""
    rng = np.random.default_rng(3)
    ops = [rng.uniform(0.0, 2.0, s).astype(np.float16) for s in shapes]
    exact = np.einsum(subscripts, *[x.astype(np.float64) for x in ops])
    terms, output = subscripts.split("->")
    sizes = {label: n for term, shape in zip(terms.split(","), shapes) for label, n in zip(term, shape)}
    n = int(np.prod([sizes[label] for label in set(terms) - set(output) - {","}]))
    u = UNIT_ROUNDOFF["f16"]   # terms >= 0, so Σ|terms| = exact: the f32 sum's bound, then one rounding
    bound = u * exact + (1 + u) * sum_error_bound(n, "f32", exact)
    assert_within(tinyc.einsum(subscripts, *ops), exact, bound, subscripts)
