"""Result types of the view instructions (subview, fuse, expand), computed as the spec says.

The builder infers them so users write `fn.subview(A, (slice(None), i))`
without spelling the result memref; the verifier still checks the result.
"""

from __future__ import annotations

from typing import Any, Sequence

from tinyc.ir.core import Value
from tinyc.ir.instructions import WHOLE_MODE
from tinyc.ir.types import DYNAMIC, MemrefType, memref_type

Entry = tuple[int | Value, int | Value, bool]  # offset, size (0 drops the mode), written as an index


def slice_entries(source: MemrefType, slices: Sequence[Any]) -> list[Entry]:
    """(offset, size, single index) per mode from Python-style subview entries.

    An entry is an index (int or index Value: the mode is dropped), `slice(None)`
    or `...` for the whole mode, `slice(a, b)` with ints, or an `(offset, size)`
    pair whose parts are ints or index Values.
    """
    if len(slices) != source.order:
        raise ValueError(f"subview of {source} needs {source.order} entries (one per mode), "
                         f"got {len(slices)}")
    entries: list[Entry] = []
    for mode, entry in enumerate(slices):
        extent = source.shape[mode]
        if entry is Ellipsis or (isinstance(entry, slice) and entry == slice(None)):
            entries.append((0, WHOLE_MODE, False))
        elif isinstance(entry, slice):
            if entry.step not in (None, 1):
                raise ValueError(f"subview mode {mode}: steps are not supported, got {entry}")
            start = 0 if entry.start is None else entry.start
            if entry.stop is None:
                if extent == DYNAMIC or not isinstance(start, int):
                    raise ValueError(f"subview mode {mode}: an open slice needs a static size and "
                                     f"offset; write (offset, size)")
                stop = extent
            else:
                stop = entry.stop
            if not (isinstance(start, int) and isinstance(stop, int)):
                raise TypeError(f"subview mode {mode}: slice bounds must be ints; write "
                                f"(offset, size) for values")
            entries.append((start, stop - start, False))
        elif isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(f"subview mode {mode}: expected (offset, size), got {entry!r}")
            entries.append((entry[0], entry[1], False))
        else:
            entries.append((entry, 0, True))
    return entries


def subview_type(source: MemrefType, entries: Sequence[Entry]) -> MemrefType:
    shape, stride = [], []
    for mode, (_, size, _) in enumerate(entries):
        if isinstance(size, int) and size == 0:
            continue
        if isinstance(size, Value):
            shape.append(DYNAMIC)
        elif size == WHOLE_MODE:
            shape.append(source.shape[mode])
        else:
            shape.append(size)
        stride.append(source.stride[mode])
    return memref_type(source.element, shape, stride, source.space)


def fuse_type(source: MemrefType, first: int, last: int) -> MemrefType:
    if not 0 <= first < last < source.order:
        raise ValueError(f"cannot fuse modes {first} to {last} of {source}: need "
                         f"0 <= first < last < order ({source.order})")
    size = 1
    for s in source.shape[first:last + 1]:
        size = DYNAMIC if DYNAMIC in (size, s) else size * s
    shape = source.shape[:first] + (size,) + source.shape[last + 1:]
    stride = source.stride[:first + 1] + source.stride[last + 1:]
    return memref_type(source.element, shape, stride, source.space)


def expand_type(source: MemrefType, mode: int, shape: Sequence[int | Value]) -> MemrefType:
    if not 0 <= mode < source.order:
        raise ValueError(f"mode {mode} is out of range for {source} of order {source.order}")
    sizes = [DYNAMIC if isinstance(s, Value) else int(s) for s in shape]
    strides, current = [], source.stride[mode]
    for s in sizes:
        strides.append(current)
        current = DYNAMIC if DYNAMIC in (current, s) else current * s
    return memref_type(source.element, source.shape[:mode] + tuple(sizes) + source.shape[mode + 1:],
                       source.stride[:mode] + tuple(strides) + source.stride[mode + 1:], source.space)
