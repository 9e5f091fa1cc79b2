"""The arrays of a statements call, NumPy or USM, described once per call.

Reading `__sycl_usm_array_interface__` of a dpnp array costs tens of
microseconds, so each argument is described once (`ArrayInfo`: dtype,
shape, strides, where its elements lie) and everything else reads that.
An argument goes to the kernel with its modes in memory order: a NumPy
transpose (a view), or for USM arrays an object exposing the reordered
interface over the same memory.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tinyc.contractions.layout import byte_strides_to_elements
from tinyc.contractions.running import check_scalar
from tinyc.runtime.arrays import array_view


@dataclass
class ArrayInfo:
    """One array argument: the array and what the call needs to know about it."""

    array: Any
    dtype: np.dtype
    shape: tuple[int, ...]
    byte_strides: tuple[int, ...]
    usm: bool                 # a USM array (else NumPy)
    address: int              # of element (0, ..., 0)

    @property
    def strides(self) -> tuple[int, ...] | None:
        """Element strides; None if one is not a multiple of the element size (or the data
        are misaligned)."""
        if self.address % self.dtype.itemsize:
            return None
        return byte_strides_to_elements(self.byte_strides, self.dtype.itemsize)

    @property
    def extent(self) -> tuple[int, int]:
        """The first and last byte its elements occupy (last < first when it is empty)."""
        if 0 in self.shape:
            return self.address, self.address - 1
        low = self.address + sum((n - 1) * s for n, s in zip(self.shape, self.byte_strides) if s < 0)
        high = self.address + sum((n - 1) * s for n, s in zip(self.shape, self.byte_strides) if s > 0)
        return low, high + self.dtype.itemsize - 1

    def permuted(self, order: Sequence[int]) -> Any:
        """The array with its modes in `order` (a view: no data move)."""
        if list(order) == list(range(len(order))):
            return self.array
        if not self.usm:
            return np.transpose(self.array, order)
        return _PermutedUSM(self, order)


def describe(x: Any, name: str) -> ArrayInfo:
    """An argument as an ArrayInfo; TypeError for what is not an array."""
    if not isinstance(x, np.ndarray):
        if getattr(x, "__sycl_usm_array_interface__", None) is not None:
            view = array_view(x, name, name)   # the runtime's reading of the interface
            itemsize = view.dtype.itemsize
            return ArrayInfo(x, view.dtype, view.shape, tuple(s * itemsize for s in view.strides), True,
                             view.address)
        if isinstance(x, (numbers.Number, np.generic)):
            raise TypeError(f"{name} is a tensor; pass an array, got {type(x).__name__}")
        try:
            x = np.asarray(x)
        except Exception as exc:
            raise TypeError(f"{name}: cannot use {type(x).__name__} as an array ({exc})") from None
    return ArrayInfo(x, x.dtype, x.shape, x.strides, False, x.__array_interface__["data"][0])


class _PermutedUSM:
    """A USM array with its modes reordered: the interface only, over the array's memory."""

    def __init__(self, info: ArrayInfo, order: Sequence[int]):
        iface = dict(info.array.__sycl_usm_array_interface__)
        itemsize = info.dtype.itemsize
        iface["shape"] = tuple(info.shape[m] for m in order)
        iface["strides"] = tuple(info.byte_strides[m] // itemsize for m in order)
        self.array = info.array  # keeps the memory alive
        self.__sycl_usm_array_interface__ = iface


def usm_queue(x: Any) -> Any:
    """The SYCL queue a USM array belongs to (its interface's syclobj)."""
    owner = x.__sycl_usm_array_interface__.get("syclobj")
    return getattr(owner, "sycl_queue", owner)


def check_overlaps(arrays: dict[str, ArrayInfo], outputs: Sequence[str]) -> None:
    """A written array may share memory with no other argument (the kernel would race)."""
    for out in outputs:
        written = arrays[out]
        lo, hi = written.extent
        for name, other in arrays.items():
            if name == out:
                continue
            if not (written.usm or other.usm):
                overlap = np.may_share_memory(other.array, written.array)
            else:
                a, b = other.extent
                overlap = a <= hi and lo <= b
            if overlap:
                raise ValueError(f"{out} and {name} share memory, and the kernel writes {out}; pass separate "
                                 f"arrays (a statement may read and write one tensor by name, e.g. "
                                 f"'{out}[...] = {out}[...] + ...')")


def scalar_value(value: Any, name: str, dtype: np.dtype) -> Any:
    """A scalar argument as a number of the kernel's dtype (an integer for integer types)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Number, np.generic)):
        raise TypeError(f"{name} is a scalar; pass a number, got {type(value).__name__}")
    number = check_scalar(value, name, dtype)
    if dtype.kind in "iu" and not np.iinfo(dtype).min <= number <= np.iinfo(dtype).max:
        raise TypeError(f"{name}={value!r} is out of range for {dtype}")
    return dtype.type(number)
