"""How the members of a group argument are laid out: offsets, flat members, Group(shape=, stride=).

A member is "shaped" (its own shape and strides give the memref's `?` values,
checked like a memref argument) or "flat": a contiguous buffer holding the
memref `offset` elements after its start, laid out by the type's static
sizes and strides and `tinyc.Group(..., shape=..., stride=...)` for the `?`
ones (groups.py has the rules). These helpers check the configuration a
Group gives and lay a flat member out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType, dim_text
from tinyc.runtime.arrays import ArrayView, Layout, extent, layout


def frozen(value: Any) -> Any:
    """shape=/stride= as nested tuples (left as is when not iterable: checked later)."""
    try:
        return tuple(tuple(v) if isinstance(v, (list, tuple)) else v for v in value)
    except TypeError:
        return value


def per_member(value: Any, count: int, what: str, name: str, key: str) -> list | None:
    """Normalise Group(shape=/stride=) to one tuple per member (or None)."""
    if value is None:
        return None
    try:
        items = list(value)
        if all(isinstance(v, (int, np.integer)) for v in items):
            items = [items] * count
        elif len(items) != count:
            raise LaunchError(f"{what}: Group {key}= has {len(items)} entries for {count} members", argument=name)
        tuples = [tuple(whole(v) for v in item) for item in items]
    except (TypeError, ValueError):
        raise LaunchError(
            f"{what}: Group {key}= must be a tuple of non-negative integers or a list of them", argument=name
        ) from None
    return tuples


def whole(value: Any) -> int:
    """A non-negative int from an int-like; ValueError otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(value)
    return int(value)


def fit_flat(
    view: ArrayView, memref: MemrefType, offset: int, shape: tuple[int, ...] | None,
    stride: tuple[int, ...] | None, name: str, what: str,
) -> Layout:
    """Layout of a flat group member (module docs); checks that it is big enough."""
    if not view.contiguous:
        raise LaunchError(f"{what}: a flat member (offset {offset}) must be a contiguous array", argument=name)
    for key, given, static in (("shape", shape, memref.shape), ("stride", stride, memref.stride)):
        if given is not None and (
            len(given) != memref.order or any(s != DYNAMIC and s != g for s, g in zip(static, given))
        ):
            raise LaunchError(
                f"{what}: Group {key}={given} does not fit ({', '.join(map(dim_text, static))})",
                argument=name,
            )
    if shape is None and DYNAMIC in memref.shape:
        raise LaunchError(
            f"{what}: a flat member (offset {offset}, shape {view.shape}) does not give the `?` "
            f"sizes; pass tinyc.Group(arrays, offset={offset}, shape=(...))",
            argument=name,
        )
    sizes = shape if shape is not None else memref.shape
    strides = stride if stride is not None else tuple(None if s == DYNAMIC else s for s in memref.stride)
    fitted = packed_layout(memref, sizes, strides)
    need = offset + extent(fitted.shape, fitted.strides)
    if view.size < need:
        raise LaunchError(
            f"{what}: member holds {view.size} elements but offset {offset} + extent "
            f"{need - offset} needs {need}",
            argument=name,
        )
    return fitted


def packed_layout(memref: MemrefType, sizes: tuple[int, ...], strides: tuple[int | None, ...]) -> Layout:
    """`?` strides (None) become packed column-major over the sizes."""
    filled: list[int] = []
    for i, s in enumerate(strides):
        filled.append(s if s is not None else (filled[-1] * sizes[i - 1] if i else 1))
    return layout(memref, sizes, tuple(filled))


def uniform(per_member: list | None) -> bool:
    """One shape= (or stride=) for all members, or none."""
    return per_member is None or per_member.count(per_member[0]) == len(per_member)


def group_offset(group: GroupType, given: Any, name: str, what: str) -> int:
    if given is not None:
        try:
            whole(given)
        except ValueError:
            raise LaunchError(f"{what}: offset must be a non-negative integer, got {given!r}", argument=name) from None
    if group.offset == DYNAMIC:
        return int(given or 0)
    if given is not None and int(given) != group.offset:
        raise LaunchError(f"{what}: Group offset={given} but the type says offset {group.offset}", argument=name)
    return group.offset
