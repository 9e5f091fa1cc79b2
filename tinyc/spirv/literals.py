"""Bit patterns of numeric constants.

OpConstant stores the value's bits in 32-bit words, low word first. Python
floats are doubles, so narrower floats are rounded to nearest-even here
(`struct` does the IEEE conversion; overflow gives inf, never an exception).
bf16 has no SPIR-V type on our runtime; it travels as a 16-bit integer.
No NumPy here: `tinyc compile` must start fast.
"""

from __future__ import annotations

import math
import struct

_FORMATS = {16: ("<e", "<H", 0x7C00), 32: ("<f", "<I", 0x7F800000), 64: ("<d", "<Q", 0x7FF0000000000000)}


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
    ffmt, ifmt, inf_bits = _FORMATS[width]
    value = float(value)
    try:
        return struct.unpack(ifmt, struct.pack(ffmt, value))[0]
    except OverflowError:  # rounds to infinity at this width
        sign_bit = 1 << (width - 1)
        return inf_bits | (sign_bit if math.copysign(1.0, value) < 0 else 0)


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
    bits = float_bits(value, 32)
    near = struct.unpack("<f", struct.pack("<I", bits))[0]
    if math.isinf(near) and not math.isinf(value):
        bits -= 1  # toward zero: the largest finite f32 of that sign
        near = struct.unpack("<f", struct.pack("<I", bits))[0]
    elif abs(near) > abs(value):
        bits -= 1  # one ulp toward zero (same sign: the magnitude bits shrink)
        near = struct.unpack("<f", struct.pack("<I", bits))[0]
    if near != value:
        bits |= 1
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
