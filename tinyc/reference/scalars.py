"""How IR scalar types live in NumPy: in registers, in memory, and between them.

A value of an IR scalar type is a NumPy scalar (uniform) or a 1-D array with
one entry per emulated work-item (varying), always of the type's *register*
dtype. Registers and memory agree except for bf16: NumPy has no bfloat16, so
a bf16 register is a float32 holding a value that bf16 represents exactly
(every operation rounds its f32 result back to bf16), while bf16 memory holds
uint16 bit patterns, as the runtime passes bf16 arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from tinyc.ir.types import BoolType, CoopMatrixType, ScalarType, Type, bf16

_REGISTER: dict[str, type] = {
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64,
    "bf16": np.float32, "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "c32": np.complex64, "c64": np.complex128,
}


@lru_cache(maxsize=None)
def register_dtype(t: Type) -> np.dtype:
    """Dtype of a value of type `t` held in a register (bool, scalar)."""
    if isinstance(t, BoolType):
        return np.dtype(np.bool_)
    if isinstance(t, ScalarType):
        return np.dtype(_REGISTER[t.name])
    raise TypeError(f"{t} has no scalar register dtype")


@lru_cache(maxsize=None)
def storage_dtype(t: ScalarType) -> np.dtype:
    """Dtype of an element of type `t` in memory (bf16: uint16 bit patterns)."""
    return np.dtype(np.uint16) if t.name == "bf16" else register_dtype(t)


@lru_cache(maxsize=None)
def compute_dtype(t: ScalarType) -> np.dtype:
    """Dtype in which collectives accumulate for output type `t`.

    16-bit floats accumulate in f32 and are rounded once at the end; every
    other type computes in its own dtype (integers wrap).
    """
    return np.dtype(np.float32) if t.name in ("bf16", "f16") else register_dtype(t)


# ---------------------------------------------------------------- bf16

def round_bf16(x: Any) -> Any:
    """Round float32 values to the nearest bf16 (ties to even); stays float32."""
    return bf16_to_f32(f32_to_bf16(x))


def f32_to_bf16(x: Any) -> Any:
    """uint16 bf16 bit patterns of float32 values: round to nearest even, NaN stays NaN."""
    arr = np.asarray(x, dtype=np.float32)
    bits = arr.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    out = np.where(nan, (bits >> 16) | 0x0040, rounded).astype(np.uint16)
    return out[()] if out.ndim == 0 else out


def bf16_to_f32(bits: Any) -> Any:
    """float32 values of uint16 bf16 bit patterns (exact)."""
    arr = np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16
    out = arr.view(np.float32)
    return out[()] if out.ndim == 0 else out


# ---------------------------------------------------------------- conversions

@dataclass
class CoopMatrix:
    """A coopmatrix value: `data[s]` is the whole matrix held by subgroup s."""

    data: np.ndarray  # (subgroups, rows, cols), component register dtype


def is_varying(x: Any) -> bool:
    """A per-work-item array rather than one uniform value."""
    return isinstance(x, np.ndarray) and x.ndim > 0


def coerce(x: Any, t: Type) -> Any:
    """`x` as a register value of type `t`: NumPy casting (integers wrap), bf16 rounded."""
    if type(t) is CoopMatrixType:
        return CoopMatrix(coerce(x.data, t.component))  # type: ignore[attr-defined]
    dt = register_dtype(t)
    if isinstance(x, np.ndarray):
        y = x if x.dtype == dt else x.astype(dt)
        if not y.ndim:
            y = y[()]
    elif getattr(x, "dtype", None) == dt:
        y = x
    else:
        y = np.asarray(x).astype(dt)[()]
    return round_bf16(y) if t is bf16 else y


def to_storage(x: Any, t: ScalarType) -> Any:
    """Register values of type `t` as they are written to memory."""
    if t.name == "bf16":
        return f32_to_bf16(np.asarray(x, dtype=np.float32))
    return np.asarray(x).astype(storage_dtype(t))


def from_storage(x: Any, t: ScalarType) -> Any:
    """Memory elements of type `t` as register values."""
    return bf16_to_f32(x) if t.name == "bf16" else x


def wrap_int(value: int, t: ScalarType) -> int:
    """A Python integer reduced modulo 2^bits into the signed range of `t`."""
    half = 1 << (t.bits - 1)
    return (int(value) + half) % (2 * half) - half


def make_constant(value: bool | int | float | complex, t: Type) -> Any:
    """The register value of a `constant` instruction of scalar or bool type."""
    dt = register_dtype(t)
    if isinstance(t, BoolType):
        return np.bool_(bool(value))
    assert isinstance(t, ScalarType)
    if t.is_int:
        return dt.type(wrap_int(value, t))
    if t.is_complex:
        return dt.type(complex(value))
    return coerce(np.float64(value), t)


def int_range(t: ScalarType) -> tuple[int, int]:
    """Smallest and largest value of a signed integer type."""
    half = 1 << (t.bits - 1)
    return -half, half - 1
