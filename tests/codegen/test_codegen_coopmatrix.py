"""Coopmatrix lowered to per-lane registers: load / mul_add / store vs NumPy matmul."""

from __future__ import annotations

import numpy as np
import pytest

from codegen_testlib import NUMPY, bf16_to_f32, compiled, f32_to_bf16, fortran, program
from tolerances import UNIT_ROUNDOFF, assert_within, epsilon, sum_error_bound

# (Ta, Tb, Tc, M, K, N, S): remainder rows (M % S != 0), M < S, mixed precision, complex
CASES = [
    ("f32", "f32", "f32", 16, 8, 16, 16),
    ("f32", "f32", "f32", 24, 4, 8, 16),
    ("f32", "f32", "f32", 5, 3, 7, 8),
    ("f64", "f64", "f64", 32, 8, 4, 8),
    ("f16", "f16", "f32", 16, 8, 16, 16),
    ("bf16", "bf16", "f32", 8, 16, 8, 8),
    ("i8", "i8", "i32", 16, 32, 8, 32),
    ("i16", "i8", "i64", 9, 4, 3, 8),
    ("c32", "c32", "c32", 8, 4, 4, 8),
    ("f32", "f32", "c64", 4, 4, 4, 4),
    ("f16", "f16", "f16", 8, 4, 8, 8),
    ("bf16", "bf16", "bf16", 8, 4, 8, 8),
    ("i8", "i8", "i8", 16, 8, 4, 16),
]


def mm_kernel(k: int, case) -> str:
    ta, tb, tc, M, K, N, S = case
    return f"""
func @mm{k}(%A: memref<{ta}x{M}x{K}>, %B: memref<{tb}x{K}x{N}>, %C: memref<{tc}x{M}x{N}x?>)
    attributes {{subgroup_size={S}, work_group_size=[{S}, 1]}} {{
  %gid = builtin.group_id : index
  %c = subview %C[:, :, %gid] : memref<{tc}x{M}x{N}>
  parallel {{
    %z = constant 0 : index
    %a = cooperative_matrix_load.n %A[%z, %z] : coopmatrix<{ta}x{M}x{K},matrix_a>
    %b = cooperative_matrix_load.n %B[%z, %z] : coopmatrix<{tb}x{K}x{N},matrix_b>
    %acc = cooperative_matrix_load.n %c[%z, %z] : coopmatrix<{tc}x{M}x{N},matrix_acc>
    %d = cooperative_matrix_mul_add %a, %b, %acc : coopmatrix<{tc}x{M}x{N},matrix_acc>
    cooperative_matrix_store %d, %c[%z, %z]
  }}
}}
"""


MM_SOURCE = "\n".join(mm_kernel(k, c) for k, c in enumerate(CASES))


def rand(t: str, shape, rng) -> np.ndarray:
    if t.startswith("i"):
        return fortran(rng.integers(-20, 20, shape).astype(NUMPY[t]))
    if t.startswith("c"):
        return fortran((rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(NUMPY[t]))
    v = rng.uniform(-1, 1, shape).astype(np.float32)
    return fortran(f32_to_bf16(v) if t == "bf16" else v.astype(NUMPY[t]))


def value(t: str, x: np.ndarray) -> np.ndarray:
    """Exact values for the reference product."""
    if t == "bf16":
        return bf16_to_f32(x).astype(np.float64)
    if t.startswith("i"):
        return x.astype(np.int64)
    return x.astype(np.complex128 if t.startswith("c") else np.float64)


@pytest.mark.parametrize("k", range(len(CASES)), ids=[f"{a}x{b}->{c}_{M}x{K}x{N}_S{S}" for a, b, c, M, K, N, S in CASES])
def test_mul_add_matches_numpy(device, k):
    ta, tb, tc, M, K, N, S = CASES[k]
    rng = np.random.default_rng(k)
    batch = 3
    A, B = rand(ta, (M, K), rng), rand(tb, (K, N), rng)
    C = np.asfortranarray(np.stack([rand(tc, (M, N), rng) for _ in range(batch)], axis=2))
    want = value(ta, A) @ value(tb, B)
    want = want[:, :, None] + value(tc, C)
    C_start = C.copy(order="F")
    program(MM_SOURCE)[f"mm{k}"](A, B, C, batch=batch)
    if tc.startswith("i"):
        np.testing.assert_array_equal(C, want.astype(NUMPY[tc]))  # wraps like the device
        return
    # K products and C summed in C's compute type (f32 for bf16 and f16), in any order, then rounded
    magnitude = np.abs(value(ta, A)) @ np.abs(value(tb, B))
    magnitude = magnitude[:, :, None] + np.abs(value(tc, C_start))
    work = "f32" if tc in ("bf16", "f16") else tc
    bound = sum_error_bound(K + 1, work, magnitude) + UNIT_ROUNDOFF[tc] * np.abs(want)
    assert_within(value(tc, C), want, bound, f"mm{k}")


CHECKED = """
func @checked(%A: memref<f32x?x?>, %x: index, %y: index, %O: memref<f32x?x?>, %T: memref<f32x8x16>,
              %U: memref<f32x?x?>)
    attributes {subgroup_size=8, work_group_size=[8, 1]} {
  parallel {
    %z = constant 0 : index
    %n = cooperative_matrix_load.n.both_checked %A[%x, %y] : coopmatrix<f32x16x8,matrix_acc>
    cooperative_matrix_store.both_checked %n, %O[%x, %y]
    %t = cooperative_matrix_load.t.both_checked %A[%x, %y] : coopmatrix<f32x8x16,matrix_acc>
    cooperative_matrix_store %t, %T[%z, %z]
    %r = cooperative_matrix_load.n.rows_checked %A[%x, %z] : coopmatrix<f32x16x4,matrix_b>
    cooperative_matrix_store.rows_checked %r, %U[%x, %z]
  }
}
"""


def test_checked_loads_and_stores(device):
    rng = np.random.default_rng(0)
    rows, cols, x, y = 13, 7, 4, 2
    A = fortran(rng.uniform(1, 2, (rows, cols)).astype(np.float32))
    O = fortran(np.full((rows, cols), -1, np.float32))
    T = fortran(np.full((8, 16), -1, np.float32))
    U = fortran(np.full((rows, cols), -1, np.float32))
    program(CHECKED)["checked"](A, np.int64(x), np.int64(y), O, T, U, batch=1)
    want_o = np.full((rows, cols), -1, np.float32)
    want_o[x:, y:] = A[x:, y:]
    np.testing.assert_array_equal(O, want_o)
    # T_ij = A[x + j, y + i] where in bounds, else 0
    want_t = np.zeros((8, 16), np.float32)
    for i in range(8):
        for j in range(16):
            if x + j < rows and y + i < cols:
                want_t[i, j] = A[x + j, y + i]
    np.testing.assert_array_equal(T, want_t)
    # matrix_b 16x4 rows-checked from (x, 0); stored rows-checked: rows x.. of cols 0..3
    want_u = np.full((rows, cols), -1, np.float32)
    want_u[x:, :4] = A[x:, :4]
    np.testing.assert_array_equal(U, want_u)


LOOP = """
func @kloop(%alpha: f64, %A: memref<f64x12x?>, %B: memref<f64x?x6>, %C: memref<f64x12x6>, %flag: i32)
    attributes {subgroup_size=8, work_group_size=[8, 2]} {
  parallel {
    %sg = builtin.subgroup_id : i32
    %z = constant 0 : index
    %k = size %A[1] : index
    %four = constant 4 : index
    %zero = constant 0.0 : f64
    %init = constant 1.0 : coopmatrix<f64x12x6,matrix_acc>
    %acc = for %kk = %z, %k, %four init(%c = %init) -> (coopmatrix<f64x12x6,matrix_acc>) {
      %a = cooperative_matrix_load.n %A[%z, %kk] : coopmatrix<f64x12x4,matrix_a>
      %b = cooperative_matrix_load.n %B[%kk, %z] : coopmatrix<f64x4x6,matrix_b>
      %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<f64x12x6,matrix_acc>
      yield (%d)
    }
    %s = cooperative_matrix_scale %alpha, %acc : coopmatrix<f64x12x6,matrix_acc>
    %c0 = constant 0 : i32
    %on = cmp.ne %flag, %c0 : bool
    %r = if %on -> (coopmatrix<f64x12x6,matrix_acc>) {
      %neg = arith.neg %s : coopmatrix<f64x12x6,matrix_acc>
      %sum = arith.add %s, %neg : coopmatrix<f64x12x6,matrix_acc>
      %t = arith.sub %s, %sum : coopmatrix<f64x12x6,matrix_acc>
      yield (%t)
    } else {
      yield (%acc)
    }
    %f = cast %r : coopmatrix<f32x12x6,matrix_acc>
    %g = cast %f : coopmatrix<f64x12x6,matrix_acc>
    store.atomic_add %zero, %C[%z, %z]
    cooperative_matrix_store.atomic_add %g, %C[%z, %z]
  }
}
"""


@pytest.mark.parametrize("flag", [0, 1])
def test_loop_carried_coopmatrix_and_atomic_store(device, flag):
    rng = np.random.default_rng(flag)
    K = 12
    A = fortran(rng.uniform(-1, 1, (12, K)))
    B = fortran(rng.uniform(-1, 1, (K, 6)))
    C = fortran(np.zeros((12, 6)))
    program(LOOP)["kloop"](np.float64(0.5), A, B, C, np.int32(flag), batch=4)
    acc = A @ B + 1.0
    r = 0.5 * acc if flag else acc
    want = 4 * 2 * r.astype(np.float32).astype(np.float64)  # 4 groups x 2 subgroups, atomically
    # the f64 product may differ from NumPy's within its sum bound, and its rounding to f32
    # then go to the other neighbour: one f32 ULP; the 8 adds of equal values are exact
    f64_error = sum_error_bound(K + 1, "f64", np.abs(A) @ np.abs(B) + 1.0) * (0.5 if flag else 1)
    assert_within(C, want, 8 * (epsilon("f32") * np.abs(r) + f64_error), "kloop")


def test_validates():
    assert compiled(MM_SOURCE).spirv and compiled(LOOP).spirv
