"""Types for built IR, spelled as in Python code: `memref(f32, 16, 8)`, `group(...)`.

A size or stride given as `None`, `"?"` or `DYNAMIC` is the language's `?`.
The results are the interned types of `tinyc.ir.types`, so built IR and
parsed IR share them.
"""

from __future__ import annotations

from typing import Any, Sequence

from tinyc.ir.types import (
    DYNAMIC, SCALAR_TYPES, AddressSpace, CoopMatrixType, GroupType, MatrixUse, MemrefType,
    ScalarType, Type, bf16, bool_, c32, c64, coopmatrix_type, f16, f32, f64, group_type, i8, i16,
    i32, i64, index, memref_type,
)

__all__ = [
    "DYNAMIC", "Type", "ScalarType", "MemrefType", "GroupType", "CoopMatrixType",
    "bool_", "i8", "i16", "i32", "i64", "index", "bf16", "f16", "f32", "f64", "c32", "c64",
    "memref", "group", "coopmatrix", "scalar", "dim",
]

_NUMPY_NAMES = {
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "float16": "f16",
    "bfloat16": "bf16", "float32": "f32", "float64": "f64", "complex64": "c32",
    "complex128": "c64",
}


def dim(value: Any, what: str = "size") -> int:
    """A static size/stride as an int, or DYNAMIC for None, "?" and DYNAMIC."""
    if value is None or value == "?" or (type(value) is int and value == DYNAMIC):
        return DYNAMIC
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import operator

            value = operator.index(value)
        except TypeError:
            raise TypeError(f"a {what} must be an int, None or '?', got {value!r}") from None
    if value < 0:
        raise ValueError(f"a {what} must not be negative, got {value}")
    return int(value)


def scalar(t: Any) -> ScalarType:
    """A scalar type from a ScalarType, its spelling ("f32") or a NumPy dtype (float32)."""
    if isinstance(t, ScalarType):
        return t
    name = t if isinstance(t, str) else getattr(t, "name", None) or getattr(t, "__name__", None)
    if name is None:
        try:
            import numpy as np

            name = np.dtype(t).name
        except Exception:
            name = None
    if isinstance(name, str):
        name = _NUMPY_NAMES.get(name, name)
        if name in SCALAR_TYPES:
            return SCALAR_TYPES[name]
    raise TypeError(f"not a scalar type: {t!r}; use one of {', '.join(SCALAR_TYPES)}")


def memref(element: Any, *shape: Any, stride: Sequence[Any] | None = None,
           local: bool = False) -> MemrefType:
    """`memref(f32, 16, 8)` is memref<f32x16x8>; `stride=` for a strided layout,
    `local=True` for the local address space (alloca)."""
    sizes = tuple(dim(s) for s in shape)
    strides = None if stride is None else tuple(dim(s, "stride") for s in stride)
    if strides is not None and len(strides) != len(sizes):
        raise ValueError(f"memref of order {len(sizes)} needs {len(sizes)} strides, got {len(strides)}")
    space = AddressSpace.LOCAL if local else AddressSpace.GLOBAL
    return memref_type(scalar(element), sizes, strides, space)


def group(memref_ty: MemrefType, size: Any = None, offset: Any = 0) -> GroupType:
    """`group(memref(f32, 16, 8))` is group<memref<f32x16x8>x?>; size and offset may be static."""
    if not isinstance(memref_ty, MemrefType):
        raise TypeError(f"a group holds memrefs, got {memref_ty!r}")
    return group_type(memref_ty, dim(size, "group size"), dim(offset, "offset"))


def coopmatrix(component: Any, rows: int, cols: int, use: str | MatrixUse) -> CoopMatrixType:
    """`coopmatrix(f32, 16, 8, "matrix_acc")` (use: matrix_a, matrix_b, matrix_acc, or a, b, acc)."""
    if not isinstance(use, MatrixUse):
        text = str(use)
        text = text if text.startswith("matrix_") else "matrix_" + text
        try:
            use = MatrixUse(text)
        except ValueError:
            raise ValueError(f"unknown matrix use {use!r}; use matrix_a, matrix_b or matrix_acc") from None
    return coopmatrix_type(scalar(component), int(rows), int(cols), use)


def is_type(t: Any) -> bool:
    return isinstance(t, Type)
