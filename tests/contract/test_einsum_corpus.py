"""tinyc.einsum against np.einsum over the corpus (corpus.py), on the device.

Each case runs twice: returning a new array, then into `out=` with alpha and
beta (out := alpha·einsum + beta·out); the second call reuses the first's
program (same SPIR-V), so a case costs one JIT.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from corpus import cases, random_operand, tolerance

import tinyc

CASES = cases()


def assert_close(got, want, dtype: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    assert float(np.abs(got - want).max(initial=0.0)) <= tolerance(dtype) * scale


def test_corpus_is_large_enough():
    assert len(CASES) >= 100
    assert len({sub for _, sub, _, _ in CASES}) >= 90


@pytest.mark.parametrize("name, subscripts, shapes, dtype", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_numpy(device, name, subscripts, shapes, dtype):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    operands = [random_operand(rng, s, dtype) for s in shapes]
    want = np.einsum(subscripts, *operands)
    got = tinyc.einsum(subscripts, *operands)
    assert type(got) is type(want) or isinstance(got, np.ndarray)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert_close(got, want, dtype)

    if np.ndim(want) == 0:
        return
    out = random_operand(rng, np.shape(want), dtype)
    before = out.copy()
    alpha, beta = (0.5 - 0.25j, 2.0 + 1j) if np.dtype(dtype).kind == "c" else (0.5, -2.0)
    result = tinyc.einsum(subscripts, *operands, out=out, alpha=alpha, beta=beta)
    assert result is out
    assert_close(out, alpha * want + beta * before, dtype)
