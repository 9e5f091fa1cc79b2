"""Cooperative-matrix instructions (lowered IR) in the reference, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from reference_testlib import fortran, run_text
from tinyc.reference import ReferenceFault

TWO_SUBGROUPS = "attributes {work_group_size=[32, 1], subgroup_size=16}"


def test_load_mul_add_scale_store_per_subgroup():
    A, B = fortran((16, 8), seed=1), fortran((8, 16), seed=2)
    C = np.zeros((16, 16), dtype=np.float32, order="F")
    run_text(f"""
    func @k(%A: memref<f32x16x8>, %B: memref<f32x8x16>, %C: memref<f32x16x16>) {TWO_SUBGROUPS} {{
      parallel {{
        %sg = builtin.subgroup_id : i32
        %c0 = constant 0 : index
        %c8 = constant 8 : index
        %sgi = cast %sg : index
        %col = arith.mul %sgi, %c8 : index
        %a = cooperative_matrix_load.n %A[%c0, %c0] : coopmatrix<f32x16x8,matrix_a>
        %b = cooperative_matrix_load.n %B[%c0, %col] : coopmatrix<f32x8x8,matrix_b>
        %acc = constant 0.0 : coopmatrix<f32x16x8,matrix_acc>
        %d = cooperative_matrix_mul_add %a, %b, %acc : coopmatrix<f32x16x8,matrix_acc>
        %two = constant 2.0 : f32
        %e = cooperative_matrix_scale %two, %d : coopmatrix<f32x16x8,matrix_acc>
        cooperative_matrix_store %e, %C[%c0, %col]
      }}
    }}""", [A, B, C])
    np.testing.assert_allclose(C, 2 * A @ B, rtol=1e-5)


def test_k_loop_carrying_an_accumulator_with_transposed_load():
    At, B = fortran((8, 16), seed=1), fortran((8, 16), seed=2)  # A = At^T
    C = fortran((16, 16), seed=3)
    expected = At.T @ B + C
    run_text(f"""
    func @k(%At: memref<f32x8x16>, %B: memref<f32x8x16>, %C: memref<f32x16x16>) {TWO_SUBGROUPS} {{
      parallel {{
        %sg = builtin.subgroup_id : i32
        %c0 = constant 0 : index
        %c4 = constant 4 : index
        %c8 = constant 8 : index
        %sgi = cast %sg : index
        %col = arith.mul %sgi, %c8 : index
        %init = cooperative_matrix_load.n %C[%c0, %col] : coopmatrix<f32x16x8,matrix_acc>
        %r = for %k = %c0, %c8, %c4 init(%acc=%init) -> (coopmatrix<f32x16x8,matrix_acc>) {{
          %a = cooperative_matrix_load.t %At[%k, %c0] : coopmatrix<f32x16x4,matrix_a>
          %b = cooperative_matrix_load.n %B[%k, %col] : coopmatrix<f32x4x8,matrix_b>
          %n = cooperative_matrix_mul_add %a, %b, %acc : coopmatrix<f32x16x8,matrix_acc>
          yield (%n)
        }}
        cooperative_matrix_store %r, %C[%c0, %col]
      }}
    }}""", [At, B, C])
    np.testing.assert_allclose(C, expected, rtol=1e-5)


def test_checked_load_and_store_at_the_edge():
    A = fortran((10, 8), seed=1)
    C = np.full((10, 8), -1.0, dtype=np.float32, order="F")
    run_text("""
    func @k(%A: memref<f32x10x8>, %C: memref<f32x10x8>) attributes {work_group_size=[16, 1], subgroup_size=16} {
      parallel {
        %c0 = constant 0 : index
        %c4 = constant 4 : index
        %a = cooperative_matrix_load.n.rows_checked %A[%c4, %c0] : coopmatrix<f32x8x8,matrix_acc>
        %b = arith.add %a, %a : coopmatrix<f32x8x8,matrix_acc>
        %c = arith.neg %b : coopmatrix<f32x8x8,matrix_acc>
        cooperative_matrix_store.rows_checked %c, %C[%c4, %c0]
      }
    }""", [A, C])
    expected = np.full((10, 8), -1.0, dtype=np.float32)
    expected[4:] = -2 * A[4:]
    np.testing.assert_array_equal(C, expected)


def test_unchecked_block_outside_the_memref_faults():
    with pytest.raises(ReferenceFault, match="outside"):
        run_text("""
        func @k(%A: memref<f32x10x8>) attributes {work_group_size=[16, 1], subgroup_size=16} {
          parallel {
            %c0 = constant 0 : index
            %c4 = constant 4 : index
            %a = cooperative_matrix_load.n %A[%c4, %c0] : coopmatrix<f32x8x8,matrix_acc>
          }
        }""", [fortran((10, 8))])


def test_cast_and_atomic_add_store():
    A = fortran((8, 8), np.float32, seed=1)
    C = fortran((8, 8), np.float64, seed=2)
    expected = C + 2 * A.astype(np.float64)
    run_text(f"""
    func @k(%A: memref<f32x8x8>, %C: memref<f64x8x8>) {TWO_SUBGROUPS} {{
      parallel {{
        %c0 = constant 0 : index
        %a = cooperative_matrix_load.n %A[%c0, %c0] : coopmatrix<f32x8x8,matrix_acc>
        %d = cast %a : coopmatrix<f64x8x8,matrix_acc>
        cooperative_matrix_store.atomic_add %d, %C[%c0, %c0]
      }}
    }}""", [A, C])  # both subgroups add
    np.testing.assert_allclose(C, expected, rtol=1e-12)
