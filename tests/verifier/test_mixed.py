"""Mixed scalar instructions: arith, builtin, barrier, cast, cmp, constant, math."""

from __future__ import annotations

import pytest

from tests.verifier.conftest import expect_error, expect_ok, fn


PRELUDE = """\
%b = constant true : bool
%i8 = constant 1 : i8
%i32 = constant 1 : i32
%i64 = constant 1 : i64
%idx = constant 1 : index
%f16 = constant 1.0 : f16
%bf16 = constant 1.0 : bf16
%f32 = constant 1.0 : f32
%f64 = constant 1.0 : f64
%c32 = constant [1.0, 0.0] : c32
%c64 = constant [1.0, 0.0] : c64
parallel {
  %ma = constant 1.0 : coopmatrix<f32x8x8,matrix_a>
  %macc = constant 1.0 : coopmatrix<f32x8x8,matrix_acc>
  %mi = constant 1 : coopmatrix<i8x8x8,matrix_a>
  %mc = constant [1.0, 0.0] : coopmatrix<c32x8x8,matrix_a>
"""


def spmd(line: str) -> str:
    """The prelude's scalars and coopmatrices, and `line` inside its parallel region."""
    return fn(PRELUDE + "  " + line + "\n}")


def check_ok(line: str) -> None:
    expect_ok(spmd(line))


def check_rejected(line: str, message: str, at: str) -> None:
    expect_error(spmd(line), message, at=at, after=line)


# ---------------------------------------------------------------- arith (binary)

@pytest.mark.parametrize("line", [
    "%r = arith.add %f32, %f32 : f32", "%r = arith.sub %i32, %i32 : i32",
    "%r = arith.mul %c32, %c32 : c32", "%r = arith.div %macc, %macc : coopmatrix<f32x8x8,matrix_acc>",
    "%r = arith.add %mi, %mi : coopmatrix<i8x8x8,matrix_a>",
    "%r = arith.rem %i32, %i32 : i32", "%r = arith.rem %f64, %f64 : f64",
    "%r = arith.min %f16, %f16 : f16", "%r = arith.max %idx, %idx : index",
    "%r = arith.shl %i8, %i8 : i8", "%r = arith.shr %idx, %idx : index",
    "%r = arith.and %b, %b : bool", "%r = arith.or %i64, %i64 : i64", "%r = arith.xor %b, %b : bool",
    # newest language: every binary operation on coopmatrices, component-wise
    "%r = arith.min %ma, %ma : coopmatrix<f32x8x8,matrix_a>", "%r = arith.rem %mi, %mi : coopmatrix<i8x8x8,matrix_a>",
    "%r = arith.shl %mi, %mi : coopmatrix<i8x8x8,matrix_a>", "%r = arith.xor %mi, %mi : coopmatrix<i8x8x8,matrix_a>",
])
def test_arith_binary_ok(line):
    check_ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("%r = arith.rem %c32, %c32 : c32", "arith.rem: type must be a non-complex scalar type, got c32", "c32\n"),
    ("%r = arith.min %mc, %mc : coopmatrix<c32x8x8,matrix_a>",
     "arith.min: the component type of coopmatrix<c32x8x8,matrix_a> must be a non-complex scalar type",
     "coopmatrix"),
    ("%r = arith.max %c64, %c64 : c64", "arith.max: type must be a non-complex scalar type, got c64", "c64\n"),
    ("%r = arith.shl %f32, %f32 : f32", "arith.shl: type must be an integer type, got f32", "f32\n"),
    ("%r = arith.shr %b, %b : bool", "arith.shr: type must be an integer type, got bool", "bool"),
    ("%r = arith.and %f32, %f32 : f32", "arith.and: type must be bool or an integer type, got f32", "f32\n"),
    ("%r = arith.xor %ma, %ma : coopmatrix<f32x8x8,matrix_a>",
     "arith.xor: the component type of coopmatrix<f32x8x8,matrix_a> must be an integer type", "coopmatrix"),
    ("%r = arith.shl %mc, %mc : coopmatrix<c32x8x8,matrix_a>",
     "arith.shl: the component type of coopmatrix<c32x8x8,matrix_a> must be an integer type", "coopmatrix"),
    ("%r = arith.add %b, %b : bool", "arith.add: type must be a scalar or coopmatrix type, got bool", "bool"),
    ("%r = arith.add %f32, %f64 : f32",
     "arith.add: second operand must have type f32 (the result type), got f64", "%f64"),
    ("%r = arith.mul %i64, %i32 : i32",
     "arith.mul: first operand must have type i32 (the result type), got i64", "%i64"),
    ("%r = arith.add %macc, %ma : coopmatrix<f32x8x8,matrix_acc>",
     "arith.add: second operand must have type coopmatrix<f32x8x8,matrix_acc> (the result type), "
     "got coopmatrix<f32x8x8,matrix_a>", "%ma :"),
    ("%r = arith.add %f32, %ma : coopmatrix<f32x8x8,matrix_a>",
     "arith.add: first operand must have type coopmatrix<f32x8x8,matrix_a> (the result type), got f32",
     "%f32"),
])
def test_arith_binary_rejected(line, message, at):
    check_rejected(line, message, at)


# ---------------------------------------------------------------- arith (unary)

@pytest.mark.parametrize("line", [
    "%r = arith.abs %f32 : f32", "%r = arith.abs %i8 : i8", "%r = arith.abs %c32 : f32",
    "%r = arith.abs %c64 : f64", "%r = arith.neg %macc : coopmatrix<f32x8x8,matrix_acc>",
    "%r = arith.neg %c32 : c32", "%r = arith.not %b : bool", "%r = arith.not %i32 : i32",
    "%r = arith.conj %c64 : c64", "%r = arith.im %c64 : f64", "%r = arith.re %c32 : f32",
    # newest language: every unary operation on coopmatrices, component-wise
    "%r = arith.abs %ma : coopmatrix<f32x8x8,matrix_a>", "%r = arith.not %mi : coopmatrix<i8x8x8,matrix_a>",
    "%r = arith.abs %mc : coopmatrix<f32x8x8,matrix_a>", "%r = arith.re %mc : coopmatrix<f32x8x8,matrix_a>",
    "%r = arith.im %mc : coopmatrix<f32x8x8,matrix_a>", "%r = arith.conj %mc : coopmatrix<c32x8x8,matrix_a>",
])
def test_arith_unary_ok(line):
    check_ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("%r = arith.abs %mc : coopmatrix<c32x8x8,matrix_a>",
     "arith.abs: result type must be coopmatrix<f32x8x8,matrix_a> (a coopmatrix of the component type "
     "of c32), got coopmatrix<c32x8x8,matrix_a>", "coopmatrix"),
    ("%r = arith.abs %b : bool", "arith.abs: operand must have a scalar or coopmatrix type, got bool", "%b"),
    ("%r = arith.neg %b : bool", "arith.neg: operand must have a scalar or coopmatrix type, got bool", "%b"),
    ("%r = arith.not %f32 : f32", "arith.not: operand must have bool or an integer type, got f32", "%f32"),
    ("%r = arith.conj %f32 : f32", "arith.conj: operand must have a complex type, got f32", "%f32"),
    ("%r = arith.im %f64 : f64", "arith.im: operand must have a complex type, got f64", "%f64"),
    ("%r = arith.re %ma : coopmatrix<f32x8x8,matrix_a>",
     "arith.re: the component type of coopmatrix<f32x8x8,matrix_a> must be a complex type", "%ma"),
    ("%r = arith.not %ma : coopmatrix<f32x8x8,matrix_a>",
     "arith.not: the component type of coopmatrix<f32x8x8,matrix_a> must be an integer type", "%ma"),
    ("%r = arith.abs %c32 : c32", "arith.abs: result type must be f32 (the component type of c32), got c32",
     "c32\n"),
    ("%r = arith.re %c64 : f32", "arith.re: result type must be f64 (the component type of c64), got f32",
     "f32\n"),
    ("%r = arith.neg %f32 : f64", "arith.neg: result type must be f32 (the operand type), got f64", "f64\n"),
    ("%r = arith.conj %c32 : c64", "arith.conj: result type must be c32 (the operand type), got c64", "c64\n"),
    ("%r = arith.not %i32 : i64", "arith.not: result type must be i32 (the operand type), got i64", "i64\n"),
])
def test_arith_unary_rejected(line, message, at):
    check_rejected(line, message, at)


# ---------------------------------------------------------------- builtin, barrier

@pytest.mark.parametrize("line", [
    "%r = builtin.group_id : index", "%r = builtin.group_size : index",
    "%r = builtin.num_subgroups : i32", "%r = builtin.subgroup_size : i32",
    "%r = builtin.subgroup_id : i32", "%r = builtin.subgroup_local_id : i32",
    "barrier", "barrier.global", "barrier.local", "barrier.global.local",
])
def test_builtin_and_barrier_ok(line):
    check_ok(line)


def test_barrier_and_mixed_builtins_in_collective_region():
    expect_ok(fn("%g = builtin.group_id : index\n%s = builtin.num_subgroups : i32\nbarrier.global"))


@pytest.mark.parametrize("line, expected, got", [
    ("%r = builtin.group_id : i32", "index", "i32"),
    ("%r = builtin.group_size : i64", "index", "i64"),
    ("%r = builtin.num_subgroups : index", "i32", "index"),
    ("%r = builtin.subgroup_size : i64", "i32", "i64"),
    ("%r = builtin.subgroup_id : index", "i32", "index"),
    ("%r = builtin.subgroup_local_id : i16", "i32", "i16"),
])
def test_builtin_result_types(line, expected, got):
    name = line.split()[2]
    check_rejected(line, f"{name}: result type must be {expected}, got {got}", got)


# ---------------------------------------------------------------- cast

@pytest.mark.parametrize("line", [
    "%r = cast %i32 : f32", "%r = cast %f32 : i8", "%r = cast %f64 : c32", "%r = cast %i8 : c64",
    "%r = cast %c32 : c64", "%r = cast %c64 : c32", "%r = cast %f16 : bf16", "%r = cast %idx : i32",
    "%r = cast %f32 : f32",
    "%r = cast %ma : coopmatrix<f16x8x8,matrix_a>", "%r = cast %mi : coopmatrix<f32x8x8,matrix_a>",
    "%r = cast %mc : coopmatrix<c64x8x8,matrix_a>",
    # newest language: a matrix_acc may become a matrix_a or matrix_b
    "%r = cast %macc : coopmatrix<f16x8x8,matrix_a>", "%r = cast %macc : coopmatrix<f32x8x8,matrix_b>",
])
def test_cast_ok(line):
    check_ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("%r = cast %c32 : f32", "cast: cannot cast c32 to f32: casts from complex to non-complex types are "
                            "forbidden", "f32\n"),
    ("%r = cast %c64 : i32", "cast: cannot cast c64 to i32: casts from complex to non-complex types are "
                            "forbidden", "i32\n"),
    ("%r = cast %b : i32", "cast: cannot cast bool to i32: bool cannot be cast", "i32\n"),
    ("%r = cast %i32 : bool", "cast: cannot cast i32 to bool: bool cannot be cast", "bool"),
    ("%r = cast %ma : coopmatrix<f32x8x16,matrix_a>",
     "cast: cannot cast coopmatrix<f32x8x8,matrix_a> to coopmatrix<f32x8x16,matrix_a>: the shapes "
     "must match", "coopmatrix"),
    ("%r = cast %ma : coopmatrix<f16x8x8,matrix_b>",
     "cast: cannot cast coopmatrix<f32x8x8,matrix_a> to coopmatrix<f16x8x8,matrix_b>: the shape and "
     "the use of the coopmatrix types must match", "coopmatrix"),  # a seed program: the seed's words
    ("%r = cast %mc : coopmatrix<f32x8x8,matrix_a>",
     "cast: cannot cast coopmatrix<c32x8x8,matrix_a> to coopmatrix<f32x8x8,matrix_a>: casts from "
     "complex to non-complex types are forbidden", "coopmatrix"),
    ("%r = cast %ma : f32", "cast: cannot cast coopmatrix<f32x8x8,matrix_a> to f32: a coopmatrix can "
                           "only be cast to a coopmatrix", "f32\n"),
    ("%r = cast %f32 : coopmatrix<f32x8x8,matrix_a>",
     "cast: cannot cast f32 to coopmatrix<f32x8x8,matrix_a>: a coopmatrix can only be cast to a "
     "coopmatrix", "coopmatrix"),
])
def test_cast_rejected(line, message, at):
    check_rejected(line, message, at)


# ---------------------------------------------------------------- cmp

@pytest.mark.parametrize("line", [
    "%r = cmp.eq %c32, %c32 : bool", "%r = cmp.ne %c64, %c64 : bool", "%r = cmp.lt %f32, %f32 : bool",
    "%r = cmp.ge %i8, %i8 : bool", "%r = cmp.le %idx, %idx : bool", "%r = cmp.gt %bf16, %bf16 : bool",
])
def test_cmp_ok(line):
    check_ok(line)


@pytest.mark.parametrize("cond", ["gt", "ge", "lt", "le"])
def test_cmp_orders_no_complex(cond):
    line = f"%r = cmp.{cond} %c32, %c32 : bool"
    check_rejected(line, f"cmp.{cond}: complex operands (c32) cannot be ordered; only cmp.eq and cmp.ne "
                         f"accept complex types", "%r")


@pytest.mark.parametrize("line, message, at", [
    ("%r = cmp.eq %f32, %f64 : bool",
     "cmp.eq: second operand must have type f32 (the type of the first operand), got f64", "%f64"),
    ("%r = cmp.lt %i32, %idx : bool",
     "cmp.lt: second operand must have type i32 (the type of the first operand), got index", "%idx"),
    ("%r = cmp.eq %b, %b : bool", "cmp.eq: first operand must have a scalar type, got bool", "%b"),
    ("%r = cmp.eq %ma, %ma : bool",
     "cmp.eq: first operand must have a scalar type, got coopmatrix<f32x8x8,matrix_a>", "%ma"),
])
def test_cmp_rejected(line, message, at):
    check_rejected(line, message, at)


# ---------------------------------------------------------------- constant

@pytest.mark.parametrize("line", [
    "%r = constant true : bool", "%r = constant false : bool",
    "%r = constant 127 : i8", "%r = constant -128 : i8", "%r = constant -32768 : i16",
    "%r = constant 2147483647 : i32", "%r = constant 9223372036854775807 : i64",
    "%r = constant -9223372036854775807 : index", "%r = constant 1.0 : f32", "%r = constant 65504.0 : f16",
    "%r = constant 65519.0 : f16", "%r = constant 3.0e38 : f32", "%r = constant 3.38e38 : bf16",
    "%r = constant 1.0e300 : f64", "%r = constant 0x1p3 : f32", "%r = constant 1.0e-30 : f16",
    "%r = constant [1.0, -2.5] : c32", "%r = constant [1.0e300, 0.0] : c64",
    "%r = constant 1.0 : coopmatrix<f32x8x8,matrix_acc>", "%r = constant -3 : coopmatrix<i8x8x8,matrix_a>",
    "%r = constant [0.0, 1.0] : coopmatrix<c64x8x8,matrix_b>",
])
def test_constant_ok(line):
    check_ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("%r = constant 1 : f32", "the floating type f32 requires a floating-point constant (e.g. 1.0), "
                             "got 1", "f32\n"),
    ("%r = constant 1.0 : i32", "the integer type i32 requires an integer constant, got 1.0", "i32\n"),
    ("%r = constant true : i32", "the integer type i32 requires an integer constant, got true", "i32\n"),
    ("%r = constant 1 : bool", "type bool requires true or false, got 1", "bool"),
    ("%r = constant 1.0 : c32", "the complex type c32 requires a complex constant [re, im], got 1.0",
     "c32\n"),
    ("%r = constant [1.0, 0.0] : f32", "the floating type f32 requires a floating-point constant "
                                      "(e.g. 1.0), got [1.0, 0.0]", "f32\n"),
    ("%r = constant 128 : i8", "the constant 128 does not fit in i8 (-128..127)", "i8\n"),
    ("%r = constant 255 : i8", "the constant 255 does not fit in i8 (-128..127)", "i8\n"),
    ("%r = constant -32769 : i16", "the constant -32769 does not fit in i16 (-32768..32767)", "i16"),
    ("%r = constant 2147483648 : i32", "the constant 2147483648 does not fit in i32 "
                                      "(-2147483648..2147483647)", "i32\n"),
    ("%r = constant 9223372036854775808 : i64", "the integer constant 9223372036854775808 is outside "
                                               "the range -2^63+1..2^63-1", "i64\n"),
    ("%r = constant -9223372036854775808 : index", "the integer constant -9223372036854775808 is "
                                                  "outside the range -2^63+1..2^63-1", "index\n"),
    ("%r = constant 65520.0 : f16", "the constant 65520.0 is out of the range of f16 (it would round "
                                   "to infinity)", "f16\n"),
    ("%r = constant -1.0e39 : f32", "the constant -1e+39 is out of the range of f32 (it would round to "
                                   "infinity)", "f32\n"),
    ("%r = constant 3.4e38 : bf16", "the constant 3.4e+38 is out of the range of bf16 (it would round "
                                   "to infinity)", "bf16\n"),
    ("%r = constant [0.0, 1.0e39] : c32", "the constant 1e+39 is out of the range of f32 (it would "
                                         "round to infinity)", "c32\n"),
    ("%r = constant 1 : coopmatrix<f32x8x8,matrix_a>", "the floating type f32 requires a floating-point "
                                                      "constant (e.g. 1.0), got 1", "coopmatrix"),
    ("%r = constant 300 : coopmatrix<i8x8x8,matrix_a>", "the constant 300 does not fit in i8 (-128..127)",
     "coopmatrix"),
])
def test_constant_rejected(line, message, at):
    check_rejected(line, "constant: " + message, at)


# ---------------------------------------------------------------- math

@pytest.mark.parametrize("line", [
    "%r = math.exp %f32 : f32", "%r = math.native_exp %c64 : c64", "%r = math.exp %bf16 : bf16",
    "%r = math.native_exp %f16 : f16",
])
def test_math_ok(line):
    check_ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("%r = math.exp %i32 : i32", "math.exp: operand must have a floating-point or complex type, got i32",
     "%i32"),
    ("%r = math.native_exp %b : i32",
     "math.native_exp: operand must have a floating-point or complex type, got bool", "%b"),
    ("%r = math.exp %f32 : f64", "math.exp: result type must be f32 (the operand type), got f64", "f64\n"),
])
def test_math_rejected(line, message, at):
    check_rejected(line, message, at)
