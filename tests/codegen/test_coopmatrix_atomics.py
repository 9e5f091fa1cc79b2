"""cooperative_matrix_atomic_load / _store / _add|max|min (newest language) on the device and in
the reference interpreter, against NumPy.

Every work-group updates one shared matrix with its own; on the device the groups race, so
the old values each group got back are checked by what every order shares (per entry they
chain: sorted, each is the one before updated by that group's value). The reference runs the
groups in order, which NumPy replays exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen_testlib import NUMPY, checked, fortran, program
from tinyc.reference import run as run_reference

GROUPS = 24
# (type, op, R, C, S, use, transpose, checked flag): the shared matrix M is R×C (C×R with .t)
UPDATES = [("f32", "add", 16, 4, 16, "matrix_acc", "", ""), ("i32", "add", 5, 3, 4, "matrix_acc", ".t", ""),
           ("f64", "add", 4, 4, 4, "matrix_b", "", ""), ("c32", "add", 8, 2, 8, "matrix_a", "", ""),
           ("f16", "add", 8, 2, 4, "matrix_acc", "", ""), ("i16", "add", 4, 3, 4, "matrix_b", ".t", ""),
           ("i32", "max", 8, 3, 8, "matrix_acc", "", ""), ("f32", "min", 4, 4, 4, "matrix_b", "", ""),
           ("i64", "min", 6, 2, 4, "matrix_a", ".t", ""), ("f32", "add", 8, 4, 4, "matrix_acc", "", ".both_checked")]


def update_kernel(k: int) -> str:
    t, op, R, C, S, use, tr, flag = UPDATES[k]
    rows, cols = (C, R) if tr else (R, C)
    if flag:
        rows, cols = rows - 1, cols - 2  # the block reaches one row and two columns past M
    coop = f"coopmatrix<{t}x{R}x{C},{use}>"
    return f"""
func @u{k}(%A: memref<{t}x{R}x{C}x?>, %M: memref<{t}x{rows}x{cols}>, %O: memref<{t}x{R}x{C}x?>)
    attributes {{subgroup_size={S}, work_group_size=[{S}, 1]}} {{
  %gid = builtin.group_id : index
  %a = subview %A[:, :, %gid] : memref<{t}x{R}x{C}>
  %o = subview %O[:, :, %gid] : memref<{t}x{R}x{C}>
  parallel {{
    %z = constant 0 : index
    %m = cooperative_matrix_load %a[%z, %z] : {coop}
    %old = cooperative_matrix_atomic_{op}{tr}{flag}.device %m, %M[%z, %z] : {coop}
    cooperative_matrix_store %old, %o[%z, %z]
  }}
}}
"""


SOURCE = "\n".join(update_kernel(k) for k in range(len(UPDATES)))
IDS = [f"{op}_{t}_{R}x{C}_{use}{tr}{flag}" for t, op, R, C, S, use, tr, flag in UPDATES]


def inputs(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Small positive integers (exact sums, strictly rising chains); M starts at small values."""
    t, op, R, C, S, use, tr, flag = UPDATES[k]
    rng = np.random.default_rng(k)
    A = rng.integers(1, 4, (R, C, GROUPS)).astype(np.float64)
    M = rng.integers(-3, 3, (C, R) if tr else (R, C)).astype(np.float64)
    if flag:
        M = M[:-1, :-2]
    if t == "c32":
        A = A + 1j * rng.integers(1, 4, A.shape)
        M = M + 1j * rng.integers(-3, 3, M.shape)
    return fortran(A.astype(NUMPY[t])), fortran(M.astype(NUMPY[t]))


def in_matrix_order(k: int, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """M as the matrix's entries (transposed back) and which entries exist (checked flag)."""
    t, op, R, C, S, use, tr, flag = UPDATES[k]
    full = np.zeros((C, R) if tr else (R, C), M.dtype)
    inside = np.zeros(full.shape, bool)
    full[:M.shape[0], :M.shape[1]] = M
    inside[:M.shape[0], :M.shape[1]] = True
    return (full.T, inside.T) if tr else (full, inside)


@pytest.mark.parametrize("k", range(len(UPDATES)), ids=IDS)
def test_groups_update_one_matrix_on_the_device(device, k):
    t, op, *_ = UPDATES[k]
    A, M = inputs(k)
    start, inside = in_matrix_order(k, M.copy())
    O = fortran(np.zeros_like(A))
    program(SOURCE)[f"u{k}"](A, M, O, batch=GROUPS)
    final, _ = in_matrix_order(k, M)
    f = {"add": np.sum, "max": np.max, "min": np.min}[op]
    combined = f(np.concatenate([start[..., None], A], axis=2), axis=2)
    np.testing.assert_array_equal(final[inside], combined[inside])
    assert (O[~inside] == 0).all()  # skipped entries return 0
    for i, j in zip(*np.nonzero(inside)):
        olds, values = O[i, j], A[i, j]
        if op == "add":
            for part in ([np.real, np.imag] if t == "c32" else [lambda x: x]):
                order = np.argsort(part(olds), kind="stable")
                chain = part(start[i, j]) + np.concatenate([[0], np.cumsum(part(values)[order])])
                np.testing.assert_array_equal(part(olds)[order], chain[:-1])
        else:
            first = np.min if op == "max" else np.max
            assert first(olds) == start[i, j]
            assert set(olds.tolist()) <= {start[i, j], *values.tolist()}


@pytest.mark.parametrize("k", range(len(UPDATES)), ids=IDS)
def test_groups_update_one_matrix_in_the_reference(k):
    t, op, *_ = UPDATES[k]
    A, M = inputs(k)
    current, inside = in_matrix_order(k, M.copy())
    f = {"add": np.add, "max": np.maximum, "min": np.minimum}[op]
    want_O = np.zeros_like(A)
    for g in range(GROUPS):  # the reference's schedule: group after group
        want_O[..., g] = np.where(inside, current, 0)
        current = np.where(inside, f(current, A[..., g]), current)
    O = fortran(np.zeros_like(A))
    run_reference(checked(SOURCE)[f"u{k}"], [A, M, O], GROUPS)
    np.testing.assert_array_equal(O, want_O)
    np.testing.assert_array_equal(in_matrix_order(k, M)[0][inside], current[inside])


LOAD_STORE = """
func @ls(%A: memref<f32x8x6>, %B: memref<f32x6x7>, %C: memref<f32x8x6>) attributes {subgroup_size=4} {
  parallel {
    %z = constant 0 : index
    %one = constant 1 : index
    %m = cooperative_matrix_atomic_load.t.rows_checked.subgroup.acquire %A[%z, %one] : coopmatrix<f32x6x8,matrix_acc>
    cooperative_matrix_atomic_store.t.cols_checked.device.release %m, %B[%one, %z]
    %n = cooperative_matrix_atomic_load.both_checked %A[%one, %one] : coopmatrix<f32x8x6,matrix_b>
    cooperative_matrix_atomic_store %n, %C[%z, %z]
  }
}
"""


def test_atomic_load_and_store_with_transpose_and_checked_flags(device):
    A = fortran(np.arange(48, dtype=np.float32).reshape(8, 6) + 1)
    # load .t at (0, 1): m[i, j] = A[j, 1 + i], rows checked along A's columns (1 + i < 6)
    m = np.zeros((6, 8), np.float32)
    for i in range(6):
        for j in range(8):
            m[i, j] = A[j, 1 + i] if 1 + i < 6 else 0
    # store .t at (1, 0): B[1 + j, i] = m[i, j], columns checked along B's rows (1 + j < 6)
    want_B = np.zeros((6, 7), np.float32)
    for i in range(6):
        for j in range(8):
            if 1 + j < 6:
                want_B[1 + j, i] = m[i, j]
    want_C = np.zeros((8, 6), np.float32)
    want_C[:7, :5] = A[1:, 1:]  # both checked: rows and columns past A are 0
    for run in (lambda a: program(LOAD_STORE)["ls"](*a, batch=1),
                lambda a: run_reference(checked(LOAD_STORE)["ls"], a, 1)):
        B, C = fortran(np.zeros((6, 7), np.float32)), fortran(np.zeros((8, 6), np.float32))
        run([A, B, C])
        np.testing.assert_array_equal(B, want_B)
        np.testing.assert_array_equal(C, want_C)


MATRIX_B = """
func @b(%A: memref<i32x4x3>, %M: memref<i32x4x3>, %E: memref<i32x4x12>) attributes {subgroup_size=4} {
  parallel {
    %z = constant 0 : index
    %lane = builtin.subgroup_local_id : i32
    %l = cast %lane : index
    %m = cooperative_matrix_load %A[%z, %z] : coopmatrix<i32x4x3,matrix_b>
    %old = cooperative_matrix_atomic_add %m, %M[%z, %z] : coopmatrix<i32x4x3,matrix_b>
""" + "".join(f"""    %e{k} = cooperative_matrix_extract %old[{k}] : i32
    %k{k} = constant {k} : index
    store %e{k}, %E[%l, %k{k}]
""" for k in range(12)) + """  }
}
"""


def test_every_work_item_gets_the_old_values_of_a_matrix_b(device):
    """Row i of a matrix_b is updated by lane i mod S only; every lane holds all of it after."""
    A = fortran(np.arange(12, dtype=np.int32).reshape(4, 3) + 1)
    for run in (lambda a: program(MATRIX_B)["b"](*a, batch=1),
                lambda a: run_reference(checked(MATRIX_B)["b"], a, 1)):
        M = fortran(np.arange(12, dtype=np.int32).reshape(4, 3) * 10)
        start = M.copy()
        E = fortran(np.zeros((4, 12), np.int32))
        run([A, M, E])
        np.testing.assert_array_equal(M, start + A)
        np.testing.assert_array_equal(E, np.tile(start.reshape(1, 12), (4, 1)))  # component i·C + j
