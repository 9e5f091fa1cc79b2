"""SPMD instructions: cooperative matrices and subgroup operations."""

from __future__ import annotations

import pytest

from tests.verifier.conftest import expect_error, expect_ok, fn


ARGS = "%A: memref<f32x32x32>, %H: memref<f16x32x32>, %V: memref<f32x32>, %T: memref<f32x4x4x4>"

PRELUDE = """\
parallel {
  %x = constant 0 : index
  %y = constant 8 : index
  %i32 = constant 0 : i32
  %idx = constant 0 : index
  %b = constant true : bool
  %f16 = constant 1.0 : f16
  %f32 = constant 1.0 : f32
  %f64 = constant 1.0 : f64
  %c32 = constant [1.0, 0.0] : c32
  %a16 = constant 1.0 : coopmatrix<f16x8x16,matrix_a>
  %b16 = constant 1.0 : coopmatrix<f16x16x8,matrix_b>
  %bb16 = constant 1.0 : coopmatrix<bf16x16x8,matrix_b>
  %a32 = constant 1.0 : coopmatrix<f32x8x16,matrix_a>
  %b32 = constant 1.0 : coopmatrix<f32x16x8,matrix_b>
  %ai8 = constant 1 : coopmatrix<i8x8x16,matrix_a>
  %bi8 = constant 1 : coopmatrix<i8x16x8,matrix_b>
  %acc = constant 0.0 : coopmatrix<f32x8x8,matrix_acc>
  %acc16 = constant 0.0 : coopmatrix<f16x8x8,matrix_acc>
  %acci = constant 0 : coopmatrix<i32x8x8,matrix_acc>
  %accc = constant [0.0, 0.0] : coopmatrix<c32x8x8,matrix_acc>
"""


def spmd(line: str) -> str:
    return fn(PRELUDE + "  " + line + "\n}", ARGS)


def check_ok(line: str) -> None:
    expect_ok(spmd(line))


def check_rejected(line: str, message: str, at: str) -> None:
    expect_error(spmd(line), message, at=at, after=line)


# ---------------------------------------------------------------- cooperative_matrix_load

@pytest.mark.parametrize("line", [
    "%m = cooperative_matrix_load.n %A[%x, %y] : coopmatrix<f32x8x16,matrix_a>",
    "%m = cooperative_matrix_load.t.rows_checked %H[%x, %y] : coopmatrix<f16x16x8,matrix_b>",
    "%m = cooperative_matrix_load.n.both_checked %A[%x, %y] : coopmatrix<f32x8x8,matrix_acc>",
])
def test_coop_load_ok(line):
    check_ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("%m = cooperative_matrix_load.n %V[%x, %y] : coopmatrix<f32x8x16,matrix_a>",
     "cooperative_matrix_load: M must have order 2, got order 1 (memref<f32x32>)", "%V"),
    ("%m = cooperative_matrix_load.n %f32[%x, %y] : coopmatrix<f32x8x16,matrix_a>",
     "cooperative_matrix_load: M must be a memref, got f32", "%f32"),
    ("%m = cooperative_matrix_load.n %A[%i32, %y] : coopmatrix<f32x8x16,matrix_a>",
     "cooperative_matrix_load: row position must have type index, got i32", "%i32"),
    ("%m = cooperative_matrix_load.n %A[%x, %i32] : coopmatrix<f32x8x16,matrix_a>",
     "cooperative_matrix_load: column position must have type index, got i32", "%i32"),
    ("%m = cooperative_matrix_load.n %A[%x, %y] : coopmatrix<f16x8x16,matrix_a>",
     "cooperative_matrix_load: the component type of coopmatrix<f16x8x16,matrix_a> must equal the "
     "element type of M (f32)", "coopmatrix"),
])
def test_coop_load_rejected(line, message, at):
    check_rejected(line, message, at)


# ---------------------------------------------------------------- cooperative_matrix_mul_add

@pytest.mark.parametrize("line", [
    "%d = cooperative_matrix_mul_add %a16, %b16, %acc : coopmatrix<f32x8x8,matrix_acc>",
    "%d = cooperative_matrix_mul_add %a32, %b32, %acc : coopmatrix<f32x8x8,matrix_acc>",
    "%d = cooperative_matrix_mul_add %ai8, %bi8, %acci : coopmatrix<f32x8x8,matrix_acc>",
    "%d = cooperative_matrix_mul_add %a16, %b16, %acc : coopmatrix<f16x8x8,matrix_acc>",
    "%d = cooperative_matrix_mul_add %a16, %b32, %accc : coopmatrix<c32x8x8,matrix_acc>",
])
def test_coop_mul_add_ok(line):
    check_ok(line)


MMA = "%d = cooperative_matrix_mul_add"


@pytest.mark.parametrize("line, message, at", [
    (f"{MMA} %b16, %b16, %acc : coopmatrix<f32x8x8,matrix_acc>",
     "cooperative_matrix_mul_add: A must have use matrix_a, got coopmatrix<f16x16x8,matrix_b>", "%b16"),
    (f"{MMA} %a16, %a16, %acc : coopmatrix<f32x8x8,matrix_acc>",
     "cooperative_matrix_mul_add: B must have use matrix_b, got coopmatrix<f16x8x16,matrix_a>", "%a16, %acc"),
    (f"{MMA} %a16, %b16, %a16 : coopmatrix<f32x8x8,matrix_acc>",
     "cooperative_matrix_mul_add: C must have use matrix_acc, got coopmatrix<f16x8x16,matrix_a>", "%a16 :"),
    (f"{MMA} %f32, %b16, %acc : coopmatrix<f32x8x8,matrix_acc>",
     "cooperative_matrix_mul_add: A must be a coopmatrix, got f32", "%f32"),
])
def test_coop_mul_add_operands_rejected(line, message, at):
    check_rejected(line, message, at)


def _mma_source(a: str, b: str, c: str, d: str) -> str:
    return spmd(f"%ma = constant 1.0 : coopmatrix<{a},matrix_a>\n  %mb = constant 1.0 : coopmatrix<{b},"
                f"matrix_b>\n  %mc = constant 1.0 : coopmatrix<{c},matrix_acc>\n"
                f"  %d = cooperative_matrix_mul_add %ma, %mb, %mc : coopmatrix<{d}>")


@pytest.mark.parametrize("a, b, c, d, message, at", [
    ("f32x8x16", "f32x8x8", "f32x8x8", "f32x8x8,matrix_acc",
     "columns of A (16) do not match rows of B (8)", "%d ="),
    ("f32x8x16", "f32x16x8", "f32x4x8", "f32x4x8,matrix_acc", "rows of C (4) do not match rows of A (8)",
     "%d ="),
    ("f32x8x16", "f32x16x8", "f32x8x4", "f32x8x4,matrix_acc",
     "columns of C (4) do not match columns of B (8)", "%d ="),
    ("f32x8x16", "f32x16x8", "f32x8x8", "f32x8x16,matrix_acc",
     "the result shape 8x16 must equal the shape of C (8x8)", "coopmatrix<f32x8x16,matrix_acc>"),
    ("f32x8x16", "f32x16x8", "f32x8x8", "f32x8x8,matrix_a",
     "the result must have use matrix_acc, got coopmatrix<f32x8x8,matrix_a>", "coopmatrix<f32x8x8,matrix_a>"),
    ("f16x8x16", "bf16x16x8", "f32x8x8", "f32x8x8,matrix_acc",
     "component types of A (f16) and B (bf16) cannot be promoted to a common type", "%d ="),
    ("f32x8x16", "f32x16x8", "f16x8x8", "f16x8x8,matrix_acc",
     "f32, the promoted component type of A and B, does not promote to the component type of C (f16)",
     "%d ="),
    ("f32x8x16", "f32x16x8", "c32x8x8", "f32x8x8,matrix_acc",
     "the component type of C must be castable to the result's: cannot cast c32 to f32: casts from "
     "complex to non-complex types are forbidden", "coopmatrix<f32x8x8,matrix_acc>"),
])
def test_coop_mul_add_rejected(a, b, c, d, message, at):
    source = _mma_source(a, b, c, d)
    if c.startswith("c32"):
        source = source.replace("%mc = constant 1.0", "%mc = constant [1.0, 0.0]")
    expect_error(source, f"cooperative_matrix_mul_add: {message}", at=at, after="%d =")


# ---------------------------------------------------------------- cooperative_matrix_scale

@pytest.mark.parametrize("line", [
    "%s = cooperative_matrix_scale %f32, %acc : coopmatrix<f32x8x8,matrix_acc>",
    "%s = cooperative_matrix_scale %f16, %a16 : coopmatrix<f16x8x16,matrix_a>",
])
def test_coop_scale_ok(line):
    check_ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("%s = cooperative_matrix_scale %f64, %acc : coopmatrix<f32x8x8,matrix_acc>",
     "cooperative_matrix_scale: scalar must have type f32 (the component type of "
     "coopmatrix<f32x8x8,matrix_acc>), got f64", "%f64"),
    ("%s = cooperative_matrix_scale %f32, %acc : coopmatrix<f32x8x8,matrix_a>",
     "cooperative_matrix_scale: result type must be coopmatrix<f32x8x8,matrix_acc> (the type of the "
     "matrix), got coopmatrix<f32x8x8,matrix_a>", "coopmatrix"),
    ("%s = cooperative_matrix_scale %f32, %f32 : coopmatrix<f32x8x8,matrix_a>",
     "cooperative_matrix_scale: matrix must be a coopmatrix, got f32", "%f32 :"),
    ("%s = cooperative_matrix_scale %acc, %acc : coopmatrix<f32x8x8,matrix_acc>",
     "cooperative_matrix_scale: scalar must have a scalar type, got coopmatrix<f32x8x8,matrix_acc>", "%acc"),
])
def test_coop_scale_rejected(line, message, at):
    check_rejected(line, message, at)


# ---------------------------------------------------------------- cooperative_matrix_store

@pytest.mark.parametrize("line", [
    "cooperative_matrix_store %acc, %A[%x, %y]",
    "cooperative_matrix_store.rows_checked.atomic_add %acc, %A[%x, %y]",
    "cooperative_matrix_store.atomic %a16, %H[%x, %y]",
])
def test_coop_store_ok(line):
    check_ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("cooperative_matrix_store %a16, %A[%x, %y]",
     "cooperative_matrix_store: the component type of A (f16) must equal the element type of M (f32)",
     "%a16"),
    ("cooperative_matrix_store %acc, %T[%x, %y]",
     "cooperative_matrix_store: M must have order 2, got order 3 (memref<f32x4x4x4>)", "%T"),
    ("cooperative_matrix_store %acc, %A[%i32, %y]",
     "cooperative_matrix_store: row position must have type index, got i32", "%i32"),
    ("cooperative_matrix_store %acc, %A[%x, %i32]",
     "cooperative_matrix_store: column position must have type index, got i32", "%i32"),
    ("cooperative_matrix_store %f32, %A[%x, %y]",
     "cooperative_matrix_store: A must be a coopmatrix, got f32", "%f32"),
])
def test_coop_store_rejected(line, message, at):
    check_rejected(line, message, at)


# ---------------------------------------------------------------- subgroup operations

@pytest.mark.parametrize("line", [
    "%r = subgroup_broadcast %f32, %i32 : f32", "%r = subgroup_broadcast %c32, %i32 : c32",
    "%r = subgroup_add.reduce %c32 : c32", "%r = subgroup_add.exclusive_scan %idx : index",
    "%r = subgroup_max.inclusive_scan %f32 : f32", "%r = subgroup_min.exclusive_scan %i32 : i32",
    "%r = subgroup_min.reduce %f16 : f16",
])
def test_subgroup_ok(line):
    check_ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("%r = subgroup_broadcast %f32, %idx : f32", "subgroup_broadcast: lane must have type i32, got index",
     "%idx"),
    ("%r = subgroup_broadcast %f32, %i32 : f64",
     "subgroup_broadcast: result type must be f32 (the type of the value), got f64", "f64\n"),
    ("%r = subgroup_broadcast %b, %i32 : f32", "subgroup_broadcast: value must have a scalar type, got bool",
     "%b"),
    ("%r = subgroup_max.reduce %c32 : c32",
     "subgroup_max.reduce: operand must not be complex for subgroup_max, got c32", "%c32"),
    ("%r = subgroup_min.inclusive_scan %c32 : c32",
     "subgroup_min.inclusive_scan: operand must not be complex for subgroup_min, got c32", "%c32"),
    ("%r = subgroup_add.reduce %f32 : f64",
     "subgroup_add.reduce: result type must be f32 (the operand type), got f64", "f64\n"),
    ("%r = subgroup_add.reduce %b : f32", "subgroup_add.reduce: operand must have a scalar type, got bool",
     "%b"),
    ("%r = subgroup_add.reduce %acc : f32",
     "subgroup_add.reduce: operand must have a scalar type, got coopmatrix<f32x8x8,matrix_acc>", "%acc"),
])
def test_subgroup_rejected(line, message, at):
    check_rejected(line, message, at)
