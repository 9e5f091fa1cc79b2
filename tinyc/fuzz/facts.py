"""What the generator knows about types: which it draws, their tolerances and exact operations."""

from __future__ import annotations

from tinyc.ir.types import ScalarType, Type, bf16, c32, c64, f16, f32, f64, i8, i16, i32, i64, index

SCALARS: tuple[ScalarType, ...] = (i8, i16, i32, i64, index, bf16, f16, f32, f64, c32, c64)
INTEGERS = (i8, i16, i32, i64, index)
REALS = (bf16, f16, f32, f64)
COMPLEX = (c32, c64)
DATA_TYPES = (i8, i16, i32, i64, f16, bf16, f32, f64, c32, c64)  # element types of arrays
INT_RANGE = {"i8": 7, "i16": 15, "i32": 31, "i64": 63, "index": 63}
TOLERANCE = {"f16": 2e-2, "bf16": 6e-2, "f32": 1e-3, "c32": 1e-3, "f64": 1e-9, "c64": 1e-9}
"""Relative error allowed for results computed inexactly in a type (f32: native_exp's 12 bits)."""


def tolerance(t: Type) -> float:
    return TOLERANCE.get(getattr(t, "name", ""), 0.0)

MAX_DEPTH = 4  # nesting of regions
MAX_STEPS = 14  # instructions per region (before nesting)


def type_text(t: Type) -> str:
    return str(t)


def int_limits(t: ScalarType) -> tuple[int, int]:
    bits = INT_RANGE[t.name]
    return -(1 << bits), (1 << bits) - 1


def exact_op(t: ScalarType, op: str) -> bool:
    """Does the device round `op` on `t` exactly like the reference? (Integers always;
    floats for the correctly rounded operations; f32 division is not correctly rounded
    by OpenCL's default; complex products and quotients are left out.)"""
    if t.is_int:
        return True
    if op in ("add", "sub", "neg", "abs", "min", "max", "conj", "re", "im", "rem"):
        return op != "abs" or not t.is_complex
    if op == "mul":
        return not t.is_complex
    if op == "div":
        return t in (f64, f16, bf16)
    return False
