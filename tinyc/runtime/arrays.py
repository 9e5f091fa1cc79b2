"""Array arguments (NumPy or USM) checked against a memref type.

An array is reduced to an `ArrayView`: dtype, shape, element strides and the
address of element (0, ..., 0), plus where the data lives (a NumPy array to
copy, or a USM object passed as is). `fit_memref` then matches the view to a
memref type and returns the values of its `?` sizes and strides.

Rules (DESIGN.md "Python API"): memrefs are column-major, so
`memref<f32x16x8>` is a (16, 8) float32 array in Fortran order, or any array
whose element strides equal the memref's static strides; `?` sizes and
strides come from the array. Strides of modes with size 1 (or 0) address no
element of their own mode, so they are not checked against static ones; a
`?` stride of such a mode is still the array's own (it matters to `fuse`,
whose fused stride is its first mode's), or the packed column-major value
when the array's is negative. Order-0 memrefs take a 0-d or any
one-element array. Element types map to dtypes exactly: i8..i64 -> int8..int64,
index -> int64, f16 -> float16, f32/f64 -> float32/float64, c32 -> complex64,
c64 -> complex128, and bf16 -> a uint16 array holding bf16 bit patterns (or
ml_dtypes.bfloat16 if that package is installed).
"""

from __future__ import annotations

import functools
import math
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
    owner: Any = None  # the interface's syclobj: where the USM memory belongs

    @property
    def size(self) -> int:
        return math.prod(self.shape)

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
    span = 1
    for n, s in zip(shape, strides):
        if n == 0:
            return 0
        span += (n - 1) * s
    return span


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


def _check_strides(
    byte_strides: tuple[int, ...], shape: tuple[int, ...], itemsize: int, name: str, what: str
) -> tuple[int, ...]:
    """Byte strides -> element strides; negative or misaligned ones are errors."""
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


@functools.lru_cache(maxsize=64)
def _typestr_dtype(typestr: str) -> np.dtype:
    return np.dtype(typestr)


def _usm_view(obj: Any, iface: dict, name: str, what: str) -> ArrayView:
    try:
        dtype = _typestr_dtype(iface["typestr"])
        shape = tuple(map(int, iface["shape"]))
        pointer, readonly = iface["data"]
        offset = int(iface.get("offset") or 0)
        strides = iface.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], 1
            for n in reversed(shape):
                strides.insert(0, step)
                step *= max(n, 1)
        strides = tuple(map(int, strides))
    except (KeyError, TypeError, ValueError) as exc:
        raise LaunchError(f"{what}: malformed __sycl_usm_array_interface__ ({exc})", argument=name) from None
    if len(strides) != len(shape):
        raise LaunchError(f"{what}: malformed __sycl_usm_array_interface__ (strides vs shape)", argument=name)
    if any(s < 0 and n > 1 for n, s in zip(shape, strides)):
        raise LaunchError(f"{what}: USM array strides {strides} must be non-negative", argument=name)
    address = int(pointer) + offset * dtype.itemsize
    return ArrayView(dtype, shape, strides, address, None, obj, bool(readonly), iface.get("syclobj"))


def check_dtype(view: ArrayView, element: ScalarType, name: str, what: str) -> None:
    """The array's dtype must be exactly the element type's."""
    allowed = _DTYPES[element.name]
    if view.dtype not in allowed:
        names = " or ".join(str(d) for d in allowed)
        hint = " (bf16 data is passed as uint16 bit patterns)" if element.name == "bf16" else ""
        if view.dtype.newbyteorder("=") in allowed:   # (the device reads the array in place)
            hint += f" in the machine's byte order (this one is the other: {name}.astype('=" \
                    f"{view.dtype.kind}{view.dtype.itemsize}') passes it)"
        raise LaunchError(f"{what}: expected dtype {names}{hint}, got {view.dtype}", argument=name)


def check_writable(view: ArrayView, name: str, what: str) -> None:
    """An array the kernel may write must not be read-only."""
    if view.readonly:
        raise LaunchError(f"{what}: the array is read-only but the kernel may write it", argument=name)


@dataclass(frozen=True)
class Layout:
    """A memref layout resolved for one array: sizes, strides, `?` values."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dynamic: tuple[int, ...]  # values of the `?` sizes, then `?` strides


def layout(memref: MemrefType, shape: tuple[int, ...], strides: tuple[int | None, ...]) -> Layout:
    """Fill `?` strides of size-<=1 modes (None here) and collect the `?` values."""
    return fitter(memref).complete(tuple(shape), strides)


class MemrefFit:
    """What a memref type asks of an array, worked out once per type."""

    def __init__(self, memref: MemrefType):
        self.memref = memref
        self.order = memref.order
        self.stride = memref.stride
        self.static_sizes = tuple((i, s) for i, s in enumerate(memref.shape) if s != DYNAMIC)
        self.dynamic_sizes = tuple(i for i, s in enumerate(memref.shape) if s == DYNAMIC)
        self.dynamic_strides = tuple(i for i, s in enumerate(memref.stride) if s == DYNAMIC)
        self.memo: dict[tuple, Layout] = {}  # (shape, strides) -> layout of arrays that fit

    def complete(self, shape: tuple[int, ...], strides: tuple[int | None, ...]) -> Layout:
        """Strides of free modes (None) become static or packed column-major."""
        final: list[int] = []
        for i, s in enumerate(strides):
            if s is None:
                static = self.stride[i]
                s = static if static != DYNAMIC else (final[-1] * max(shape[i - 1], 1) if i else 1)
            final.append(s)
        dynamic = tuple(shape[i] for i in self.dynamic_sizes) + tuple(final[i] for i in self.dynamic_strides)
        return Layout(shape, tuple(final), dynamic)

    def fit(self, view: ArrayView, name: str, what: str) -> Layout:
        """Match an array's order, sizes and strides (dtype apart)."""
        shape, strides = view.shape, view.strides
        found = self.memo.get((shape, strides))
        if found is not None:  # calls usually repeat the same shapes
            return found
        fitted = self._fit(view, name, what)
        if len(self.memo) >= 64:
            self.memo.clear()
        self.memo[(shape, strides)] = fitted
        return fitted

    def _fit(self, view: ArrayView, name: str, what: str) -> Layout:
        shape, strides = view.shape, view.strides
        if self.order == 0:
            if view.size != 1:
                raise LaunchError(f"{what}: expected a 0-d or one-element array, got shape {shape}", argument=name)
            return Layout((), (), ())
        if len(shape) != self.order or any(shape[i] != s for i, s in self.static_sizes):
            expected = _shape_text(self.memref.shape)
            raise LaunchError(f"{what}: expected shape {expected}, got {_shape_text(shape)}", argument=name)
        if 0 in shape:  # no element, so no stride addresses memory (NumPy may give any)
            return self.complete(shape, (None,) * len(shape))
        free = False
        for i, n in enumerate(shape):
            if n <= 1:
                free = True  # this stride never addresses memory
            elif self.stride[i] != DYNAMIC and self.stride[i] != strides[i]:
                raise LaunchError(
                    f"{what}: expected element strides {_shape_text(self.stride)}, got "
                    f"{_shape_text(strides)} (memrefs are column-major: pass a Fortran-order "
                    f"array, e.g. np.asfortranarray)",
                    argument=name,
                )
        if free:  # a `?` stride keeps the array's own (fuse reads it: S[k] s[k] = S[k+1]) unless < 0
            keep = tuple(s if n > 1 or (self.stride[i] == DYNAMIC and s >= 0) else None
                         for i, (n, s) in enumerate(zip(shape, strides)))
            return self.complete(shape, keep)
        dynamic = tuple(shape[i] for i in self.dynamic_sizes) + tuple(strides[i] for i in self.dynamic_strides)
        return Layout(shape, strides, dynamic)


@functools.lru_cache(maxsize=None)
def fitter(memref: MemrefType) -> MemrefFit:
    """The MemrefFit of a (interned, hashable) memref type."""
    return MemrefFit(memref)


def fit_memref(view: ArrayView, memref: MemrefType, name: str, what: str) -> Layout:
    """Match an array to a memref type: order, sizes and strides (dtype apart)."""
    return fitter(memref).fit(view, name, what)


def check_batch(shape: tuple[int, ...], mode: int, batch: int, name: str, what: str) -> None:
    """The batch mode must have at least `batch` entries."""
    if shape[mode] < batch:
        raise LaunchError(
            f"{what}: mode {mode} has size {shape[mode]}, too small for batch={batch}",
            argument=name,
        )
