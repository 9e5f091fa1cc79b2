"""Collective instructions: alloca, the BLAS-like ones, foreach, parallel."""

from __future__ import annotations

import pytest

from tests.verifier.conftest import expect_error, expect_ok, fn


CONSTANTS = """\
%f16 = constant 1.0 : f16
%bf16 = constant 1.0 : bf16
%f32 = constant 1.0 : f32
%f64 = constant 1.0 : f64
%i8 = constant 1 : i8
%i32 = constant 1 : i32
%c32 = constant [1.0, 0.0] : c32
%zero = constant 0.0 : f32
%one = constant 1.0 : f32
%two = constant 2.0 : f32
"""


def kernel(args: str, line: str) -> str:
    """Constants of every scalar type, then the instruction under test."""
    return fn(CONSTANTS + line, args)


# ---------------------------------------------------------------- alloca

@pytest.mark.parametrize("line", [
    "%t = alloca : memref<f32x8x8,local>",
    "%t = alloca {alignment=64} : memref<f64x8,local>",
    "%t = alloca : memref<f32x4x4,strided<1,8>,local>",
    "%t = alloca : memref<i8,local>",
])
def test_alloca_ok(line):
    expect_ok(fn(line))


@pytest.mark.parametrize("line, message, at", [
    ("%t = alloca : memref<f32x?,local>", "alloca: the size of memref<f32x?,local> must be known at "
                                         "compile time (no '?' in shape or stride)", "memref"),
    ("%t = alloca : memref<f32x4x4,strided<1,?>,local>", "alloca: the size of memref<f32x4x4,"
     "strided<1,?>,local> must be known at compile time (no '?' in shape or stride)", "memref"),
    ("%t = alloca : memref<f32x8>", "alloca: the result must be in the local address space, "
                                    "got memref<f32x8>", "memref"),
    ("%t = alloca : memref<f32x8,global>", "alloca: the result must be in the local address space, "
                                           "got memref<f32x8>", "memref"),
    ("%t = alloca {alignment=6} : memref<f32x8,local>", "alloca: alignment must be a positive power "
                                                        "of two, got 6", "%t"),
    ("%t = alloca {alignment=4} : memref<f64x8,local>", "alloca: alignment 4 is not a multiple of the "
                                                        "size of the element type f64 (8 bytes)", "%t"),
    ('%t = alloca {"align"=4} : memref<f64x8,local>', "alloca: unknown attribute 'align' on alloca "
                                                      "(did you mean 'alignment'?); allowed: alignment", "%t"),
])
def test_alloca_rejected(line, message, at):
    expect_error(fn(line), message, at=at)


# ---------------------------------------------------------------- axpby

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x8x8>, %B: memref<f32x8x8>", "axpby.n %f32, %A, %f32, %B"),
    ("%A: memref<f32x4x8>, %B: memref<f32x8x4>", "axpby.t %f32, %A, %f32, %B"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "axpby.t %f32, %A, %f32, %B"),
    ("%A: memref<f32>, %B: memref<f32>", "axpby.n %f32, %A, %f32, %B"),
    ("%A: memref<f32x?x8>, %B: memref<f32x4x?>", "axpby.n %f32, %A, %f32, %B"),
    ("%A: memref<f32x8>, %B: memref<f64x8>", "axpby.n %f16, %A, %f32, %B"),
    ("%A: memref<i16x8>, %B: memref<c32x8>", "axpby.n %i8, %A, %c32, %B"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "axpby.n.atomic %f32, %A, %one, %B"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "axpby.n.atomic %f32, %A, %zero, %B"),
])
def test_axpby_ok(args, line):
    expect_ok(kernel(args, line))


AXPBY_REJECTED = [
    ("%A: memref<f32x2x2x2>, %B: memref<f32x2x2x2>", "axpby.n %f32, %A, %f32, %B",
     "axpby: B must have order 0, 1 or 2, got order 3 (memref<f32x2x2x2>)", "%B"),
    ("%A: memref<f32x4x8>, %B: memref<f32x8x4>", "axpby.n %f32, %A, %f32, %B",
     "axpby: shape of B (8x4) does not match shape of op(A) (4x8)", "axpby"),
    ("%A: memref<f32x8x8>, %B: memref<f32x8>", "axpby.n %f32, %A, %f32, %B",
     "axpby: shape of B (8) does not match shape of op(A) (8x8)", "axpby"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "axpby.n %f64, %A, %f32, %B",
     "axpby: type of alpha (f64) does not promote to f32, the element type of A", "%f64"),
    ("%A: memref<f64x8>, %B: memref<f32x8>", "axpby.n %f32, %A, %f32, %B",
     "axpby: the element type of A (f64) does not promote to the element type of B (f32)", "axpby"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "axpby.n %f32, %A, %c32, %B",
     "axpby: type of beta (c32) does not promote to the element type of B (f32)", "%c32, %B"),
    ("%A: memref<f32x8>, %B: memref<f32x8>, %b: f32", "axpby.n.atomic %f32, %A, %b, %B",
     "axpby: with .atomic, beta must be a constant 0 or 1", "%b, %B"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "axpby.n.atomic %f32, %A, %two, %B",
     "axpby: with .atomic, beta must be a constant 0 or 1", "%two"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "axpby.n %A, %A, %f32, %B",
     "axpby: alpha must have a scalar type, got memref<f32x8>", "%A, %A"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "axpby.n %f32, %f32, %f32, %B",
     "axpby: A must be a memref, got f32", "%f32, %f32, %B"),
]


@pytest.mark.parametrize("args, line, message, at", AXPBY_REJECTED)
def test_axpby_rejected(args, line, message, at):
    expect_error(kernel(args, line), message, at=at, after=line)


# ---------------------------------------------------------------- cumsum

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x8x4>, %B: memref<f32x8x4>", "cumsum %f32, %A, 0, %f32, %B"),
    ("%A: memref<f32x8x4>, %B: memref<f32x?x4>", "cumsum %f32, %A, 1, %f32, %B"),
    ("%A: memref<f16x8>, %B: memref<f64x8>", "cumsum.atomic %i8, %A, 0, %one, %B"),
])
def test_cumsum_ok(args, line):
    expect_ok(kernel(args, line))


@pytest.mark.parametrize("args, line, message, at", [
    ("%A: memref<f32>, %B: memref<f32>", "cumsum %f32, %A, 0, %f32, %B",
     "cumsum: A must have order 1 or more, got order 0 (memref<f32>)", "cumsum"),
    ("%A: memref<f32x8x4>, %B: memref<f32x8x4>", "cumsum %f32, %A, 2, %f32, %B",
     "cumsum: summation mode 2 is out of range for A of order 2 (modes count from 0)", "cumsum"),
    ("%A: memref<f32x8x8>, %B: memref<f32x8x4>", "cumsum %f32, %A, 0, %f32, %B",
     "cumsum: shape of B (8x4) does not match shape of A (8x8)", "cumsum"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "cumsum %i32, %A, 0, %f32, %B",
     "cumsum: type of alpha (i32) does not promote to f32, the element type of A", "%i32"),
    ("%A: memref<f64x8>, %B: memref<f32x8>", "cumsum %f32, %A, 0, %f32, %B",
     "cumsum: the element type of A (f64) does not promote to the element type of B (f32)", "cumsum"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "cumsum %f32, %A, 0, %f64, %B",
     "cumsum: type of beta (f64) does not promote to the element type of B (f32)", "%f64"),
    ("%A: memref<f32x8>, %B: memref<f32x8>", "cumsum.atomic %f32, %A, 0, %two, %B",
     "cumsum: with .atomic, beta must be a constant 0 or 1", "%two"),
])
def test_cumsum_rejected(args, line, message, at):
    expect_error(kernel(args, line), message, at=at, after=line)


# ---------------------------------------------------------------- gemm

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x8x16>, %B: memref<f32x16x4>, %C: memref<f32x8x4>", "gemm.n.n %f32, %A, %B, %f32, %C"),
    ("%A: memref<f32x16x8>, %B: memref<f32x16x4>, %C: memref<f32x8x4>", "gemm.t.n %f32, %A, %B, %f32, %C"),
    ("%A: memref<f32x8x16>, %B: memref<f32x4x16>, %C: memref<f32x8x4>", "gemm.n.t %f32, %A, %B, %f32, %C"),
    ("%A: memref<f32x16x8>, %B: memref<f32x4x16>, %C: memref<f32x8x4>", "gemm.t.t %f32, %A, %B, %f32, %C"),
    ("%A: memref<f32x?x?>, %B: memref<f32x16x?>, %C: memref<f32x8x4>", "gemm.n.n %f32, %A, %B, %f32, %C"),
    ("%A: memref<f16x8x16>, %B: memref<f32x16x4>, %C: memref<f64x8x4>", "gemm.n.n %f16, %A, %B, %f64, %C"),
    ("%A: memref<i8x8x16>, %B: memref<i8x16x4>, %C: memref<i32x8x4>", "gemm.n.n %i8, %A, %B, %i32, %C"),
    ("%A: memref<f32x8x8>, %B: memref<c32x8x8>, %C: memref<c64x8x8>", "gemm.n.n %f32, %A, %B, %c32, %C"),
    ("%A: memref<f32x8x8>, %B: memref<f32x8x8>, %C: memref<f32x8x8>", "gemm.n.n.atomic %f32, %A, %B, %one, %C"),
])
def test_gemm_ok(args, line):
    expect_ok(kernel(args, line))


MATS = "%A: memref<f32x8x16>, %B: memref<f32x16x4>, %C: memref<f32x8x4>"


@pytest.mark.parametrize("args, line, message, at", [
    ("%A: memref<f32x8>, %B: memref<f32x16x4>, %C: memref<f32x8x4>", "gemm.n.n %f32, %A, %B, %f32, %C",
     "gemm: A must have order 2, got order 1 (memref<f32x8>)", "%A, %B"),
    ("%A: memref<f32x8x16>, %B: memref<f32x16x4x1>, %C: memref<f32x8x4>", "gemm.n.n %f32, %A, %B, %f32, %C",
     "gemm: B must have order 2, got order 3 (memref<f32x16x4x1>)", "%B, %f32"),
    ("%A: memref<f32x8x16>, %B: memref<f32x16x4>, %C: memref<f32>", "gemm.n.n %f32, %A, %B, %f32, %C",
     "gemm: C must have order 2, got order 0 (memref<f32>)", "%C"),
    ("%A: memref<f32x8x16>, %B: memref<f32x8x4>, %C: memref<f32x8x4>", "gemm.n.n %f32, %A, %B, %f32, %C",
     "gemm: columns of op(A) (16) do not match rows of op(B) (8)", "gemm"),
    ("%A: memref<f32x12x8>, %B: memref<f32x16x4>, %C: memref<f32x8x4>", "gemm.t.n %f32, %A, %B, %f32, %C",
     "gemm: columns of op(A) (12) do not match rows of op(B) (16)", "gemm"),
    ("%A: memref<f32x8x16>, %B: memref<f32x16x4>, %C: memref<f32x16x4>", "gemm.n.n %f32, %A, %B, %f32, %C",
     "gemm: rows of C (16) do not match rows of op(A) (8)", "gemm"),
    ("%A: memref<f32x8x16>, %B: memref<f32x16x4>, %C: memref<f32x8x?>", "gemm.n.t %f32, %A, %B, %f32, %C",
     "gemm: columns of op(A) (16) do not match rows of op(B) (4)", "gemm"),
    ("%A: memref<f32x8x16>, %B: memref<f32x16x4>, %C: memref<f32x8x8>", "gemm.n.n %f32, %A, %B, %f32, %C",
     "gemm: columns of C (8) do not match columns of op(B) (4)", "gemm"),
    ("%A: memref<f16x8x16>, %B: memref<bf16x16x4>, %C: memref<f32x8x4>", "gemm.n.n %f32, %A, %B, %f32, %C",
     "gemm: element types of A (f16) and B (bf16) cannot be promoted to a common type", "gemm"),
    (MATS, "gemm.n.n %f64, %A, %B, %f32, %C",
     "gemm: type of alpha (f64) does not promote to f32, the promoted element type of A and B", "%f64"),
    (MATS, "gemm.n.n %i32, %A, %B, %f32, %C",
     "gemm: type of alpha (i32) does not promote to f32, the promoted element type of A and B", "%i32"),
    ("%A: memref<f64x8x16>, %B: memref<f32x16x4>, %C: memref<f32x8x4>", "gemm.n.n %f32, %A, %B, %f32, %C",
     "gemm: f64, the promoted element type of A and B, does not promote to the element type of C (f32)",
     "gemm"),
    (MATS, "gemm.n.n %f32, %A, %B, %f64, %C",
     "gemm: type of beta (f64) does not promote to the element type of C (f32)", "%f64"),
    (MATS, "gemm.n.n.atomic %f32, %A, %B, %two, %C",
     "gemm: with .atomic, beta must be a constant 0 or 1", "%two"),
    (MATS, "gemm.n.n %f32, %A, %f32, %f32, %C",
     "gemm: B must be a memref, got f32", "%f32, %f32, %C"),
])
def test_gemm_rejected(args, line, message, at):
    expect_error(kernel(args, line), message, at=at, after=line)


# ---------------------------------------------------------------- gemv

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x8x16>, %b: memref<f32x16>, %c: memref<f32x8>", "gemv.n %f32, %A, %b, %f32, %c"),
    ("%A: memref<f32x16x8>, %b: memref<f32x16>, %c: memref<f32x8>", "gemv.t %f32, %A, %b, %f32, %c"),
    ("%A: memref<f16x8x?>, %b: memref<f32x16>, %c: memref<c32x?>", "gemv.n.atomic %i8, %A, %b, %one, %c"),
])
def test_gemv_ok(args, line):
    expect_ok(kernel(args, line))


VEC = "%A: memref<f32x8x16>, %b: memref<f32x16>, %c: memref<f32x8>"


@pytest.mark.parametrize("args, line, message, at", [
    ("%A: memref<f32x8>, %b: memref<f32x16>, %c: memref<f32x8>", "gemv.n %f32, %A, %b, %f32, %c",
     "gemv: A must have order 2, got order 1 (memref<f32x8>)", "%A, %b"),
    ("%A: memref<f32x8x16>, %b: memref<f32x16x1>, %c: memref<f32x8>", "gemv.n %f32, %A, %b, %f32, %c",
     "gemv: b must have order 1, got order 2 (memref<f32x16x1>)", "%b, %f32"),
    ("%A: memref<f32x8x16>, %b: memref<f32x16>, %c: memref<f32x8x1>", "gemv.n %f32, %A, %b, %f32, %c",
     "gemv: c must have order 1, got order 2 (memref<f32x8x1>)", "%c"),
    ("%A: memref<f32x12x8>, %b: memref<f32x16>, %c: memref<f32x8>", "gemv.t %f32, %A, %b, %f32, %c",
     "gemv: columns of op(A) (12) do not match rows of b (16)", "gemv"),
    ("%A: memref<f32x8x16>, %b: memref<f32x16>, %c: memref<f32x16>", "gemv.n %f32, %A, %b, %f32, %c",
     "gemv: rows of c (16) do not match rows of op(A) (8)", "gemv"),
    ("%A: memref<f32x8x16>, %b: memref<f64x16>, %c: memref<f32x8>", "gemv.n %f32, %A, %b, %f32, %c",
     "gemv: f64, the promoted element type of A and b, does not promote to the element type of c (f32)",
     "gemv"),
    (VEC, "gemv.n %c32, %A, %b, %f32, %c",
     "gemv: type of alpha (c32) does not promote to f32, the promoted element type of A and b", "%c32"),
    (VEC, "gemv.n %f32, %A, %b, %f64, %c",
     "gemv: type of beta (f64) does not promote to the element type of c (f32)", "%f64"),
    (VEC, "gemv.n.atomic %f32, %A, %b, %two, %c",
     "gemv: with .atomic, beta must be a constant 0 or 1", "%two"),
])
def test_gemv_rejected(args, line, message, at):
    expect_error(kernel(args, line), message, at=at, after=line)


# ---------------------------------------------------------------- ger

@pytest.mark.parametrize("args, line", [
    ("%a: memref<f32x8>, %b: memref<f32x4>, %C: memref<f32x8x4>", "ger %f32, %a, %b, %f32, %C"),
    ("%a: memref<i8x?>, %b: memref<f32x4>, %C: memref<f64x8x?>", "ger.atomic %f32, %a, %b, %zero, %C"),
])
def test_ger_ok(args, line):
    expect_ok(kernel(args, line))


GER = "%a: memref<f32x8>, %b: memref<f32x4>, %C: memref<f32x8x4>"


@pytest.mark.parametrize("args, line, message, at", [
    ("%a: memref<f32x8x1>, %b: memref<f32x4>, %C: memref<f32x8x4>", "ger %f32, %a, %b, %f32, %C",
     "ger: a must have order 1, got order 2 (memref<f32x8x1>)", "%a, %b"),
    ("%a: memref<f32x8>, %b: memref<f32>, %C: memref<f32x8x4>", "ger %f32, %a, %b, %f32, %C",
     "ger: b must have order 1, got order 0 (memref<f32>)", "%b, %f32"),
    ("%a: memref<f32x8>, %b: memref<f32x4>, %C: memref<f32x32>", "ger %f32, %a, %b, %f32, %C",
     "ger: C must have order 2, got order 1 (memref<f32x32>)", "%C"),
    ("%a: memref<f32x8>, %b: memref<f32x4>, %C: memref<f32x4x4>", "ger %f32, %a, %b, %f32, %C",
     "ger: rows of C (4) do not match rows of a (8)", "ger"),
    ("%a: memref<f32x8>, %b: memref<f32x4>, %C: memref<f32x8x8>", "ger %f32, %a, %b, %f32, %C",
     "ger: columns of C (8) do not match rows of b (4)", "ger"),
    ("%a: memref<f16x8>, %b: memref<bf16x4>, %C: memref<f32x8x4>", "ger %f32, %a, %b, %f32, %C",
     "ger: element types of a (f16) and b (bf16) cannot be promoted to a common type", "ger"),
    (GER, "ger %f64, %a, %b, %f32, %C",
     "ger: type of alpha (f64) does not promote to f32, the promoted element type of a and b", "%f64"),
    (GER, "ger %f32, %a, %b, %c32, %C",
     "ger: type of beta (c32) does not promote to the element type of C (f32)", "%c32, %C"),
    (GER, "ger.atomic %f32, %a, %b, %C, %C",
     "ger: beta must have a scalar type, got memref<f32x8x4>", "%C, %C"),
])
def test_ger_rejected(args, line, message, at):
    expect_error(kernel(args, line), message, at=at, after=line)


# ---------------------------------------------------------------- hadamard_product

@pytest.mark.parametrize("args, line", [
    ("%a: memref<f32x8>, %b: memref<f32x8>, %c: memref<f32x8>", "hadamard_product %f32, %a, %b, %f32, %c"),
    ("%a: memref<f32x8x4>, %b: memref<f16x?x4>, %c: memref<f64x8x4>",
     "hadamard_product.atomic %f32, %a, %b, %one, %c"),
])
def test_hadamard_ok(args, line):
    expect_ok(kernel(args, line))


HAD = "%a: memref<f32x8>, %b: memref<f32x8>, %c: memref<f32x8>"


@pytest.mark.parametrize("args, line, message, at", [
    ("%a: memref<f32x2x2x2>, %b: memref<f32x2x2x2>, %c: memref<f32x2x2x2>",
     "hadamard_product %f32, %a, %b, %f32, %c",
     "hadamard_product: a must have order 1 or 2, got order 3 (memref<f32x2x2x2>)", "%a, %b"),
    ("%a: memref<f32>, %b: memref<f32>, %c: memref<f32>", "hadamard_product %f32, %a, %b, %f32, %c",
     "hadamard_product: a must have order 1 or 2, got order 0 (memref<f32>)", "%a, %b"),
    ("%a: memref<f32x8>, %b: memref<f32x8x8>, %c: memref<f32x8>", "hadamard_product %f32, %a, %b, %f32, %c",
     "hadamard_product: shape of b (8x8) does not match shape of a (8)", "hadamard_product"),
    ("%a: memref<f32x8x4>, %b: memref<f32x8x4>, %c: memref<f32x4x8>",
     "hadamard_product %f32, %a, %b, %f32, %c",
     "hadamard_product: shape of c (4x8) does not match shape of a (8x4)", "hadamard_product"),
    ("%a: memref<f32x8>, %b: memref<c32x8>, %c: memref<f32x8>", "hadamard_product %f32, %a, %b, %f32, %c",
     "hadamard_product: c32, the promoted element type of a and b, does not promote to the element "
     "type of c (f32)", "hadamard_product"),
    (HAD, "hadamard_product %f64, %a, %b, %f32, %c",
     "hadamard_product: type of alpha (f64) does not promote to f32, the promoted element type of a "
     "and b", "%f64"),
    (HAD, "hadamard_product %f32, %a, %b, %f64, %c",
     "hadamard_product: type of beta (f64) does not promote to the element type of c (f32)", "%f64"),
    (HAD, "hadamard_product.atomic %f32, %a, %b, %two, %c",
     "hadamard_product: with .atomic, beta must be a constant 0 or 1", "%two"),
])
def test_hadamard_rejected(args, line, message, at):
    expect_error(kernel(args, line), message, at=at, after=line)


# ---------------------------------------------------------------- sum

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x8x4>, %b: memref<f32x8>", "sum.n %f32, %A, %f32, %b"),
    ("%A: memref<f32x8x4>, %b: memref<f32x4>", "sum.t %f32, %A, %f32, %b"),
    ("%A: memref<f32x8>, %b: memref<f32>", "sum.n %f32, %A, %f32, %b"),
    ("%A: memref<i16x8>, %b: memref<f64>", "sum.t.atomic %i8, %A, %zero, %b"),
])
def test_sum_ok(args, line):
    expect_ok(kernel(args, line))


@pytest.mark.parametrize("args, line, message, at", [
    ("%A: memref<f32x8x4x2>, %b: memref<f32x8x4>", "sum.n %f32, %A, %f32, %b",
     "sum: b must have order 0 or 1, got order 2 (memref<f32x8x4>)", "%b"),
    ("%A: memref<f32x8x4>, %b: memref<f32>", "sum.n %f32, %A, %f32, %b",
     "sum: A must have order 1, got order 2 (memref<f32x8x4>)", "%A, %f32"),
    ("%A: memref<f32x8>, %b: memref<f32x8>", "sum.n %f32, %A, %f32, %b",
     "sum: A must have order 2, got order 1 (memref<f32x8>)", "%A, %f32"),
    ("%A: memref<f32x8x4>, %b: memref<f32x8>", "sum.t %f32, %A, %f32, %b",
     "sum: rows of b (8) do not match rows of op(A) (4)", "sum"),
    ("%A: memref<f32x8>, %b: memref<f32>", "sum.n %f64, %A, %f32, %b",
     "sum: type of alpha (f64) does not promote to f32, the element type of A", "%f64"),
    ("%A: memref<f64x8>, %b: memref<f32>", "sum.n %f32, %A, %f32, %b",
     "sum: the element type of A (f64) does not promote to the element type of b (f32)", "sum"),
    ("%A: memref<f32x8>, %b: memref<f32>", "sum.n %f32, %A, %f64, %b",
     "sum: type of beta (f64) does not promote to the element type of b (f32)", "%f64"),
    ("%A: memref<f32x8>, %b: memref<f32>", "sum.n.atomic %f32, %A, %two, %b",
     "sum: with .atomic, beta must be a constant 0 or 1", "%two"),
])
def test_sum_rejected(args, line, message, at):
    expect_error(kernel(args, line), message, at=at, after=line)


# ---------------------------------------------------------------- foreach / parallel

@pytest.mark.parametrize("body", [
    "%z = constant 0 : index\nforeach (%i) = (%z), (%n) {\n}",
    "%z = constant 0 : index\nforeach (%i, %j) = (%z, %z), (%n, %n) {\n  %s = arith.add %i, %j : index\n}",
    "%z = constant 0 : i32\n%m = constant 8 : i32\nforeach (%i):i32 = (%z), (%m) {\n"
    "  %s = arith.add %i, %z : i32\n}",
    "parallel {\n  %s = builtin.subgroup_local_id : i32\n}",
])
def test_foreach_and_parallel_ok(body):
    expect_ok(fn(body, "%n: index"))


@pytest.mark.parametrize("body, message, at", [
    ("%z = constant 0 : i32\nforeach (%i) = (%z), (%n) {\n}",  # the type follows the bounds
     "foreach: upper bound 0 must have type i32 (the loop type), got index", "%n) {"),
    ("%z = constant 0 : index\n%m = constant 4 : i64\nforeach (%i, %j) = (%z, %z), (%n, %m) {\n}",
     "foreach: upper bound 1 must have type index (the loop type), got i64", "%m) {"),
    ("%z = constant 0 : i32\nforeach (%i):i32 = (%z), (%n) {\n}",
     "foreach: upper bound 0 must have type i32 (the loop type), got index", "%n) {"),
])
def test_foreach_rejected(body, message, at):
    expect_error(fn(body, "%n: index"), message, at=at)


def test_foreach_needs_two_bounds_per_variable():
    """The parser rejects unequal lists; IR built by passes is checked too."""
    from tinyc.diagnostics import CompilationError, Span
    from tinyc.ir.core import Function, Program, Region, Value
    from tinyc.ir.instructions import Constant, Foreach
    from tinyc.ir.types import index
    from tinyc.ir.verifier import verify

    zero = Constant(0, index, Span(2, 3, 2, 20), "z")
    loop = Foreach([Value(index, "i"), Value(index, "j")], [zero.result], [zero.result],
                   Region(), span=Span(3, 3, 3, 40))
    with pytest.raises(CompilationError) as err:
        verify(Program([Function("k", [], Region(instructions=[zero, loop]))]))
    [d] = err.value.diagnostics
    assert d.message == ("foreach: the loop has 2 variables and 2 bounds; it needs one lower and "
                         "one upper bound per variable")
    assert (d.line, d.column) == (3, 3)
