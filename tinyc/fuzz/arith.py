"""Arithmetic values for the generator: a binary or unary result of a wanted type, free of
undefined behaviour (divisors in 1..8 or away from zero, shift amounts below the bit width,
no negation of the smallest integer), with whether the device computes it exactly."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinyc.fuzz.facts import exact_op, int_limits, tolerance
from tinyc.fuzz.program import LANE, Val
from tinyc.ir.types import ScalarType

if TYPE_CHECKING:
    from tinyc.fuzz.generator import Writer


def arith_value(w: Writer, t: ScalarType, *, level: int = LANE, exact: bool = False,
                depth: int = 1) -> Val | None:
    """A binary or unary arithmetic result of type t, free of undefined behaviour."""
    rng = w.rng
    if t.is_int:
        ops = ["add", "sub", "mul", "div", "rem", "min", "max", "shl", "shr", "and", "or", "xor",
               "neg", "not", "abs"]
    elif t.is_complex:
        ops = ["add", "sub", "mul", "div", "neg", "conj"]
    else:
        ops = ["add", "sub", "mul", "div", "rem", "min", "max", "neg", "abs"]
    if exact:
        ops = [op for op in ops if exact_op(t, op)]
    op = rng.choice(ops)
    if t.is_float and op == "rem":
        # fmod is discontinuous: a dividend or divisor off by the tolerance moves the result by
        # anything up to the divisor (seed 9191, program 19070), so both must be exact
        exact = True
    a = w.scalar(t, level=level, exact=exact, depth=depth)
    name = w.fresh("v")
    if op in ("neg", "not", "abs", "conj"):
        if t.is_int and op in ("neg", "abs"):  # -MIN overflows: keep a away from it
            a = _clamped_int(w, a, t, level)
        w.emit(f"{name} = arith.{op} {a.name} : {t}")
        lo = hi = None
        if t.is_int and a.lo is not None and op == "neg":
            lo, hi = -a.hi, -a.lo
        return w.define(name, t, level=a.level, exact=a.exact, lo=lo, hi=hi, tol=a.tol)
    b = w.scalar(t, level=level, exact=exact, depth=depth)
    lo = hi = None
    if t.is_int and op in ("div", "rem"):
        b = _positive_small(w, b, t, level)  # a divisor in 1..8: no division by 0, no MIN / -1
    elif t.is_int and op in ("shl", "shr"):
        mask = w.constant(t, {"i8": 7, "i16": 15, "i32": 31}.get(t.name, 63))
        masked = w.fresh("m")
        w.emit(f"{masked} = arith.and {b.name}, {mask.name} : {t}")
        b = w.define(masked, t, lo=0, hi=int(mask.lo), level=b.level)
    elif t.is_float and op in ("div", "rem"):
        b = _away_from_zero(w, b, t, level)
    elif t.is_complex and op == "div":
        b = _away_from_zero_complex(w, b, t, level)
    if t.is_int and op == "add" and None not in (a.lo, a.hi, b.lo, b.hi):
        lo, hi = a.lo + b.lo, a.hi + b.hi
        low, high = int_limits(t)
        if not (low <= lo and hi <= high):
            lo = hi = None
    elif t.is_int and op == "rem" and a.lo is not None and a.lo >= 0:
        lo, hi = 0, b.hi - 1
    elif t.is_int and op in ("min", "max") and None not in (a.lo, a.hi, b.lo, b.hi):
        f = min if op == "min" else max
        lo, hi = f(a.lo, b.lo), f(a.hi, b.hi)
    w.emit(f"{name} = arith.{op} {a.name}, {b.name} : {t}")
    w.feature(f"arith.{op}")
    result_exact = a.exact and b.exact and exact_op(t, op)
    tol = max(a.tol, b.tol, 0.0 if exact_op(t, op) else tolerance(t.component if t.is_complex else t))
    return w.define(name, t, level=min(a.level, b.level), exact=result_exact, lo=lo, hi=hi, tol=tol)


def _clamped_int(w: Writer, a: Val, t: ScalarType, level: int) -> Val:
    low, _ = int_limits(t)
    if a.lo is not None and a.lo > low:
        return a
    floor = w.constant(t, low + 1)
    name = w.fresh("m")
    w.emit(f"{name} = arith.max {a.name}, {floor.name} : {t}")
    return w.define(name, t, level=a.level, exact=a.exact)


def _positive_small(w: Writer, b: Val, t: ScalarType, level: int) -> Val:
    """(b and 7) + 1: in 1..8 whatever b is."""
    if b.lo is not None and b.lo >= 1 and b.hi is not None and b.hi <= 64:
        return b
    seven, one = w.constant(t, 7), w.constant(t, 1)
    m, s = w.fresh("m"), w.fresh("d")
    w.emit(f"{m} = arith.and {b.name}, {seven.name} : {t}")
    w.emit(f"{s} = arith.add {m}, {one.name} : {t}")
    return w.define(s, t, lo=1, hi=8, level=b.level, exact=b.exact)


def _away_from_zero(w: Writer, b: Val, t: ScalarType, level: int) -> Val:
    """|b| + 1 (NaN stays NaN): never zero, keeps quotients small."""
    one = w.constant(t, 1.0)
    a, s = w.fresh("m"), w.fresh("d")
    w.emit(f"{a} = arith.abs {b.name} : {t}")
    w.emit(f"{s} = arith.add {a}, {one.name} : {t}")
    return w.define(s, t, level=b.level, exact=b.exact)


def _away_from_zero_complex(w: Writer, b: Val, t: ScalarType, level: int) -> Val:
    two = w.constant(t, complex(2.0, 0.5))
    s = w.fresh("d")
    w.emit(f"{s} = arith.add {b.name}, {two.name} : {t}")
    return w.define(s, t, level=b.level, exact=False)
