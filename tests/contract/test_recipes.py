"""tinyc.recipes against NumPy: small_gemm_batched (every transpose, leading dimensions and
batch strides, beta = 0 never reading C) and tall_and_skinny (a dynamic M in blocks with a
remainder, the reference's call with flat buffers)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinyc

rng = np.random.default_rng(3)
TOL = {"float32": 1e-4, "float64": 1e-12, "complex64": 1e-4, "complex128": 1e-12}


def rand(n, dtype):
    values = rng.standard_normal(n)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(n)
    return values.astype(dtype)


def strided(buffer, shape, strides):
    return np.lib.stride_tricks.as_strided(buffer, shape, [s * buffer.itemsize for s in strides])


@pytest.mark.parametrize("ta, tb", list(itertools.product((False, True), repeat=2)))
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_small_gemm_batched(device, dtype, ta, tb):
    M, N, K, howmany = 5, 7, 3, 9
    a_shape, b_shape = ((K, M) if ta else (M, K)), ((N, K) if tb else (K, N))
    ldA, ldB, ldC = a_shape[0] + 2, b_shape[0], M + 1
    sA, sB, sC = ldA * a_shape[1] + 3, ldB * b_shape[1], ldC * N + 2
    r = tinyc.recipes.small_gemm_batched(dtype, ta, tb, M, N, K, ldA, sA, ldB, sB, ldC, sC)
    assert "gemm_beta0" in r.program.kernel_names
    A, B = rand(sA * howmany, dtype), rand(sB * howmany, dtype)
    Av, Bv = strided(A, (*a_shape, howmany), (1, ldA, sA)), strided(B, (*b_shape, howmany), (1, ldB, sB))
    opA = Av.transpose(1, 0, 2) if ta else Av
    opB = Bv.transpose(1, 0, 2) if tb else Bv
    product = np.einsum("mkb,knb->mnb", opA, opB)
    alpha = 0.5 - 0.25j if np.dtype(dtype).kind == "c" else 0.5

    C = np.full(sC * howmany, np.nan, dtype)        # beta = 0: C is never read
    r(howmany, alpha, A, B, 0, C)
    Cv = strided(C, (M, N, howmany), (1, ldC, sC))
    assert np.abs(Cv - alpha * product).max() <= TOL[dtype] * max(1, np.abs(product).max())
    gaps = np.isnan(C).sum()
    assert gaps == C.size - M * N * howmany          # nothing outside the matrices was written

    C = rand(sC * howmany, dtype)
    before = strided(C.copy(), (M, N, howmany), (1, ldC, sC))
    r(alpha, A, B, 2.0, C, howmany=howmany)
    Cv = strided(C, (M, N, howmany), (1, ldC, sC))
    want = alpha * product + 2.0 * before
    assert np.abs(Cv - want).max() <= TOL[dtype] * max(1, np.abs(want).max())


@pytest.mark.parametrize("ta, tb", [(False, False), (True, True)])
@pytest.mark.parametrize("dtype", ["i8", "i32", "i64"])
def test_small_gemm_batched_on_integers(device, dtype, ta, tb):
    """Integer recipes are exact as NumPy's integer products, wrap-around included."""
    M, N, K, howmany = 5, 7, 3, 9
    a_shape, b_shape = ((K, M) if ta else (M, K)), ((N, K) if tb else (K, N))
    r = tinyc.recipes.small_gemm_batched(dtype, ta, tb, M, N, K, a_shape[0], a_shape[0] * a_shape[1],
                                         b_shape[0], b_shape[0] * b_shape[1], M, M * N)
    kind = np.dtype({"i8": "int8", "i32": "int32", "i64": "int64"}[dtype])
    info = np.iinfo(kind)
    A = rng.integers(info.min, info.max, (*a_shape, howmany), dtype=kind, endpoint=True)
    B = rng.integers(info.min, info.max, (*b_shape, howmany), dtype=kind, endpoint=True)
    A, B = np.asfortranarray(A), np.asfortranarray(B)
    C = np.asfortranarray(rng.integers(info.min, info.max, (M, N, howmany), dtype=kind, endpoint=True))
    with np.errstate(over="ignore"):
        want = (np.einsum("mkb,knb->mnb", A.transpose(1, 0, 2) if ta else A, B.transpose(1, 0, 2) if tb else B)
                * kind.type(3) + C * kind.type(-2))
    r(3, A, B, -2, C, howmany=howmany)
    np.testing.assert_array_equal(C, want)


def test_small_gemm_batched_with_3d_arrays(device):
    M, N, K, howmany = 4, 4, 4, 6
    r = tinyc.recipes.small_gemm_batched(np.float32, "n", "n", M, N, K, M, M * K, K, K * N, M, M * N)
    A = np.asfortranarray(rand(M * K * howmany, "float32").reshape(M, K, howmany))
    B = np.asfortranarray(rand(K * N * howmany, "float32").reshape(K, N, howmany))
    C = np.zeros((M, N, howmany), np.float32, order="F")
    r(1.0, A, B, 0.0, C)                             # howmany from C
    assert np.abs(C - np.einsum("mkb,knb->mnb", A, B)).max() < 1e-4


@pytest.mark.parametrize("args, message", [
    (("f32", False, False, 4, 4, 4, 3, 16, 4, 16, 4, 16), "ldA = 3 is smaller than the 4 rows"),
    (("f32", False, False, 4, 4, 4, 4, 15, 4, 16, 4, 16), "strideA = 15 is smaller than ldA"),
    (("f32", "x", False, 4, 4, 4, 4, 16, 4, 16, 4, 16), "transA must be"),
    (("f32", False, False, 0, 4, 4, 4, 16, 4, 16, 4, 16), "M must be a positive integer"),
])
def test_small_gemm_batched_errors(args, message):
    with pytest.raises(ValueError, match=message):
        tinyc.recipes.small_gemm_batched(*args)
    with pytest.raises(TypeError, match="unknown dtype"):
        tinyc.recipes.small_gemm_batched("f7", *args[1:])


@pytest.mark.parametrize("M", [1, 16, 47, 64, 100])
def test_tall_and_skinny_dynamic_m_in_blocks(device, M):
    N, K = 5, 3
    t = tinyc.recipes.tall_and_skinny("f64", N, K, M_block=16)
    A = np.asfortranarray(rand(M * K, "float64").reshape(M, K))
    B = np.asfortranarray(rand(K * N, "float64").reshape(K, N))
    C = np.asfortranarray(rand(M * N, "float64").reshape(M, N))
    before = C.copy()
    t(1.5, A, B, -0.5, C)
    assert np.abs(C - (1.5 * A @ B - 0.5 * before)).max() < 1e-12
    C[...] = np.nan
    t(2.0, A, B, 0.0, C)                               # gemm_beta0 never reads C
    assert np.abs(C - 2.0 * A @ B).max() < 1e-12


def test_tall_and_skinny_reference_call_with_flat_buffers(device):
    M, N, K, ldA, ldB, ldC = 37, 4, 6, 40, 7, 38
    t = tinyc.recipes.tall_and_skinny(np.float32, N, K)      # default block: 128 rows
    A, B, C = rand(ldA * K, "float32"), rand(ldB * N, "float32"), np.full(ldC * N, np.nan, np.float32)
    t(M, 1.0, A, ldA, B, ldB, 0.0, C, ldC)
    Av, Bv, Cv = strided(A, (M, K), (1, ldA)), strided(B, (K, N), (1, ldB)), strided(C, (M, N), (1, ldC))
    assert np.abs(Cv - Av @ Bv).max() < 1e-4
    assert np.isnan(C.reshape(N, ldC)[:, M:]).all()      # rows past M untouched


def test_tall_and_skinny_specialized_static_m(device):
    t = tinyc.recipes.tall_and_skinny("f32", 3, 2, M_block=8, M=32)
    assert "memref<f32x32x2,strided<1,?>>" in t.source and "if " not in t.source   # 4 full blocks
    A = np.asfortranarray(rand(64, "float32").reshape(32, 2))
    B = np.asfortranarray(rand(6, "float32").reshape(2, 3))
    C = np.zeros((32, 3), np.float32, order="F")
    t(1.0, A, B, 0.0, C)
    assert np.abs(C - A @ B).max() < 1e-4


@pytest.mark.parametrize("M", [5, 100])
def test_tall_and_skinny_static_m_below_the_block(device, M):
    """One work-group holds every row: no view past the end of A (no -Wsubview-bounds)."""
    t = tinyc.recipes.tall_and_skinny("f64", 3, 2, M_block=128, M=M)
    assert "if " not in t.source and t.program.warnings == []
    A = np.asfortranarray(rand(M * 2, "float64").reshape(M, 2))
    B = np.asfortranarray(rand(6, "float64").reshape(2, 3))
    C = np.asfortranarray(rand(M * 3, "float64").reshape(M, 3))
    before = C.copy()
    t(2.0, A, B, 0.5, C)
    assert np.abs(C - (2.0 * A @ B + 0.5 * before)).max() < 1e-12
