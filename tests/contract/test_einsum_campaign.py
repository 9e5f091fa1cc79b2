"""A fixed-seed slice of the einsum campaign (outside CI: /tmp campaigns of 1,500 cases):
contractions at the sizes users run, which the hypothesis test's sizes of 1-5 never reach.

Random subscripts of 1-3 operands over labels i..n with a batch label `b` first, last or in
the middle of most operands; sizes 1-20, batches 1-2049 (lane, block, tile and direct
kernels); C, Fortran, permuted and strided operands; every dtype; alpha, and out= with beta.
Each is compared with np.einsum in float64 or complex128, elementwise within Higham's bound
for sums of products (the same contraction on absolute values times n·eps)."""

from __future__ import annotations

import numpy as np
import pytest

import tinyc

LABELS = "ijklmn"
CASES = 24


def draw(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    sizes = {c: int(rng.choice([1, 2, 3, 4, 7, 8, 9, 12, 16, 20])) for c in LABELS}
    sizes["b"] = int(rng.choice([1, 2, 5, 31, 64, 100, 333, 1000, 2049]))
    where = rng.choice(["first", "last", "middle"])
    terms = []
    for _ in range(int(rng.integers(1, 4))):
        t = list(rng.choice(list(LABELS), size=int(rng.integers(1, 4)), replace=False))
        if rng.random() < 0.85:
            t.insert({"first": 0, "last": len(t), "middle": len(t) // 2}[where], "b")
        terms.append("".join(t))
    used = sorted(set("".join(terms)))
    out = [c for c in used if c != "b" and rng.random() < 0.5]
    if "b" in used:
        out.insert({"first": 0, "last": len(out), "middle": len(out) // 2}[where], "b")
    dtype = str(rng.choice(["float32", "float64", "complex64", "complex128"]))
    kinds = [str(rng.choice(["C", "C", "F", "permuted", "strided"])) for _ in terms]
    mode = str(rng.choice(["plain", "alpha", "out"]))
    return ",".join(terms) + "->" + "".join(out), sizes, dtype, kinds, mode, rng


def operand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, kind: str) -> np.ndarray:
    if kind == "permuted":
        order = rng.permutation(len(shape))
        values = rng.standard_normal(tuple(shape[d] for d in order)).transpose(np.argsort(order))
    elif kind == "strided":
        values = rng.standard_normal(tuple(2 * n for n in shape))[tuple(slice(None, None, 2) for _ in shape)]
    else:
        values = rng.standard_normal(shape)
        values = np.asfortranarray(values) if kind == "F" else values
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(values.shape)
    return values.astype(dtype, copy=False)


@pytest.mark.parametrize("seed", range(CASES))
def test_campaign_slice_matches_numpy(device, seed):
    subscripts, sizes, dtype, kinds, mode, rng = draw(20261127 + seed)
    terms = subscripts.split("->")[0].split(",")
    operands = [operand(rng, tuple(sizes[c] for c in t), dtype, k) for t, k in zip(terms, kinds)]
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    want = np.einsum(subscripts, *[o.astype(wide) for o in operands])
    magnitude = np.einsum(subscripts, *[np.abs(o).astype(np.float64) for o in operands])
    if mode == "alpha":
        got, want, magnitude = tinyc.einsum(subscripts, *operands, alpha=2.5), 2.5 * want, 2.5 * magnitude
    elif mode == "out" and want.ndim:
        out = operand(rng, want.shape, dtype, "F" if rng.random() < 0.5 else "C")
        before = out.astype(wide)
        got = tinyc.einsum(subscripts, *operands, out=out, alpha=0.5, beta=-1.5)
        assert got is out
        want, magnitude = 0.5 * want - 1.5 * before, 0.5 * magnitude + 1.5 * np.abs(before)
    else:
        got = tinyc.einsum(subscripts, *operands)
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == np.dtype(dtype)
    # |computed - exact| <= gamma_n * (the same sum on absolute values), n the operations one
    # result element takes (Higham §3.1); a complex product adds a few roundings (factor 4)
    summed = int(np.prod([sizes[c] for c in set("".join(terms)) - set(subscripts.split("->")[1])] or [1]))
    eps = float(np.finfo(np.float32 if dtype in ("float32", "complex64") else np.float64).eps)
    steps = summed + len(terms) + 3
    bound = 4 * steps * eps * magnitude + np.finfo(np.float64).tiny
    assert np.all(np.abs(got - want) <= bound), subscripts
