"""Scalar instructions of the reference interpreter against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reference_testlib import run_text
from tinyc.reference import ReferenceFault
from tinyc.runtime.scalars import bf16_bits_to_float

DT = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64,
      "f16": np.float16, "f32": np.float32, "f64": np.float64, "c32": np.complex64,
      "c64": np.complex128, "bf16": np.uint16}


def binary(op: str, ty: str, a, b):
    """Result of `arith.<op> a, b : ty` computed by the reference."""
    out = np.zeros(1, dtype=DT[ty])
    run_text(f"""
    func @k(%a: {ty}, %b: {ty}, %out: memref<{ty}x1>) {{
      %r = arith.{op} %a, %b : {ty}
      %c0 = constant 0 : index
      store %r, %out[%c0]
    }}""", [a, b, out])
    return out[0]


def unary(op: str, ty: str, result_ty: str, a):
    out = np.zeros(1, dtype=DT[result_ty])
    run_text(f"""
    func @k(%a: {ty}, %out: memref<{result_ty}x1>) {{
      %r = {op} %a : {result_ty}
      %c0 = constant 0 : index
      store %r, %out[%c0]
    }}""", [a, out])
    return out[0]


# ---------------------------------------------------------------- integers

@pytest.mark.parametrize("op, ty, a, b, expected", [
    ("add", "i8", 100, 100, -56),
    ("add", "i32", 2**31 - 1, 1, -2**31),
    ("sub", "i16", -32768, 1, 32767),
    ("mul", "i64", 2**62, 4, 0),
    ("mul", "i32", 65536, 65537, 65536),
    ("add", "index", 2**63 - 1, 1, -2**63),
])
def test_integer_arithmetic_wraps(op, ty, a, b, expected):
    assert binary(op, ty, a, b) == expected


@pytest.mark.parametrize("ty", ["i8", "i16", "i32", "i64"])
@pytest.mark.parametrize("a, b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (0, 5), (1, 7)])
def test_integer_div_rem_truncate_toward_zero(ty, a, b):
    q = int(a / b)  # C semantics
    assert binary("div", ty, a, b) == q
    assert binary("rem", ty, a, b) == a - q * b


def test_i64_division_is_exact_beyond_double_precision():
    a, b = 2**62 + 12345, -7
    q = -((2**62 + 12345) // 7)
    assert binary("div", "i64", a, b) == q
    assert binary("rem", "i64", a, b) == a - q * b


@pytest.mark.parametrize("op", ["div", "rem"])
def test_integer_division_by_zero_faults(op):
    with pytest.raises(ReferenceFault, match="division by zero"):
        binary(op, "i32", 5, 0)


@pytest.mark.parametrize("op, ty, a, b, expected", [
    ("shl", "i8", 1, 7, -128),
    ("shl", "i32", 3, 30, -2**30),
    ("shr", "i8", -8, 1, -4),
    ("shr", "i32", -1, 31, -1),
    ("shr", "i64", 2**40, 38, 4),
    ("and", "i16", 0x0FF0, 0x3C3C, 0x0C30),
    ("or", "i32", 0x0F, 0xF0, 0xFF),
    ("xor", "i64", -1, 5, -6),
    ("min", "i32", -3, 2, -3),
    ("max", "i8", -128, 127, 127),
])
def test_integer_bit_and_order_operations(op, ty, a, b, expected):
    assert binary(op, ty, a, b) == expected


@pytest.mark.parametrize("op, ty, a, count, expected", [
    ("shl", "i32", 1, 32, 1),          # 32 & 31 = 0
    ("shl", "i32", 1, 33, 2),
    ("shl", "i32", 1, -1, -2**31),     # -1 & 31 = 31
    ("shl", "i8", 3, 9, 6),            # 9 & 7 = 1
    ("shr", "i64", -2**40, 64 + 38, -4),
    ("shr", "i16", 1024, -6, 1),       # -6 & 15 = 10
])
def test_shift_counts_are_taken_modulo_the_bit_width(op, ty, a, count, expected):
    """As OpenCL C and the compiled kernels (docs/decisions.md), not a fault."""
    assert binary(op, ty, a, count) == expected


# ---------------------------------------------------------------- floating point

@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_float_rem_is_c_fmod(ty):
    assert binary("rem", ty, -7.5, 2.0) == -1.5
    assert binary("rem", ty, 7.5, -2.0) == 1.5


@pytest.mark.parametrize("op, expected", [("min", 1.0), ("max", 1.0)])
def test_float_min_max_ignore_nan_like_fmin(op, expected):
    assert binary(op, "f32", np.nan, 1.0) == expected
    assert binary(op, "f32", 1.0, np.nan) == expected
    assert binary(op, "f32", -0.5, 0.25) == (-0.5 if op == "min" else 0.25)


def test_float_division_by_zero_is_ieee():
    assert binary("div", "f32", 1.0, 0.0) == np.inf
    assert np.isnan(binary("div", "f64", 0.0, 0.0))


def test_f32_arithmetic_rounds_to_single():
    a, b = 1.0, 1e-8
    assert binary("add", "f32", a, b) == np.float32(1.0)
    assert binary("add", "f64", a, b) == 1.0 + 1e-8
    assert binary("mul", "f32", 0.1, 3.0) == np.float32(0.1) * np.float32(3.0)


def test_f16_arithmetic_rounds_after_each_operation():
    a, b = np.float16(1.0), np.float16(0.0004)
    assert binary("add", "f16", a, b) == np.float16(1.0)  # 0.0004 < half an ulp of 1 in f16
    assert binary("mul", "f16", 300.0, 300.0) == np.inf   # beyond 65504
    assert binary("div", "f16", 1.0, 3.0) == np.float16(1.0) / np.float16(3.0)


def test_complex_arithmetic():
    a, b = np.complex64(1 + 2j), np.complex64(3 - 1j)
    assert binary("mul", "c32", a, b) == np.complex64((1 + 2j) * (3 - 1j))
    assert binary("div", "c64", 1 + 2j, 3 - 1j) == (1 + 2j) / (3 - 1j)
    assert binary("sub", "c64", 1 + 2j, 3 - 1j) == -2 + 3j


# ---------------------------------------------------------------- bf16

def bf16(value: float) -> float:
    return bf16_bits_to_float(int(binary("add", "bf16", value, 0.0)))


def test_bf16_memory_holds_rounded_bit_patterns():
    assert binary("add", "bf16", 1.0, 0.0) == 0x3F80
    assert binary("add", "bf16", -2.0, 0.0) == 0xC000
    assert binary("mul", "bf16", 3.0, 0.5) == 0x3FC0  # 1.5


def test_bf16_rounds_to_nearest_even_after_each_operation():
    # bf16 has 7 fraction bits: the neighbours of 1 are 1 ± 2^-7 (above) / 2^-8 (below).
    assert binary("add", "bf16", 1.0, 2.0**-8) == 0x3F80          # tie -> even (1.0)
    assert binary("add", "bf16", 1.0 + 2.0**-7, 2.0**-8) == 0x3F82  # tie -> even (1 + 2^-6)
    assert binary("add", "bf16", 1.0, 2.0**-8 + 2.0**-9) == 0x3F81  # above the tie -> up
    assert bf16_bits_to_float(int(binary("mul", "bf16", 1.0 + 2.0**-7, 1.0 + 2.0**-7))) == 1.0 + 2.0**-6


def test_bf16_scalar_arguments_are_rounded():
    # 1 + 2^-9 is not a bf16: the argument itself rounds to 1.0.
    assert binary("add", "bf16", 1.0 + 2.0**-9, 0.0) == 0x3F80
    assert binary("add", "bf16", 3.0e38, 3.0e38) == 0x7F80  # overflow to +inf


def test_bf16_loads_and_stores_bit_patterns():
    src = np.array([0x3F80, 0x4040, 0xBF00], dtype=np.uint16)  # 1, 3, -0.5
    out = np.zeros(3, dtype=np.uint16)
    run_text("""
    func @k(%x: memref<bf16x3>, %y: memref<bf16x3>) {
      %two = constant 2.0 : bf16
      %c0 = constant 0 : index
      %c3 = constant 3 : index
      foreach (%i) = (%c0), (%c3) {
        %v = load %x[%i] : bf16
        %w = arith.mul %v, %two : bf16
        store %w, %y[%i]
      }
    }""", [src, out])
    assert list(out) == [0x4000, 0x40C0, 0xBF80]  # 2, 6, -1


# ---------------------------------------------------------------- unary

@pytest.mark.parametrize("op, ty, rty, a, expected", [
    ("arith.abs", "i32", "i32", -5, 5),
    ("arith.abs", "i8", "i8", -128, -128),  # wraps like two's complement
    ("arith.abs", "f32", "f32", -2.5, 2.5),
    ("arith.abs", "c64", "f64", 3 + 4j, 5.0),
    ("arith.neg", "i16", "i16", 7, -7),
    ("arith.neg", "c32", "c32", 1 - 2j, -1 + 2j),
    ("arith.not", "i32", "i32", 5, -6),
    ("arith.not", "i8", "i8", 0, -1),
    ("arith.conj", "c64", "c64", 1 + 2j, 1 - 2j),
    ("arith.im", "c32", "f32", 1 + 2j, 2.0),
    ("arith.re", "c64", "f64", 1 + 2j, 1.0),
    ("math.exp", "f32", "f32", 1.0, np.exp(np.float32(1.0))),
    ("math.exp", "f64", "f64", 0.5, math.exp(0.5)),
    ("math.native_exp", "f32", "f32", -1.0, np.exp(np.float32(-1.0))),
    ("math.exp", "c64", "c64", 1j * math.pi, np.exp(1j * math.pi)),
])
def test_unary(op, ty, rty, a, expected):
    assert unary(op, ty, rty, a) == expected


# ---------------------------------------------------------------- cast

@pytest.mark.parametrize("src, dst, a, expected", [
    ("f32", "i32", 2.7, 2),
    ("f32", "i32", -2.7, -2),
    ("f64", "i8", -128.9, -128),
    ("f64", "i64", 2.0**62 + 2048, 2**62 + 2048),
    ("f16", "i16", 1000.5, 1000),
    ("i32", "i8", 300, 44),
    ("i32", "i8", -129, 127),
    ("i8", "i64", -5, -5),
    ("i64", "i16", 2**40 + 3, 3),
    ("i8", "f32", -7, -7.0),
    ("i64", "f32", 2**24 + 1, 2.0**24),       # round to nearest even
    ("f64", "f32", 0.1, np.float32(0.1)),
    ("f32", "f16", 65520.0, np.inf),           # rounds beyond the largest half
    ("f32", "f16", 1.0 + 2.0**-11, 1.0),       # tie -> even
    ("f32", "f64", 0.1, float(np.float32(0.1))),
    ("f32", "c32", 1.5, 1.5 + 0j),
    ("i32", "c64", -3, -3 + 0j),
    ("c32", "c64", 1 + 2j, 1 + 2j),
])
def test_cast(src, dst, a, expected):
    assert unary("cast", src, dst, a) == expected


def test_cast_to_bf16_rounds():
    assert unary("cast", "f32", "bf16", 1.0 + 2.0**-8 + 2.0**-12) == 0x3F81
    assert unary("cast", "i8", "bf16", -3) == 0xC040


@pytest.mark.parametrize("value", [np.nan, np.inf, 3e9, -3e9])
def test_cast_of_unrepresentable_float_to_int_faults(value):
    with pytest.raises(ReferenceFault, match="does not fit i32"):
        unary("cast", "f32", "i32", value)


# ---------------------------------------------------------------- cmp, constant

@pytest.mark.parametrize("ty", ["i32", "f64"])
@pytest.mark.parametrize("a, b", [(1, 2), (2, 2), (3, 2)])
@pytest.mark.parametrize("cond", ["eq", "ne", "gt", "ge", "lt", "le"])
def test_cmp(ty, a, b, cond):
    out = np.zeros(1, dtype=np.int32)
    run_text(f"""
    func @k(%a: {ty}, %b: {ty}, %out: memref<i32x1>) {{
      %c = cmp.{cond} %a, %b : bool
      %r = if %c -> (i32) {{
        %one = constant 1 : i32
        yield (%one)
      }} else {{
        %zero = constant 0 : i32
        yield (%zero)
      }}
      %c0 = constant 0 : index
      store %r, %out[%c0]
    }}""", [a, b, out])
    expected = {"eq": a == b, "ne": a != b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b}[cond]
    assert out[0] == int(expected)


def test_cmp_with_nan_is_unordered():
    out = np.zeros(2, dtype=np.int32)
    run_text("""
    func @k(%a: f32, %out: memref<i32x2>) {
      %lt = cmp.lt %a, %a : bool
      %ne = cmp.ne %a, %a : bool
      %one = constant 1 : i32
      %zero = constant 0 : i32
      %c0 = constant 0 : index
      %c1 = constant 1 : index
      %x = if %lt -> (i32) {
        yield (%one)
      } else {
        yield (%zero)
      }
      %y = if %ne -> (i32) {
        yield (%one)
      } else {
        yield (%zero)
      }
      store %x, %out[%c0]
      store %y, %out[%c1]
    }""", [np.float32(np.nan), out])
    assert list(out) == [0, 1]


def test_constants_of_every_type():
    ints = np.zeros(3, dtype=np.int8)
    floats = np.zeros(2, dtype=np.float32)
    complexes = np.zeros(1, dtype=np.complex128)
    run_text("""
    func @k(%i: memref<i8x3>, %f: memref<f32x2>, %c: memref<c64x1>) {
      %c0 = constant 0 : index
      %c1 = constant 1 : index
      %c2 = constant 2 : index
      %a = constant -128 : i8
      %b = constant 127 : i8
      %t = constant true : bool
      %n = arith.not %t : bool
      %x = if %n -> (i8) {
        yield (%a)
      } else {
        yield (%b)
      }
      store %a, %i[%c0]
      store %b, %i[%c1]
      store %x, %i[%c2]
      %p = constant 0.1 : f32
      %q = constant -0x1.8p1 : f32
      store %p, %f[%c0]
      store %q, %f[%c1]
      %z = constant [1.5, -2.0] : c64
      store %z, %c[%c0]
    }""", [ints, floats, complexes])
    assert list(ints) == [-128, 127, 127]
    assert floats[0] == np.float32(0.1) and floats[1] == -3.0
    assert complexes[0] == 1.5 - 2j
