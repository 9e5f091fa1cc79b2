"""Control flow: for, if, yield."""

from __future__ import annotations

import pytest

from tests.verifier.conftest import expect_error, expect_errors, expect_ok, fn


PRELUDE = """\
%z = constant 0 : index
%n = constant 8 : index
%z32 = constant 0 : i32
%n32 = constant 8 : i32
%i64 = constant 1 : i64
%f32 = constant 1.0 : f32
%f64 = constant 1.0 : f64
%t = constant true : bool
"""


def check_ok(body: str) -> None:
    expect_ok(fn(PRELUDE + body, "%A: memref<f32x8>"))


def check_rejected(body: str, message: str, at: str, after: str | None = None) -> None:
    expect_error(fn(PRELUDE + body, "%A: memref<f32x8>"), message, at=at, after=after or body.split("\n")[0])


# ---------------------------------------------------------------- for

@pytest.mark.parametrize("body", [
    "for %k = %z, %n {\n}",
    "for %k = %z, %n, %n {\n  %v = load %A[%k] : f32\n}",
    "for %k:i32 = %z32, %n32 {\n  %s = arith.add %k, %z32 : i32\n}",
    "%fn_1, %fn = for %k:i32 = %z32, %n32 init(%a=%i64, %b=%i64) -> (i64, i64) {\n"
    "  %c = arith.add %a, %b : i64\n  yield (%b, %c)\n}",
    "for %k = %z, %n {\n} {unroll=true}",
    "for %k = %z, %n {\n} {unroll=false}",
    "for %k = %z, %n {\n  yield ()\n}",
    "parallel {\n  %m = constant 0.0 : coopmatrix<f32x8x8,matrix_acc>\n"
    "  %r = for %k = %z, %n init(%acc=%m) -> (coopmatrix<f32x8x8,matrix_acc>) {\n"
    "    %s = arith.add %acc, %acc : coopmatrix<f32x8x8,matrix_acc>\n    yield (%s)\n  }\n}",
    "%r = for %k = %z, %n init(%flag=%t) -> (bool) {\n  yield (%flag)\n}",
])
def test_for_ok(body):
    check_ok(body)


@pytest.mark.parametrize("body, message, at", [
    ("for %k:i32 = %z, %n32 {\n}", "for: lower bound must have type i32 (the loop type), got index", "%z,"),
    ("for %k = %z, %n32 {\n}", "for: upper bound must have type index (the loop type), got i32", "%n32"),
    ("for %k = %z, %n, %z32 {\n}", "for: step must have type index (the loop type), got i32", "%z32"),
    ("%r = for %k = %z, %n init(%a=%f64) -> (f32) {\n  yield (%a)\n}",
     "for: initial value 0 must have type f32 (the type of carried value 0), got f64", "%f64"),
    ("%r = for %k = %z, %n init(%a=%f32) -> (f32) {\n}",
     "for: the loop carries 1 value, so its body must end with a yield", "%r"),
    ("%r, %s = for %k = %z, %n init(%a=%i64, %b=%i64) -> (i64, i64) {\n  yield (%a)\n}",
     "yield: the for loop carries 2 values (i64, i64), but 1 is yielded", "yield"),
    ("%r = for %k = %z, %n init(%a=%i64) -> (i64) {\n  yield (%n)\n}",
     "yield: value 0 must have type i64 (the type of carried value 0), got index", "%n)"),
    ("for %k = %z, %n {\n  yield (%f32)\n}", "yield: the for loop carries 0 values, but 1 is yielded", "yield"),
    ('for %k = %z, %n {\n} {"unrol"=true}',
     "for: unknown attribute 'unrol' on for (did you mean 'unroll'?); allowed: unroll", "for"),
    ("for %k = %z, %n {\n} {unroll=0}", "for: the unroll count must be positive (and below 2^32), "
     "got 0", "for"),
    ('for %k = %z, %n {\n} attributes {unroll="4"}',
     'for: unroll must be true, false or a positive unroll count, got "4"', "for"),
])
def test_for_rejected(body, message, at):
    check_rejected(body, message, at)


def test_for_yield_of_a_memref():
    source = fn(PRELUDE + "for %k = %z, %n {\n  yield (%A)\n}", "%A: memref<f32x8>")
    expect_errors(source, [
        ("yield: the for loop carries 0 values, but 1 is yielded", "yield"),
        ("yield: value 0 must have bool, scalar or coopmatrix type, got memref<f32x8>", "%A)"),
    ])


# ---------------------------------------------------------------- if

@pytest.mark.parametrize("body", [
    "if %t {\n}",
    "if %t {\n} else {\n}",
    "%x = if %t -> (i32) {\n  yield (%z32)\n} else {\n  %c = constant 16 : i32\n  yield (%c)\n}",
    "%x, %y = if %t -> (i32, f32) {\n  yield (%z32, %f32)\n} else {\n  yield (%n32, %f32)\n}",
    "if %t {\n  yield ()\n} else {\n  yield ()\n}",
    "%c = cmp.lt %z32, %n32 : bool\nif %c {\n  gemm.n.n %f32, %B, %B, %f32, %B\n}",
])
def test_if_ok(body):
    expect_ok(fn(PRELUDE + body, "%A: memref<f32x8>, %B: memref<f32x8x8>"))


@pytest.mark.parametrize("body, message, at", [
    ("if %z32 {\n}", "if: condition must have type bool, got i32", "%z32"),
    ("%x = if %t -> (i32) {\n  yield (%z32)\n}",
     "if: the if returns 1 value, so it needs an else region that ends with a yield", "%x"),
    ("%x = if %t -> (i32) {\n} else {\n  yield (%z32)\n}",
     "if: the if returns 1 value, so its then region must end with a yield", "%x"),
    ("%x = if %t -> (i32) {\n  yield (%z32)\n} else {\n  %c = constant 1 : i32\n}",
     "if: the if returns 1 value, so its else region must end with a yield", "%x"),
    ("%x, %y = if %t -> (i32, f32) {\n  yield (%z32)\n} else {\n  yield (%z32, %f32)\n}",
     "yield: the if returns 2 values (i32, f32), but 1 is yielded", "yield"),
    ("%x = if %t -> (i32) {\n  yield (%z32)\n} else {\n  yield (%f32)\n}",
     "yield: value 0 must have type i32 (the type of result 0), got f32", "%f32)"),
    ("if %t {\n  yield (%z32)\n}", "yield: the if returns 0 values, but 1 is yielded", "yield"),
])
def test_if_rejected(body, message, at):
    check_rejected(body, message, at)
