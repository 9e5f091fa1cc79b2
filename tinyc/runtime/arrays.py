"""Array arguments (NumPy or USM) checked against a memref type.

An array is reduced to an `ArrayView`: dtype, shape, element strides and the
address of element (0, ..., 0), plus where the data lives (a NumPy array to
copy, or a USM object passed as is). `fit_memref` then matches the view to a
memref type and returns the values of its `?` sizes and strides.

Rules (DESIGN.md "Python API"): memrefs are column-major, so
`memref<f32x16x8>` is a (16, 8) float32 array in Fortran order, or any array
whose element strides equal the memref's static strides; `?` sizes and
strides come from the array. Strides of modes with size 1 (or 0) are never
used to address memory, so they are not checked; a `?` stride of such a mode
gets the packed column-major value. Order-0 memrefs take a 0-d or any
one-element array. Element types map to dtypes exactly: i8..i64 -> int8..int64,
index -> int64, f16 -> float16, f32/f64 -> float32/float64, c32 -> complex64,
c64 -> complex128, and bf16 -> a uint16 array holding bf16 bit patterns (or
ml_dtypes.bfloat16 if that package is installed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.ir.types import DYNAMIC, MemrefType, ScalarType, dim_text

_DTYPES: dict[str, tuple[np.dtype, ...]] = {
    "i8": (np.dtype(np.int8),),
    "i16": (np.dtype(np.int16),),
    "i32": (np.dtype(np.int32),),
    "i64": (np.dtype(np.int64),),
    "index": (np.dtype(np.int64),),
    "f16": (np.dtype(np.float16),),
    "bf16": (np.dtype(np.uint16),),
    "f32": (np.dtype(np.float32),),
    "f64": (np.dtype(np.float64),),
    "c32": (np.dtype(np.complex64),),
    "c64": (np.dtype(np.complex128),),
}
try:  # optional: a real bfloat16 dtype
    import ml_dtypes

    _DTYPES["bf16"] += (np.dtype(ml_dtypes.bfloat16),)
except ImportError:
    pass


def dtypes_for(element: ScalarType) -> tuple[np.dtype, ...]:
    """The dtypes an array of `element` may have (the first is the canonical one)."""
    return _DTYPES[element.name]


def _shape_text(shape: tuple[int, ...]) -> str:
    inner = ", ".join(dim_text(s) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


@dataclass
class ArrayView:
    """An array argument reduced to what the kernel ABI needs."""

    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements; modes of size <= 1 may hold anything
    address: int  # of element (0, ..., 0)
    host: np.ndarray | None  # the NumPy array to copy to the device
    usm: Any  # the __sycl_usm_array_interface__ object, passed without copies
    readonly: bool

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def contiguous(self) -> bool:
        """Packed in C or Fortran order: a flat buffer of `size` elements."""
        live = [(n, s) for n, s in zip(self.shape, self.strides) if n > 1]
        return _packed(live) or _packed(live[::-1])


def _packed(modes: list[tuple[int, int]]) -> bool:
    """Strides are 1, n0, n0*n1, ... for these (size, stride) pairs."""
    expect = 1
    for n, s in modes:
        if s != expect:
            return False
        expect *= n
    return True


def extent(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements spanned by a layout starting at element 0 (0 if empty)."""
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def array_view(value: Any, name: str, what: str) -> ArrayView:
    """Describe a NumPy or USM array argument; LaunchError for anything else."""
    if isinstance(value, np.ndarray):
        return _numpy_view(value, name, what)
    iface = getattr(value, "__sycl_usm_array_interface__", None)
    if iface is not None:
        return _usm_view(value, iface, name, what)
    raise LaunchError(
        f"expected a NumPy array or USM array for {what}, got {type(value).__name__}",
        argument=name,
    )


def _check_strides(byte_strides: tuple[int, ...], shape: tuple[int, ...], itemsize: int, name: str, what: str) -> tuple[int, ...]:
    strides = []
    for n, s in zip(shape, byte_strides):
        if n > 1 and (s < 0 or s % itemsize):
            raise LaunchError(
                f"{what}: array strides {byte_strides} (bytes) must be non-negative "
                f"multiples of the element size {itemsize}",
                argument=name,
            )
        strides.append(s // itemsize)
    return tuple(strides)


def _numpy_view(array: np.ndarray, name: str, what: str) -> ArrayView:
    if not array.flags.aligned:
        raise LaunchError(f"{what}: array is not aligned to its element size; pass a copy", argument=name)
    itemsize = array.itemsize
    strides = _check_strides(array.strides, array.shape, itemsize, name, what)
    return ArrayView(
        array.dtype, array.shape, strides, array.__array_interface__["data"][0], array, None,
        not array.flags.writeable,
    )


def _usm_view(obj: Any, iface: dict, name: str, what: str) -> ArrayView:
    try:
        dtype = np.dtype(iface["typestr"])
        shape = tuple(int(n) for n in iface["shape"])
        pointer, readonly = iface["data"]
        offset = int(iface.get("offset") or 0)
        strides = iface.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], 1
            for n in reversed(shape):
                strides.insert(0, step)
                step *= max(n, 1)
        strides = tuple(int(s) for s in strides)
    except (KeyError, TypeError, ValueError) as exc:
        raise LaunchError(f"{what}: malformed __sycl_usm_array_interface__ ({exc})", argument=name) from None
    if len(strides) != len(shape):
        raise LaunchError(f"{what}: malformed __sycl_usm_array_interface__ (strides vs shape)", argument=name)
    byte_strides = tuple(s * dtype.itemsize for s in strides)
    elements = _check_strides(byte_strides, shape, dtype.itemsize, name, what)
    address = int(pointer) + offset * dtype.itemsize
    return ArrayView(dtype, shape, elements, address, None, obj, bool(readonly))


def check_dtype(view: ArrayView, element: ScalarType, name: str, what: str) -> None:
    """The array's dtype must be exactly the element type's."""
    allowed = _DTYPES[element.name]
    if view.dtype not in allowed:
        names = " or ".join(str(d) for d in allowed)
        hint = " (bf16 data is passed as uint16 bit patterns)" if element.name == "bf16" else ""
        raise LaunchError(f"{what}: expected dtype {names}{hint}, got {view.dtype}", argument=name)


@dataclass(frozen=True)
class Layout:
    """A memref layout resolved for one array: sizes, strides, `?` values."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dynamic: tuple[int, ...]  # values of the `?` sizes, then `?` strides


def layout(memref: MemrefType, shape: tuple[int, ...], strides: tuple[int | None, ...]) -> Layout:
    """Fill `?` strides of size-<=1 modes (None here) and collect the `?` values."""
    final: list[int] = []
    for i, (n, s) in enumerate(zip(shape, strides)):
        if s is None:
            static = memref.stride[i]
            s = static if static != DYNAMIC else (final[-1] * max(shape[i - 1], 1) if i else 1)
        final.append(s)
    dynamic = [shape[i] for i, s in enumerate(memref.shape) if s == DYNAMIC]
    dynamic += [final[i] for i, s in enumerate(memref.stride) if s == DYNAMIC]
    return Layout(tuple(shape), tuple(final), tuple(dynamic))


def fit_memref(view: ArrayView, memref: MemrefType, name: str, what: str) -> Layout:
    """Match an array to a memref type: order, sizes and strides (dtype apart)."""
    if memref.order == 0:
        if view.size != 1:
            raise LaunchError(f"{what}: expected a 0-d or one-element array, got shape {view.shape}", argument=name)
        return Layout((), (), ())
    expected = _shape_text(memref.shape)
    if len(view.shape) != memref.order or any(
        s != DYNAMIC and s != n for s, n in zip(memref.shape, view.shape)
    ):
        raise LaunchError(f"{what}: expected shape {expected}, got {_shape_text(view.shape)}", argument=name)
    strides: list[int | None] = []
    for i, (n, s) in enumerate(zip(view.shape, view.strides)):
        if n <= 1:
            strides.append(None)  # never used to address memory
            continue
        static = memref.stride[i]
        if static != DYNAMIC and static != s:
            raise LaunchError(
                f"{what}: expected element strides {_shape_text(memref.stride)}, got "
                f"{_shape_text(view.strides)} (memrefs are column-major: pass a Fortran-order "
                f"array, e.g. np.asfortranarray)",
                argument=name,
            )
        strides.append(s)
    return layout(memref, view.shape, tuple(strides))


def check_batch(shape: tuple[int, ...], mode: int, batch: int, name: str, what: str) -> None:
    """The batch mode must have at least `batch` entries."""
    if shape[mode] < batch:
        raise LaunchError(
            f"{what}: mode {mode} has size {shape[mode]}, too small for batch={batch}",
            argument=name,
        )
