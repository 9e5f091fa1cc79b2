"""Python/NumPy scalars -> one kernel argument each, as dpctl 0.22 accepts them.

dpctl's accepted kinds (RUNTIME-NOTES §15): i8 only as ctypes.c_uint8 of the
bit pattern; i16/i32/i64/index as c_int16/32/64; f32/f64 as c_float/c_double;
f16 and bf16 as their 16-bit pattern in c_uint16 (bf16 rounds the f32 value
to nearest even); c32/c64 as a RawKernelArg of the (re, im) pair.

Typing rules: integers must fit the type (no silent wrap-around); a float to
an integer parameter is an error; an integer to a float or complex parameter
is fine; a complex only goes to a complex parameter; bools only go to bool
parameters (True is rarely meant as 1).

A `bool` parameter is an OpTypeBool kernel parameter, as the reference
emits it; the CPU runtime takes it as one byte, nonzero for true (measured,
docs/decisions.md), so Python's bool and NumPy's bool_ are passed as
c_uint8 0 or 1.
"""

from __future__ import annotations

import ctypes
import numbers
from typing import Any, Callable

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.ir.types import ScalarType

ScalarPacker = Callable[[Any], Any]

_INT_CTYPES = {
    "i8": ctypes.c_uint8,  # dpctl rejects c_int8: pass the bit pattern
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "index": ctypes.c_int64,
}


def float_to_bf16_bits(value: float) -> int:
    """bf16 bit pattern of `value`: f32 rounded to nearest even, NaN kept quiet."""
    with np.errstate(over="ignore"):  # beyond f32 range is inf, as intended
        bits = int(np.array(value, dtype=np.float32).view(np.uint32))
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:
        return (bits >> 16) | 0x0040
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def bf16_bits_to_float(bits: int) -> float:
    """The f32 value of a bf16 bit pattern (for tests and printing)."""
    return float(np.array(bits << 16, dtype=np.uint32).view(np.float32))


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def bool_packer(name: str) -> ScalarPacker:
    """A bool parameter: Python bool or numpy.bool_, as one byte (docs/decisions.md)."""

    def pack(value: Any) -> Any:
        if not _is_bool(value):
            raise LaunchError(f"expected a bool (True, False or numpy.bool_), got "
                              f"{_kind_name(value)}", argument=name)
        return ctypes.c_uint8(1 if value else 0)

    return pack


def _kind_name(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"


def _int_packer(t: ScalarType, name: str) -> ScalarPacker:
    make = _INT_CTYPES[t.name]
    low, high = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    wrap = t.name == "i8"

    def pack(value: Any) -> Any:
        if type(value) is not int and (_is_bool(value) or not isinstance(value, (int, np.integer))):
            raise LaunchError(f"expected an integer for {t}, got {_kind_name(value)}", argument=name)
        number = int(value)
        if not low <= number <= high:
            raise LaunchError(f"{number} is out of range for {t} [{low}, {high}]", argument=name)
        return make(number & 0xFF) if wrap else make(number)

    return pack


_FLOATS = (float, np.float32, np.float64)  # the common cases, without ABC checks


def _real(value: Any, t: ScalarType, name: str) -> float:
    if type(value) in _FLOATS:
        return float(value)
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise LaunchError(f"expected a real number for {t}, got {_kind_name(value)}", argument=name)
    try:
        return float(value)
    except OverflowError:
        raise LaunchError(f"{value} is too large for {t}", argument=name) from None


def _float_packer(t: ScalarType, name: str) -> ScalarPacker:
    if t.name == "f32":
        return lambda value: ctypes.c_float(_real(value, t, name))
    if t.name == "f64":
        return lambda value: ctypes.c_double(_real(value, t, name))
    if t.name == "f16":

        def pack_f16(value: Any) -> Any:
            with np.errstate(over="ignore"):  # beyond f16 range is inf, as intended
                return ctypes.c_uint16(int(np.array(_real(value, t, name), np.float16).view(np.uint16)))

        return pack_f16
    if t.name == "bf16":
        return lambda value: ctypes.c_uint16(float_to_bf16_bits(_real(value, t, name)))
    raise ValueError(f"no packer for {t}")


def _complex_packer(t: ScalarType, name: str, raw_arg: Callable[[np.ndarray], Any]) -> ScalarPacker:
    component = np.float32 if t.name == "c32" else np.float64

    def pack(value: Any) -> Any:
        if _is_bool(value) or not isinstance(value, numbers.Complex):
            raise LaunchError(f"expected a complex number for {t}, got {_kind_name(value)}", argument=name)
        try:
            number = complex(value)
        except OverflowError:
            raise LaunchError(f"{value} is too large for {t}", argument=name) from None
        with np.errstate(over="ignore"):  # beyond the component range is inf
            return raw_arg(np.array([number.real, number.imag], dtype=component))

    return pack


def scalar_packer(t: ScalarType, name: str, raw_arg: Callable[[np.ndarray], Any] | None = None) -> ScalarPacker:
    """A function value -> kernel argument for parameter `name` of type `t`.

    `raw_arg` is dpctl.RawKernelArg (passed in so this module never imports
    dpctl); it is only needed for complex types.
    """
    if t.is_int:
        return _int_packer(t, name)
    if t.is_float:
        return _float_packer(t, name)
    if raw_arg is None:
        raise ValueError("complex parameters need dpctl.RawKernelArg")
    return _complex_packer(t, name, raw_arg)
