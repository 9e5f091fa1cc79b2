"""Bit patterns of numeric constants.

OpConstant stores the value's bits in 32-bit words, low word first. Python
floats are doubles, so narrower floats are rounded to nearest-even here
(NumPy does the IEEE conversion, overflow gives inf, never an exception).
bf16 has no SPIR-V type on our runtime; it travels as a 16-bit integer.
"""

from __future__ import annotations

import numpy as np

_FLOAT_DTYPES = {16: (np.float16, np.uint16), 32: (np.float32, np.uint32), 64: (np.float64, np.uint64)}


def int_words(value: int, width: int) -> list[int]:
    """Words of an integer constant of `width` bits (two's complement, low word first).

    OpenCL integer types are signless, so widths below 32 are zero-extended
    into the word (spirv-val rejects set high bits for signedness 0).
    """
    value = int(value)
    if not -(1 << (width - 1)) <= value < (1 << width):
        raise ValueError(f"{value} does not fit in {width} bits")
    value &= (1 << width) - 1
    return [value & 0xFFFFFFFF] if width <= 32 else [value & 0xFFFFFFFF, value >> 32]


def float_bits(value: float, width: int) -> int:
    """IEEE bits of `value` rounded to nearest-even at the given width."""
    ftype, itype = _FLOAT_DTYPES[width]
    with np.errstate(over="ignore"):
        return int(np.array(float(value), dtype=np.float64).astype(ftype).view(itype))


def float_words(value: float, width: int) -> list[int]:
    """Words of a float constant."""
    bits = float_bits(value, width)
    return [bits & 0xFFFFFFFF] if width <= 32 else [bits & 0xFFFFFFFF, bits >> 32]


def bf16_bits(value: float) -> int:
    """bfloat16 bits of a Python float, correctly rounded to nearest-even.

    Rounding f64 -> f32 -> bf16 naively rounds twice and can be off by one
    ulp; rounding to f32 *toward zero with a sticky bit* first ("round to
    odd") keeps the second rounding exact.
    """
    value = float(value)
    if value != value:
        return 0x7FC0
    with np.errstate(over="ignore"):
        near = np.float32(value)
        if abs(float(near)) > abs(value):
            near = np.nextafter(near, np.float32(0))
    bits = int(np.array(near, dtype=np.float32).view(np.uint32))
    if float(near) != value:
        bits |= 1
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
