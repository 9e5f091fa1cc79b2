"""Kernel arguments (NumPy scalars and arrays) turned into interpreter values.

The rules are DESIGN.md's Python API: memrefs are column-major NumPy arrays
(or arrays whose element strides fit the memref's), `?` sizes and strides
come from the array, bf16 arrays hold uint16 bit patterns, a group is a list
of arrays or an object with `arrays` and `offset` (tinyc.Group). Arrays are
used in place, so the kernel's stores land in the caller's arrays. Group
members follow tinyc/runtime/arguments.py: "shaped" members (offset 0, no
explicit shape/stride, ndim = order) are checked like memref arguments;
other members are flat contiguous buffers laid out by the type and
Group(shape=, stride=).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tinyc.diagnostics import LaunchError
from tinyc.ir.core import Function
from tinyc.reference.memory import NullTensor
from tinyc.ir.types import DYNAMIC, BoolType, GroupType, MemrefType, ScalarType, Type
from tinyc.reference.memory import GroupValue, Memref
from tinyc.reference.scalars import coerce, int_range, storage_dtype


def copy_argument(arg: Any) -> Any:
    """A copy of an array or of a list of arrays, for a run that must leave the caller's alone.

    A strided array keeps its strides (the copy is made of the whole span it
    views), since a memref with static strides accepts no other layout. A tinyc.Group is
    duck-typed (as _group does): the runtime that defines it sits above the interpreter."""
    if isinstance(arg, list):
        return [copy_argument(a) for a in arg]
    if hasattr(arg, "arrays") and hasattr(arg, "stacked") and not arg.stacked:  # tinyc.Group
        return type(arg)([copy_argument(a) for a in arg.arrays], arg.offset, arg.shape, arg.stride)
    if not isinstance(arg, np.ndarray):
        return arg
    if arg.flags.f_contiguous or arg.flags.c_contiguous:
        return arg.copy(order="K")
    base = arg.base
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    if not isinstance(base, np.ndarray):
        return np.array(arg, order="F")
    offset = arg.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    # order="K": the copy keeps the base's memory layout (a Fortran-order base copied in C
    # order would move the view's elements)
    return np.ndarray(arg.shape, arg.dtype, buffer=base.copy(order="K"), offset=offset, strides=arg.strides)


def bind_arguments(fn: Function, args: Any) -> list[Any]:
    """One interpreter value per parameter of `fn`; LaunchError on a mismatch."""
    args = list(args)
    if len(args) != len(fn.args):
        raise LaunchError(f"@{fn.name} takes {len(fn.args)} arguments, got {len(args)}")
    return [bind_argument(p.type, a, p.name or "?") for p, a in zip(fn.args, args)]


def bind_argument(t: Type, value: Any, name: str) -> Any:
    if value is None and isinstance(t, (MemrefType, GroupType)):
        return NullTensor(name)  # not associated: only `associated` may look at it
    if isinstance(t, ScalarType):
        return _scalar(t, value, name)
    if isinstance(t, BoolType):
        if not isinstance(value, (bool, np.bool_)):
            raise LaunchError(f"expected a bool (True, False or numpy.bool_), got "
                              f"{type(value).__name__} {value!r}", argument=name)
        return np.bool_(value)
    if isinstance(t, MemrefType):
        return _memref(t, value, name, "memref")
    if isinstance(t, GroupType):
        return _group(t, value, name)
    raise LaunchError(f"parameters of type {t} are not supported", argument=name)


def _scalar(t: ScalarType, value: Any, name: str) -> Any:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, complex, np.number)):
        raise LaunchError(f"expected a number for {t}, got {type(value).__name__}", argument=name)
    if t.is_int:
        if not isinstance(value, (int, np.integer)):
            raise LaunchError(f"expected an integer for {t}, got {value!r}", argument=name)
        low, high = int_range(t)
        if not low <= int(value) <= high:
            raise LaunchError(f"{value} does not fit {t}", argument=name)
        return coerce(np.int64(value), t)
    if isinstance(value, (complex, np.complexfloating)) and not t.is_complex:
        raise LaunchError(f"expected a real number for {t}, got {value!r}", argument=name)
    return coerce(np.asarray(value)[()] if t.is_complex else np.float64(value), t)


def _storage_array(t: MemrefType, array: Any, name: str, what: str) -> np.ndarray:
    """The array with its dtype checked (bf16 given as any 16-bit dtype is viewed as uint16)."""
    if not isinstance(array, np.ndarray):
        raise LaunchError(f"{what}: expected a NumPy array, got {type(array).__name__}", argument=name)
    expected = storage_dtype(t.element)
    if t.element.name == "bf16" and array.dtype.itemsize == 2 and array.dtype.name == "bfloat16":
        array = array.view(np.uint16)
    if array.dtype != expected:
        hint = " (bf16 data is passed as uint16 bit patterns)" if t.element.name == "bf16" else ""
        raise LaunchError(f"{what}: expected dtype {expected}{hint}, got {array.dtype}", argument=name)
    return array


def _element_strides(array: np.ndarray, name: str, what: str) -> list[int]:
    strides = []
    for n, s in zip(array.shape, array.strides):
        if n > 1 and (s < 0 or s % array.itemsize):
            raise LaunchError(f"{what}: array strides {array.strides} (bytes) must be non-negative "
                              f"multiples of the element size", argument=name)
        strides.append(s // array.itemsize if n > 1 else 0)
    return strides


def _flat_buffer(array: np.ndarray, extent: int) -> np.ndarray:
    """A 1-D view of `extent` elements starting at the array's first element."""
    return as_strided(array, (extent,), (array.itemsize,))


def _memref(t: MemrefType, value: Any, name: str, what: str) -> Memref:
    array = _storage_array(t, value, name, what)
    if t.order == 0:
        if array.size != 1:
            raise LaunchError(f"{what}: expected a 0-d or one-element array, got shape {array.shape}",
                              argument=name)
        return Memref(t.element, _flat_buffer(array, 1), 0, (), ())
    if array.ndim != t.order or any(s != DYNAMIC and s != n for s, n in zip(t.shape, array.shape)):
        raise LaunchError(f"{what}: expected shape {_shape(t.shape)}, got {array.shape}", argument=name)
    given = _element_strides(array, name, what)
    strides: list[int] = []
    for k, (n, s) in enumerate(zip(array.shape, given)):
        static = t.stride[k]
        if n <= 1 or array.size == 0:  # never addresses memory (an empty array's strides are
            # NumPy's choice): take the type's or the packed stride
            s = static if static != DYNAMIC else (strides[-1] * max(array.shape[k - 1], 1) if k else 1)
        elif static != DYNAMIC and static != s:
            raise LaunchError(f"{what}: expected element strides {_shape(t.stride)}, got {tuple(given)} "
                              "(memrefs are column-major: pass a Fortran-order array)", argument=name)
        strides.append(s)
    extent = 0 if array.size == 0 else 1 + sum((n - 1) * s for n, s in zip(array.shape, given))
    return Memref(t.element, _flat_buffer(array, extent), 0, tuple(array.shape), tuple(strides))


class _StackedMembers:
    """The members of a stacked-array group: views along its last mode, made on demand."""

    def __init__(self, stacked: np.ndarray):
        self.stacked = stacked

    def __len__(self) -> int:
        return self.stacked.shape[-1] if self.stacked.ndim else 0

    def __getitem__(self, i: int) -> np.ndarray:
        return self.stacked[..., i]


def _group(t: GroupType, value: Any, name: str) -> GroupValue:
    """A list/tuple of arrays, one array with the members stacked along its last mode,
    or tinyc.Group(arrays, offset=, shape=, stride=) (duck-typed)."""
    arrays = getattr(value, "arrays", value)
    if isinstance(arrays, np.ndarray) and arrays.ndim >= 1:
        arrays = _StackedMembers(arrays)
    if not isinstance(arrays, (list, tuple, _StackedMembers)):
        raise LaunchError(f"expected a list of arrays or tinyc.Group for {t}, got "
                          f"{type(value).__name__}", argument=name)
    offset = getattr(value, "offset", None)
    if t.offset != DYNAMIC:
        if offset is not None and int(offset) != t.offset:
            raise LaunchError(f"the group offset is {t.offset}, got {offset}", argument=name)
        offset = t.offset
    offset = int(offset or 0)
    if offset < 0:
        raise LaunchError(f"the group offset must be non-negative, got {offset}", argument=name)
    if t.size != DYNAMIC and len(arrays) < t.size:
        raise LaunchError(f"the group has {t.size} members, got {len(arrays)} arrays", argument=name)
    group = value if hasattr(value, "arrays") else None  # tinyc.Group; not a bare array's .shape
    shapes = _per_member(getattr(group, "shape", None), len(arrays), name, "shape")
    strides = _per_member(getattr(group, "stride", None), len(arrays), name, "stride")
    flat = offset != 0 or shapes is not None or strides is not None

    def bind(i: int) -> Memref:
        what = f"group member {i}"
        array = _storage_array(t.memref, arrays[i], name, what)
        if not flat and array.ndim == t.memref.order:
            return _memref(t.memref, array, name, what)
        return _flat_member(t.memref, array, offset, shapes[i] if shapes else None,
                            strides[i] if strides else None, name, what)

    return GroupValue(len(arrays), bind)


def _per_member(value: Any, count: int, name: str, key: str) -> list[tuple[int, ...]] | None:
    """Group(shape=/stride=): one tuple for every member, or a list of one per member."""
    if value is None:
        return None
    items = list(value)
    if all(isinstance(v, (int, np.integer)) for v in items):
        return [tuple(int(v) for v in items)] * count
    if len(items) != count:
        raise LaunchError(f"Group {key}= has {len(items)} entries for {count} members", argument=name)
    return [tuple(int(v) for v in item) for item in items]


def _flat_member(t: MemrefType, array: np.ndarray, offset: int, shape: tuple[int, ...] | None,
                 stride: tuple[int, ...] | None, name: str, what: str) -> Memref:
    """A member used as a flat buffer; its memref starts `offset` elements in.

    Sizes: the static ones, `?` from `shape`; strides: the static ones, `?`
    from `stride`, else packed column-major over the sizes.
    """
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        raise LaunchError(f"{what}: a flat member (offset {offset}) must be a contiguous array",
                          argument=name)
    for key, given, static in (("shape", shape, t.shape), ("stride", stride, t.stride)):
        if given is not None and (len(given) != t.order or
                                  any(s != DYNAMIC and s != g for s, g in zip(static, given))):
            raise LaunchError(f"{what}: Group {key}={given} does not fit {_shape(static)}", argument=name)
    if shape is None and DYNAMIC in t.shape:
        raise LaunchError(f"{what}: a flat member needs Group(..., shape=...) for the `?` sizes of {t}",
                          argument=name)
    sizes = shape if shape is not None else t.shape
    strides: list[int] = []
    for k, s in enumerate(stride if stride is not None else t.stride):
        strides.append(s if s != DYNAMIC else (strides[-1] * sizes[k - 1] if k else 1))
    extent = 0 if 0 in sizes else 1 + sum((n - 1) * s for n, s in zip(sizes, strides))
    flat = array.reshape(-1, order="A")
    if offset + extent > flat.size:
        raise LaunchError(f"{what}: member holds {flat.size} elements but offset {offset} + extent "
                          f"{extent} needs {offset + extent}", argument=name)
    return Memref(t.element, flat, offset, tuple(sizes), tuple(strides))


def _shape(values: tuple[int, ...]) -> str:
    return "(" + ", ".join("?" if v == DYNAMIC else str(v) for v in values) + ")"
