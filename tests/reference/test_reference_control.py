"""for, if and foreach in the reference interpreter against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from reference_testlib import run_text
from tinyc.reference import ReferenceFault, ReferenceUnsupported


def fibonacci(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def test_for_with_carried_values_fibonacci_from_the_spec():
    out = np.zeros(2, dtype=np.int64)
    run_text("""
    func @k(%out: memref<i64x2>) {
      %from = constant 2 : i32
      %to = constant 6 : i32
      %f0 = constant 0 : i64
      %f1 = constant 1 : i64
      %r1, %r2 = for %n:i32 = %from, %to init(%a=%f0, %b=%f1) -> (i64, i64) {
        %s = arith.add %a, %b : i64
        yield (%b, %s)
      }
      %c0 = constant 0 : index
      %c1 = constant 1 : index
      store %r1, %out[%c0]
      store %r2, %out[%c1]
    }""", [out])
    assert list(out) == [fibonacci(4), fibonacci(5)]


def test_for_fibonacci_stays_exact_in_i64():
    out = np.zeros(1, dtype=np.int64)
    run_text("""
    func @k(%n: index, %out: memref<i64x1>) {
      %c0 = constant 0 : index
      %f0 = constant 0 : i64
      %f1 = constant 1 : i64
      %fa, %fb = for %i = %c0, %n init(%a=%f0, %b=%f1) -> (i64, i64) {
        %s = arith.add %a, %b : i64
        yield (%b, %s)
      }
      store %fa, %out[%c0]
    }""", [90, out])
    assert out[0] == fibonacci(90)


@pytest.mark.parametrize("lo, hi, step", [(0, 10, 3), (5, 5, 1), (7, 3, 1), (-4, 4, 2)])
def test_for_with_step_visits_lo_to_hi_exclusive(lo, hi, step):
    out = np.zeros(1, dtype=np.int32)
    run_text("""
    func @k(%lo: i32, %hi: i32, %st: i32, %out: memref<i32x1>) {
      %zero = constant 0 : i32
      %r = for %i:i32 = %lo, %hi, %st init(%acc=%zero) -> (i32) {
        %t = arith.mul %acc, %st : i32
        %u = arith.add %t, %i : i32
        yield (%u)
      }
      %c0 = constant 0 : index
      store %r, %out[%c0]
    }""", [lo, hi, step, out])
    acc = 0
    for i in range(lo, hi, step):
        acc = acc * step + i
    assert out[0] == acc


def test_nested_for_without_carried_values_and_an_empty_foreach():
    B = np.zeros((3, 4), dtype=np.float32, order="F")
    run_text("""
    func @k(%B: memref<f32x3x4>) {
      %c0 = constant 0 : index
      %c4 = constant 4 : index
      %one = constant 1.0 : f32
      foreach (%i, %j) = (%c0, %c0), (%c4, %c0) {
        store %one, %B[%i, %j]
      }
      for %k = %c0, %c4 {
        %col = subview %B[:, %k] : memref<f32x3,strided<1>>
        for %m = %c0, %k {
          %n = constant 3 : index
          foreach (%i) = (%c0), (%n) {
            %v = load %col[%i] : f32
            %w = arith.add %v, %one : f32
            store %w, %col[%i]
          }
        }
      }
    }""", [B])
    np.testing.assert_array_equal(B, np.tile(np.arange(4, dtype=np.float32), (3, 1)))


@pytest.mark.parametrize("value", [3, 20])
def test_if_with_yields(value):
    out = np.zeros(1, dtype=np.int32)
    run_text("""
    func @k(%x: i32, %out: memref<i32x1>) {
      %c16 = constant 16 : i32
      %1 = cmp.lt %x, %c16 : bool
      %y = if %1 -> (i32) {
        yield (%x)
      } else {
        %c = constant 16 : i32
        yield (%c)
      }
      %c0 = constant 0 : index
      store %y, %out[%c0]
    }""", [value, out])
    assert out[0] == min(value, 16)


def test_if_without_else_and_nested():
    out = np.zeros(2, dtype=np.float64)
    run_text("""
    func @k(%x: f64, %out: memref<f64x2>) {
      %c0 = constant 0 : index
      %c1 = constant 1 : index
      %zero = constant 0.0 : f64
      %pos = cmp.gt %x, %zero : bool
      if %pos {
        store %x, %out[%c0]
        %big = constant 10.0 : f64
        %b = cmp.gt %x, %big : bool
        if %b {
          store %big, %out[%c1]
        }
      }
    }""", [np.float64(12.5), out])
    assert list(out) == [12.5, 10.0]


def test_foreach_writes_a_2d_array():
    A = np.full((6, 7), -1.0, dtype=np.float32, order="F")
    run_text("""
    func @k(%A: memref<f32x6x7>) {
      %c1 = constant 1 : index
      %c2 = constant 2 : index
      %c5 = constant 5 : index
      %c6 = constant 6 : index
      %ten = constant 10.0 : f32
      foreach (%i, %j) = (%c1, %c2), (%c5, %c6) {
        %fi = cast %i : f32
        %fj = cast %j : f32
        %t = arith.mul %fj, %ten : f32
        %v = arith.add %fi, %t : f32
        store %v, %A[%i, %j]
      }
    }""", [A])
    expected = np.full((6, 7), -1.0, dtype=np.float32)
    for i in range(1, 5):
        for j in range(2, 6):
            expected[i, j] = i + 10 * j
    np.testing.assert_array_equal(A, expected)


def test_foreach_with_i32_loop_type_and_divergent_if():
    out = np.zeros(10, dtype=np.int32)
    run_text("""
    func @k(%out: memref<i32x10>) {
      %c0 = constant 0 : i32
      %c10 = constant 10 : i32
      %two = constant 2 : i32
      foreach (%i):i32 = (%c0), (%c10) {
        %r = arith.rem %i, %two : i32
        %odd = cmp.ne %r, %c0 : bool
        %v = if %odd -> (i32) {
          %m = arith.mul %i, %i : i32
          yield (%m)
        } else {
          %n = arith.neg %i : i32
          yield (%n)
        }
        %idx = cast %i : index
        store %v, %out[%idx]
      }
    }""", [out])
    assert out.tolist() == [i * i if i % 2 else -i for i in range(10)]


def test_foreach_with_per_iteration_trip_counts():
    out = np.zeros(8, dtype=np.int64)
    run_text("""
    func @k(%out: memref<i64x8>) {
      %c0 = constant 0 : index
      %c8 = constant 8 : index
      foreach (%i) = (%c0), (%c8) {
        %zero = constant 0 : i64
        %s = for %j = %c0, %i init(%acc=%zero) -> (i64) {
          %jj = cast %j : i64
          %t = arith.add %acc, %jj : i64
          yield (%t)
        }
        store %s, %out[%i]
      }
    }""", [out])
    assert out.tolist() == [i * (i - 1) // 2 for i in range(8)]


def test_foreach_does_not_emulate_subgroup_operations():
    with pytest.raises(ReferenceUnsupported, match="foreach"):
        run_text("""
        func @k(%A: memref<f32x4>) {
          %c0 = constant 0 : index
          %c4 = constant 4 : index
          foreach (%i) = (%c0), (%c4) {
            %v = load %A[%i] : f32
            %s = subgroup_add.reduce %v : f32
          }
        }""", [np.zeros(4, np.float32)])


def test_divergent_division_by_zero_only_faults_on_active_lanes():
    out = np.zeros(4, dtype=np.int32)
    d = np.array([2, 0, 4, 0], dtype=np.int32)
    run_text("""
    func @k(%d: memref<i32x4>, %out: memref<i32x4>) {
      %c0 = constant 0 : index
      %c4 = constant 4 : index
      %z = constant 0 : i32
      %h = constant 100 : i32
      foreach (%i) = (%c0), (%c4) {
        %x = load %d[%i] : i32
        %nz = cmp.ne %x, %z : bool
        if %nz {
          %q = arith.div %h, %x : i32
          store %q, %out[%i]
        }
      }
    }""", [d, out])
    assert out.tolist() == [50, 0, 25, 0]
    d[1] = 0
    with pytest.raises(ReferenceFault, match="division by zero"):
        run_text("""
        func @k(%d: memref<i32x4>) {
          %c0 = constant 0 : index
          %c4 = constant 4 : index
          %h = constant 100 : i32
          foreach (%i) = (%c0), (%c4) {
            %x = load %d[%i] : i32
            %q = arith.div %h, %x : i32
          }
        }""", [d])
