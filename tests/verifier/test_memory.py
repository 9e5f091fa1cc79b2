"""Memory instructions: load, store, size, subview, expand, fuse, lifetime_stop."""

from __future__ import annotations

import pytest

from tests.verifier.conftest import expect_error, expect_ok, fn


PRELUDE = """\
%i = constant 1 : index
%j = constant 2 : index
%n = constant 2 : index
%m = constant 4 : index
%i32 = constant 1 : i32
%f32 = constant 1.0 : f32
%f64 = constant 1.0 : f64
%c32 = constant [1.0, 0.0] : c32
%L = alloca : memref<f32x16x8,local>
"""


def kernel(args: str, line: str) -> str:
    return fn(PRELUDE + line, args)


def check_ok(args: str, line: str) -> None:
    expect_ok(kernel(args, line))


def check_rejected(args: str, line: str, message: str, at: str) -> None:
    expect_error(kernel(args, line), message, at=at, after=line)


# ---------------------------------------------------------------- load

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x8x?>", "%r = load %A[%i, %j] : f32"),
    ("%S: memref<f64>", "%r = load %S[] : f64"),
    ("%G: group<memref<f32x16x8>x?>", "%r = load %G[%i] : memref<f32x16x8>"),
    ("%G: group<memref<f32x?x8,strided<1,?>>x4, offset: ?>", "%r = load %G[%i] : memref<f32x?x8,strided<1,?>>"),
    ("", "%r = load %L[%i, %j] : f32"),
])
def test_load_ok(args, line):
    check_ok(args, line)


@pytest.mark.parametrize("args, line, message, at", [
    ("%A: memref<f32x8x8>", "%r = load %A[%i] : f32", "load: memref<f32x8x8> needs 2 indices, got 1", "%r"),
    ("%S: memref<f32>", "%r = load %S[%i] : f32", "load: memref<f32> needs 0 indices, got 1", "%r"),
    ("%A: memref<f32x8x8>", "%r = load %A[%i32, %j] : f32", "load: index 0 must have type index, got i32",
     "%i32"),
    ("%A: memref<f32x8x8>", "%r = load %A[%i, %j] : f64",
     "load: result type must be f32 (the element type of memref<f32x8x8>), got f64", "f64\n"),
    ("%G: group<memref<f32x16x8>x?>", "%r = load %G[%i] : memref<f32x16x4>",
     "load: result type must be memref<f32x16x8> (the memref type of the group), got memref<f32x16x4>",
     "memref<f32x16x4>"),
    ("%G: group<memref<f32x16x8>x?>", "%r = load %G[%i, %j] : memref<f32x16x8>",
     "load: group<memref<f32x16x8>x?> needs 1 index, got 2", "%r"),
    ("%G: group<memref<f32x16x8>x?>", "%r = load %G[%i32] : memref<f32x16x8>",
     "load: index 0 must have type index, got i32", "%i32"),
    ("", "%r = load %f32[] : f32", "load: operand must be a memref or a group, got f32", "%f32"),
])
def test_load_rejected(args, line, message, at):
    check_rejected(args, line, message, at)


# ---------------------------------------------------------------- store

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x8x?>", "store %f32, %A[%i, %j]"),
    ("%A: memref<f32x8x?>", "store.atomic %f32, %A[%i, %j]"),
    ("%A: memref<c32x8>", "store.atomic_add %c32, %A[%i]"),
    ("%S: memref<f64>", "store %f64, %S[]"),
    ("", "store %f32, %L[%i, %j]"),
])
def test_store_ok(args, line):
    check_ok(args, line)


@pytest.mark.parametrize("args, line, message, at", [
    ("%A: memref<f32x8x8>", "store %f64, %A[%i, %j]",
     "store: the value must have type f32 (the element type of memref<f32x8x8>), got f64", "%f64"),
    ("%A: memref<f32x8x8>", "store.atomic_add %c32, %A[%i, %j]",
     "store: the value must have type f32 (the element type of memref<f32x8x8>), got c32", "%c32"),
    ("%A: memref<f32x8x8>", "store %f32, %A[%i, %j, %i]", "store: memref<f32x8x8> needs 2 indices, got 3",
     "store"),
    ("%A: memref<f32x8x8>", "store %f32, %A[%i, %i32]", "store: index 1 must have type index, got i32",
     "%i32"),
    ("%G: group<memref<f32x8>x?>", "store %f32, %G[%i]",
     "store: the tensor must be a memref, got group<memref<f32x8>x?>", "%G"),
])
def test_store_rejected(args, line, message, at):
    check_rejected(args, line, message, at)


# ---------------------------------------------------------------- size

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x8x?>", "%r = size %A[0] : index"),
    ("%A: memref<f32x8x?>", "%r = size %A[1] : index"),
    ("%G: group<memref<f32x8>x?>", "%r = size %G[0] : index"),
])
def test_size_ok(args, line):
    check_ok(args, line)


@pytest.mark.parametrize("args, line, message, at", [
    ("%A: memref<f32x8x?>", "%r = size %A[2] : index",
     "size: mode 2 is out of range for memref<f32x8x?> of order 2 (modes count from 0)", "%r"),
    ("%S: memref<f32>", "%r = size %S[0] : index",
     "size: mode 0 is out of range for memref<f32> of order 0 (modes count from 0)", "%r"),
    ("%G: group<memref<f32x8>x?>", "%r = size %G[1] : index", "size: a group has only mode 0, got mode 1",
     "%r"),
    ("", "%r = size %f32[0] : index", "size: operand must be a memref or a group, got f32", "%f32"),
])
def test_size_rejected(args, line, message, at):
    check_rejected(args, line, message, at)


# ---------------------------------------------------------------- subview

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x32x16>", "%r = subview %A[4:8, 8:4] : memref<f32x8x4,strided<1,32>>"),
    ("%A: memref<f32x32x16>", "%r = subview %A[4:8, 8:4] : memref<f32x8x4,strided<1,?>>"),
    ("%B: memref<f32x16x8>", "%r = subview %B[2:4, %i] : memref<f32x4>"),
    ("%B: memref<f32x16x8>", "%r = subview %B[2:4, %i:0] : memref<f32x4>"),
    ("%C: memref<f64x16x8>", "%r = subview %C[2:4, %i:1] : memref<f64x4x1,strided<1,16>>"),
    ("%D: memref<f32x16>", "%r = subview %D[%i:4] : memref<f32x4>"),
    ("%D: memref<f32x16>", "%r = subview %D[%i:%n] : memref<f32x?>"),
    ("%D: memref<f32x16>", "%r = subview %D[:] : memref<f32x16>"),
    ("%D: memref<f32x16>", "%r = subview %D[15] : memref<f32>"),
    ("%E: memref<f32x16x42x13>", "%r = subview %E[2:4, %i:%n, 6:7] : memref<f32x4x?x7,strided<1,16,672>>"),
    ("%F: memref<f32x16x42x13,strided<1,?,?>>",
     "%r = subview %F[2:4, %i:%n, 6:7] : memref<f32x4x?x7,strided<1,?,?>>"),
    ("%D: memref<f32x16x16x?>", "%r = subview %D[:,:,%i] : memref<f32x16x16>"),
    ("%D: memref<f32x?x16>", "%r = subview %D[100:4, 12:4] : memref<f32x4x4,strided<1,?>>"),
    ("", "%r = subview %L[0:8, %j] : memref<f32x8,local>"),
])
def test_subview_ok(args, line):
    check_ok(args, line)


@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x32x16>", "%r = subview %A[30:4, 0:16] : memref<f32x4x16,strided<1,32>>"),
    ("%A: memref<f32x32x16>", "%r = subview %A[32, 0:16] : memref<f32x16,strided<32>>"),
    ("%A: memref<f32x32x16>", "%r = subview %A[0:32, 16:%n] : memref<f32x32x?>"),
    ("%D: memref<f32x16>", "%r = subview %D[%i:17] : memref<f32x17>"),
])
def test_subviews_beyond_the_mode_are_no_error(args, line):
    """As in the reference (its memref-info test views 4:8 of a mode of 8): only an access
    through such a view is undefined (docs/decisions.md)."""
    check_ok(args, line)


@pytest.mark.parametrize("args, line, message, at", [
    ("%A: memref<f32x32x16>", "%r = subview %A[4:8] : memref<f32x8>",
     "subview: memref<f32x32x16> needs 2 entries (one per mode), got 1", "%r"),
    ("%A: memref<f32x32x16>", "%r = subview %A[%i32:8, 0:16] : memref<f32x8x16,strided<1,32>>",
     "subview: dynamic offset 0 must have type index, got i32", "%i32"),
    ("%A: memref<f32x32x16>", "%r = subview %A[0:%i32, 0:16] : memref<f32x?x16,strided<1,32>>",
     "subview: dynamic size 0 must have type index, got i32", "%i32"),
    ("%A: memref<f32x32x16>", "%r = subview %A[4:8, 8:4] : memref<f32x8x8,strided<1,32>>",
     "subview: result shape 8x8 does not match the expected shape 8x4", "memref<f32x8x8"),
    ("%A: memref<f32x32x16>", "%r = subview %A[4:8, 8:4] : memref<f32x8x4>",
     "subview: result stride 8 of mode 1 does not match the expected stride 32 or '?'", "memref<f32x8x4>"),
    ("%A: memref<f32x32x16>", "%r = subview %A[4:8, 8:4] : memref<f64x8x4,strided<1,32>>",
     "subview: result element type f64 does not match the element type of the operand (f32)", "memref<f64"),
    ("", "%r = subview %L[0:8, %j] : memref<f32x8>",
     "subview: result address space global does not match the address space of the operand (local)",
     "memref<f32x8>"),
    ("%B: memref<f32x16x8>", "%r = subview %B[2:4, %i] : memref<f32x4x1>",
     "subview: result shape 4x1 does not match the expected shape 4", "memref<f32x4x1>"),
    ("%D: memref<f32x16>", "%r = subview %D[%i:%n] : memref<f32x4>",
     "subview: result shape 4 does not match the expected shape ?", "memref<f32x4>"),
    ("%S: memref<f32>", "%r = subview %S[] : memref<f32x1>",
     "subview: result shape 1 does not match the expected shape ()", "memref<f32x1>"),
])
def test_subview_rejected(args, line, message, at):
    check_rejected(args, line, message, at)


# ---------------------------------------------------------------- expand

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x32x16x8>", "%r = expand %A[1 -> 2x8] : memref<f32x32x2x8x8>"),
    ("%A: memref<f32x32x16x8>", "%r = expand %A[1 -> 2x2x2x2] : memref<f32x32x2x2x2x2x8>"),
    ("%B: memref<f32x32x?>", "%r = expand %B[1 -> %n x 2] : memref<f32x32x?x2>"),
    ("%B: memref<f32x32x?>", "%r = expand %B[1 -> 2 x %n] : memref<f32x32x2x?>"),
    ("%C: memref<f32x32x16>", "%r = expand %C[1 -> %n x 2] : memref<f32x32x?x2>"),
    ("%C: memref<f32x32x16>", "%r = expand %C[1 -> %n x %m x 2] : memref<f32x32x?x?x2>"),
    ("%C: memref<f32x32x16>", "%r = expand %C[1 -> %m x 2 x %n] : memref<f32x32x?x2x?>"),
    ("%B: memref<f32x32x?>", "%r = expand %B[1 -> %n x %m] : memref<f32x32x?x?>"),
    ("%C: memref<f32x32x16>", "%r = expand %C[1 -> %n x %m] : memref<f32x32x?x?>"),
    ("%D: memref<f32x32x7,strided<2,64>>", "%r = expand %D[0 -> 4 x 8] : memref<f32x4x8x7,strided<2,8,64>>"),
    ("%D: memref<f32x32x7,strided<2,64>>", "%r = expand %D[0 -> 4 x 8] : memref<f32x4x8x7,strided<2,?,?>>"),
    ("%E: memref<f32x?x7,strided<2,?>>", "%r = expand %E[0 -> %n x 4] : memref<f32x?x4x7,strided<2,?,?>>"),
    ("%E: memref<f32x?x7,strided<2,?>>", "%r = expand %E[0 -> 4 x %n] : memref<f32x4x?x7,strided<2,8,?>>"),
    ("%E: memref<f32x?x7,strided<2,?>>", "%r = expand %E[0 -> 4 x %n] : memref<f32x4x?x7,strided<2,?,?>>"),
    ("", "%r = expand %L[0 -> 4 x 4] : memref<f32x4x4x8,local>"),
])
def test_expand_ok(args, line):
    check_ok(args, line)


A3 = "%A: memref<f32x32x16x8>"


@pytest.mark.parametrize("args, line, message, at", [
    (A3, "%r = expand %A[3 -> 2x4] : memref<f32x32x16x8x2x4>",
     "expand: mode 3 is out of range for memref<f32x32x16x8> of order 3 (modes count from 0)", "%r"),
    (A3, "%r = expand %A[1 -> 4x8] : memref<f32x32x4x8x8>",
     "expand: the product of the expand shape 4x8 is 32, but mode 1 has size 16", "%r"),
    ("%C: memref<f32x32x16>", "%r = expand %C[1 -> %n x 3] : memref<f32x32x?x3>",
     "expand: the constant entries of the expand shape ?x3 multiply to 3, which does not divide the "
     "size 16 of mode 1", "%r"),
    ("%C: memref<f32x32x16>", "%r = expand %C[1 -> %i32 x 2] : memref<f32x32x?x2>",
     "expand: expand shape value 0 must have type index, got i32", "%i32"),
    (A3, "%r = expand %A[1 -> 0x16] : memref<f32x32x0x16x8>",
     "expand: expand shape entries must be positive, got 0", "%r"),
    (A3, "%r = expand %A[1 -> 2x8] : memref<f32x32x8x2x8>",
     "expand: result shape 32x8x2x8 does not match the expected shape 32x2x8x8", "memref<f32x32x8x2x8>"),
    ("%C: memref<f32x32x16>", "%r = expand %C[1 -> %n x 2] : memref<f32x32x?x?>",
     "expand: result shape 32x?x? does not match the expected shape 32x?x2", "memref<f32x32x?x?>"),
    ("%D: memref<f32x32x7,strided<2,64>>", "%r = expand %D[0 -> 4 x 8] : memref<f32x4x8x7,strided<2,16,128>>",
     "expand: result stride 16 of mode 1 does not match the expected stride 8 or '?'", "memref<f32x4x8x7"),
    ("%D: memref<f32x32x7,strided<2,64>>", "%r = expand %D[0 -> 4 x 8] : memref<f32x4x8x7,strided<2,4,64>>",
     "invalid type memref<f32x4x8x7,strided<2,4,64>>: the stride 4 of mode 1 is smaller than stride "
     "times size of mode 0 (2*4 = 8); the layout must be column-major", "memref<f32x4x8x7"),
    ("%E: memref<f32x?x7,strided<2,?>>", "%r = expand %E[0 -> %n x 4] : memref<f32x?x4x7,strided<2,8,?>>",
     "expand: result stride 8 of mode 1 does not match the expected stride '?'", "memref<f32x?x4x7"),
    (A3, "%r = expand %A[1 -> 2x8] : memref<f64x32x2x8x8>",
     "expand: result element type f64 does not match the element type of the operand (f32)", "memref<f64"),
    ("", "%r = expand %L[0 -> 4 x 4] : memref<f32x4x4x8>",
     "expand: result address space global does not match the address space of the operand (local)",
     "memref<f32x4x4x8>"),
    ("", "%r = expand %f32[0 -> 4 x 4] : memref<f32x4x4>", "expand: operand must be a memref, got f32", "%f32"),
])
def test_expand_rejected(args, line, message, at):
    check_rejected(args, line, message, at)


# ---------------------------------------------------------------- fuse

@pytest.mark.parametrize("args, line", [
    ("%A: memref<f32x32x16x8x4x42>", "%r = fuse %A[1, 3] : memref<f32x32x512x42>"),
    ("%B: memref<f32x32x16x?x4x42,strided<1,32,?,?,?>>", "%r = fuse %B[1, 3] : memref<f32x32x?x42,strided<1,32,?>>"),
    ("%C: memref<f32x32x16x2x2,strided<1,48,768,1536>>", "%r = fuse %C[1, 2] : memref<f32x32x32x2,strided<1,48,1536>>"),
    ("%C: memref<f32x32x16x2x2,strided<1,48,768,1536>>", "%r = fuse %C[1, 2] : memref<f32x32x32x2,strided<1,?,?>>"),
    ("%D: memref<f32x8x?x32,strided<1,?,?>>", "%r = fuse %D[0, 1] : memref<f32x?x32,strided<1,?>>"),
    ("%E: memref<f32x8x16,strided<1,?>>", "%r = fuse %E[0, 1] : memref<f32x128>"),
    ("", "%r = fuse %L[0, 1] : memref<f32x128,local>"),
])
def test_fuse_ok(args, line):
    check_ok(args, line)


A5 = "%A: memref<f32x32x16x8x4x42>"


@pytest.mark.parametrize("args, line, message, at", [
    ("%F: memref<f32x8x16,strided<1,10>>", "%r = fuse %F[0, 1] : memref<f32x128>",
     "fuse: modes 0 and 1 of memref<f32x8x16,strided<1,10>> cannot be fused: the stride 10 of mode 1 "
     "is not stride times size of mode 0 (1*8 = 8)", "%r"),
    (A5, "%r = fuse %A[2, 1] : memref<f32x32x128x4x42>",
     "fuse: cannot fuse modes 2 to 1 of memref<f32x32x16x8x4x42>: need 0 <= from < to < order (5)", "%r"),
    (A5, "%r = fuse %A[1, 1] : memref<f32x32x16x8x4x42>",
     "fuse: cannot fuse modes 1 to 1 of memref<f32x32x16x8x4x42>: need 0 <= from < to < order (5)", "%r"),
    (A5, "%r = fuse %A[3, 5] : memref<f32x32x16x8x168>",
     "fuse: cannot fuse modes 3 to 5 of memref<f32x32x16x8x4x42>: need 0 <= from < to < order (5)", "%r"),
    (A5, "%r = fuse %A[1, 3] : memref<f32x32x256x42>",
     "fuse: result shape 32x256x42 does not match the expected shape 32x512x42", "memref<f32x32x256"),
    ("%B: memref<f32x32x16x?x4x42,strided<1,32,?,?,?>>", "%r = fuse %B[1, 3] : memref<f32x32x512x42,strided<1,32,?>>",
     "fuse: result shape 32x512x42 does not match the expected shape 32x?x42", "memref<f32x32x512"),
    ("%C: memref<f32x32x16x2x2,strided<1,48,768,1536>>",
     "%r = fuse %C[1, 2] : memref<f32x32x32x2,strided<1,32,1536>>",
     "fuse: result stride 32 of mode 1 does not match the expected stride 48 or '?'", "memref<f32x32x32x2"),
    (A5, "%r = fuse %A[1, 3] : memref<f64x32x512x42>",
     "fuse: result element type f64 does not match the element type of the operand (f32)", "memref<f64"),
])
def test_fuse_rejected(args, line, message, at):
    check_rejected(args, line, message, at)


# ---------------------------------------------------------------- lifetime_stop

def test_lifetime_stop_ok():
    check_ok("", "lifetime_stop %L")


def test_lifetime_stop_needs_an_alloca():
    check_rejected("%A: memref<f32x8>", "lifetime_stop %A",
                   "lifetime_stop: operand must be the result of an alloca", "%A")
