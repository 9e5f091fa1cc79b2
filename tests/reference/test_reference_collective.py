"""BLAS-like collectives in the reference interpreter against direct NumPy formulas."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_testlib import FUSED, fortran, kernel, run_text
from tinyc.reference import run
from tinyc.runtime.scalars import bf16_bits_to_float, float_to_bf16_bits

TYPES = {"f32": np.float32, "f64": np.float64, "c32": np.complex64, "c64": np.complex128,
         "i32": np.int32, "i64": np.int64, "f16": np.float16, "i8": np.int8}
TOL = {"f32": 1e-5, "f64": 1e-12, "c32": 1e-5, "c64": 1e-12, "i32": 0, "i64": 0, "f16": 2e-3}


def close(actual, expected, ty):
    np.testing.assert_allclose(actual, expected, rtol=TOL[ty], atol=TOL[ty])


def op(x, t):
    return x.T if t == "t" else x


# ---------------------------------------------------------------- gemm

@pytest.mark.parametrize("ta", ["n", "t"])
@pytest.mark.parametrize("tb", ["n", "t"])
@pytest.mark.parametrize("ty", ["f32", "f64", "c64", "i32"])
def test_gemm_transposes(ta, tb, ty):
    M, N, K = 5, 7, 3
    shape_a = (M, K) if ta == "n" else (K, M)
    shape_b = (K, N) if tb == "n" else (N, K)
    A, B = fortran(shape_a, TYPES[ty], 1), fortran(shape_b, TYPES[ty], 2)
    C = fortran((M, N), TYPES[ty], 3)
    alpha, beta = (TYPES[ty](2), TYPES[ty](3)) if ty == "i32" else (TYPES[ty](0.5), TYPES[ty](-1.5))
    expected = alpha * (op(A, ta) @ op(B, tb)) + beta * C
    run_text(f"""
    func @k(%a: {ty}, %A: memref<{ty}x{shape_a[0]}x{shape_a[1]}>,
            %B: memref<{ty}x{shape_b[0]}x{shape_b[1]}>, %b: {ty}, %C: memref<{ty}x{M}x{N}>) {{
      gemm.{ta}.{tb} %a, %A, %B, %b, %C
    }}""", [alpha, A, B, beta, C])
    close(C, expected, ty)


@pytest.mark.parametrize("instruction", ["gemm.n.n", "gemm.n.n.atomic"])
def test_gemm_beta_zero_does_not_read_c(instruction):
    A, B = fortran((4, 6), seed=1), fortran((6, 5), seed=2)
    C = np.full((4, 5), np.nan, dtype=np.float32, order="F")
    run_text(f"""
    func @k(%A: memref<f32x4x6>, %B: memref<f32x6x5>, %C: memref<f32x4x5>) {{
      %a = constant 2.0 : f32
      %b = constant 0.0 : f32
      {instruction} %a, %A, %B, %b, %C
    }}""", [A, B, C])
    close(C, 2 * A @ B, "f32")


def test_gemm_atomic_with_beta_one_accumulates():
    A, B, C = fortran((3, 2), seed=1), fortran((2, 4), seed=2), fortran((3, 4), seed=3)
    expected = A @ B + C
    run_text("""
    func @k(%A: memref<f32x3x2>, %B: memref<f32x2x4>, %C: memref<f32x3x4>) {
      %one = constant 1.0 : f32
      gemm.n.n.atomic %one, %A, %B, %one, %C
    }""", [A, B, C])
    close(C, expected, "f32")


def test_gemm_mixed_precision_rounds_to_the_output_type():
    A, B = fortran((8, 8), np.float16, 1), fortran((8, 8), np.float16, 2)
    C = np.zeros((8, 8), dtype=np.float32, order="F")
    run_text("""
    func @k(%A: memref<f16x8x8>, %B: memref<f16x8x8>, %C: memref<f32x8x8>) {
      %one = constant 1.0 : f16
      %zero = constant 0.0 : f32
      gemm.n.n %one, %A, %B, %zero, %C
    }""", [A, B, C])
    close(C, A.astype(np.float32) @ B.astype(np.float32), "f32")


def test_gemm_integer_wraps_in_the_output_type():
    A = np.full((2, 2), 100, dtype=np.int8, order="F")
    C = np.zeros((2, 2), dtype=np.int8, order="F")
    run_text("""
    func @k(%A: memref<i8x2x2>, %C: memref<i8x2x2>) {
      %one = constant 1 : i8
      %zero = constant 0 : i8
      gemm.n.n %one, %A, %A, %zero, %C
    }""", [A, C])
    assert (C == np.int8(((20000 + 128) % 256) - 128)).all()


# ---------------------------------------------------------------- gemv, ger, hadamard

@pytest.mark.parametrize("t", ["n", "t"])
def test_gemv(t):
    A = fortran((5, 3) if t == "n" else (3, 5), np.float64, 1)
    b, c = fortran((3,), np.float64, 2), fortran((5,), np.float64, 3)
    expected = 1.5 * op(A, t) @ b + 0.25 * c
    run_text(f"""
    func @k(%A: memref<f64x{A.shape[0]}x{A.shape[1]}>, %b: memref<f64x3>, %c: memref<f64x5>) {{
      %x = constant 1.5 : f64
      %y = constant 0.25 : f64
      gemv.{t} %x, %A, %b, %y, %c
    }}""", [A, b, c])
    close(c, expected, "f64")


def test_ger():
    a, b, C = fortran((4,), np.complex64, 1), fortran((3,), np.complex64, 2), fortran((4, 3), np.complex64, 3)
    expected = 2 * np.outer(a, b) - C
    run_text("""
    func @k(%a: memref<c32x4>, %b: memref<c32x3>, %C: memref<c32x4x3>) {
      %x = constant [2.0, 0.0] : c32
      %y = constant [-1.0, 0.0] : c32
      ger %x, %a, %b, %y, %C
    }""", [a, b, C])
    close(C, expected, "c32")


@pytest.mark.parametrize("shape", [(6,), (3, 4)])
def test_hadamard_product(shape):
    a, b, c = (fortran(shape, np.float32, s) for s in (1, 2, 3))
    expected = 3 * a * b + 2 * c
    mt = "x".join(map(str, shape))
    run_text(f"""
    func @k(%a: memref<f32x{mt}>, %b: memref<f32x{mt}>, %c: memref<f32x{mt}>) {{
      %x = constant 3.0 : f32
      %y = constant 2.0 : f32
      hadamard_product %x, %a, %b, %y, %c
    }}""", [a, b, c])
    close(c, expected, "f32")


# ---------------------------------------------------------------- axpby, sum

@pytest.mark.parametrize("t", ["n", "t"])
@pytest.mark.parametrize("shape", [(), (7,), (3, 5)])
def test_axpby_orders_and_transpose(t, shape):
    a_shape = shape[::-1] if t == "t" else shape
    A = fortran(a_shape, np.float64, 1) if a_shape else np.array(0.75)
    B = fortran(shape, np.float64, 2) if shape else np.array(-2.0)
    expected = 2.0 * op(A, t) + 0.5 * B
    ta, tb = ("x".join(["f64", *map(str, s)]) for s in (a_shape, shape))
    run_text(f"""
    func @k(%A: memref<{ta}>, %B: memref<{tb}>) {{
      %x = constant 2.0 : f64
      %y = constant 0.5 : f64
      axpby.{t} %x, %A, %y, %B
    }}""", [A, B])
    close(B, expected, "f64")


def test_axpby_beta_zero_and_bf16_output():
    values = fortran((4,), np.float32, 1)
    A = np.array([float_to_bf16_bits(v) for v in values], dtype=np.uint16)
    B = np.full(4, 0x7FC0, dtype=np.uint16)  # NaN bit patterns
    run_text("""
    func @k(%A: memref<bf16x4>, %B: memref<bf16x4>) {
      %x = constant 3.0 : bf16
      %y = constant 0.0 : bf16
      axpby.n %x, %A, %y, %B
    }""", [A, B])
    assert list(B) == [float_to_bf16_bits(np.float32(3) * np.float32(bf16_bits_to_float(int(a))))
                       for a in A]


@pytest.mark.parametrize("t", ["n", "t"])
def test_sum_to_vector(t):
    A = fortran((4, 6), np.float32, 1)
    n = 4 if t == "n" else 6
    b = fortran((n,), np.float32, 2)
    expected = 2 * op(A, t).sum(axis=1) + b
    run_text(f"""
    func @k(%A: memref<f32x4x6>, %b: memref<f32x{n}>) {{
      %x = constant 2.0 : f32
      %y = constant 1.0 : f32
      sum.{t} %x, %A, %y, %b
    }}""", [A, b])
    close(b, expected, "f32")


def test_sum_to_scalar_with_beta_zero():
    a = fortran((9,), np.float64, 1)
    b = np.array(np.nan)
    run_text("""
    func @k(%a: memref<f64x9>, %b: memref<f64>) {
      %x = constant -1.0 : f64
      %y = constant 0.0 : f64
      sum.n %x, %a, %y, %b
    }""", [a, b])
    close(b, -a.sum(), "f64")


# ---------------------------------------------------------------- cumsum

@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_cumsum_along_each_mode_of_a_3d_tensor(mode, beta):
    A = fortran((3, 4, 5), np.float64, 1)
    B = fortran((3, 4, 5), np.float64, 2)
    if beta == 0.0:
        B[...] = np.nan
    expected = 2.0 * np.cumsum(A, axis=mode) + (beta * B if beta else 0)
    run_text(f"""
    func @k(%A: memref<f64x3x4x5>, %B: memref<f64x3x4x5>, %y: f64) {{
      %x = constant 2.0 : f64
      cumsum %x, %A, {mode}, %y, %B
    }}""", [A, B, beta])
    close(B, expected, "f64")


def test_cumsum_index_notation_by_hand():
    A = np.asfortranarray(np.arange(1, 7, dtype=np.int32).reshape((2, 3), order="F"))  # [[1,3,5],[2,4,6]]
    B = np.zeros((2, 3), dtype=np.int32, order="F")
    run_text("""
    func @k(%A: memref<i32x2x3>, %B: memref<i32x2x3>) {
      %one = constant 1 : i32
      %zero = constant 0 : i32
      cumsum.atomic %one, %A, 1, %zero, %B
    }""", [A, B])
    assert B.tolist() == [[1, 4, 9], [2, 6, 12]]


# ---------------------------------------------------------------- the spec's fused kernel

def fused_inputs(batch: int):
    A = [fortran((16, 8), seed=100 + i) for i in range(batch)]
    B, C = fortran((8, 8), seed=1), fortran((8, 16), seed=2)
    D = fortran((16, 16, batch), seed=3)
    return np.float32(0.75), A, B, C, D


def test_fused_kernel_against_einsum():
    batch = 40
    alpha, A, B, C, D = fused_inputs(batch)
    expected = D + alpha * np.einsum("ikn,jk,jl->iln", np.stack(A, axis=-1), B, C)
    run(kernel(FUSED), [alpha, A, B, C, D], batch)
    close(D, expected, "f32")


def test_fused_kernel_on_a_sample_of_groups_leaves_the_others():
    batch = 10
    alpha, A, B, C, D = fused_inputs(batch)
    before = D.copy()
    run(kernel(FUSED), [alpha, A, B, C, D], batch, groups=[2, 7])
    for g in range(batch):
        if g in (2, 7):
            close(D[:, :, g], before[:, :, g] + alpha * A[g] @ B.T @ C, "f32")
        else:
            np.testing.assert_array_equal(D[:, :, g], before[:, :, g])


# ---------------------------------------------------------------- random shapes

@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 6), n=st.integers(1, 6), k=st.integers(1, 6),
       ta=st.sampled_from("nt"), tb=st.sampled_from("nt"), beta=st.sampled_from([0.0, 1.0, -0.5]))
def test_gemm_random_shapes(m, n, k, ta, tb, beta):
    shape_a = (m, k) if ta == "n" else (k, m)
    shape_b = (k, n) if tb == "n" else (n, k)
    A, B, C = fortran(shape_a, np.float64, 1), fortran(shape_b, np.float64, 2), fortran((m, n), np.float64, 3)
    expected = 1.25 * op(A, ta) @ op(B, tb) + (beta * C if beta else 0)
    run_text(f"""
    func @k(%A: memref<f64x?x?>, %B: memref<f64x?x?>, %C: memref<f64x?x?>, %beta: f64) {{
      %alpha = constant 1.25 : f64
      gemm.{ta}.{tb} %alpha, %A, %B, %beta, %C
    }}""", [A, B, C, beta])
    close(C, expected, "f64")


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), data=st.data())
def test_cumsum_random_shapes(shape, data):
    mode = data.draw(st.integers(0, len(shape) - 1))
    A = fortran(tuple(shape), np.int64, 4)
    B = fortran(tuple(shape), np.int64, 5)
    expected = 3 * np.cumsum(A, axis=mode) - 2 * B
    mt = "x".join(["i64", *map(str, shape)])
    run_text(f"""
    func @k(%A: memref<{mt}>, %B: memref<{mt}>) {{
      %x = constant 3 : i64
      %y = constant -2 : i64
      cumsum %x, %A, {mode}, %y, %B
    }}""", [A, B])
    np.testing.assert_array_equal(B, expected)
