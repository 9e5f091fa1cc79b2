"""Bounds-checked launches on the host side: the report buffer, USM snapshots, BoundsError.

`kernel(..., check_bounds=True)` (or TINYC_CHECK_BOUNDS=1 in the environment)
runs the kernel's bounds-checked variant (tinyc/spirv/codegen/bounds.py) with
a zeroed report buffer as its last argument. After the launch the report is
read: if a violation was recorded, no output is written back: NumPy results
are not copied back, and the written spans of USM arrays (passed without
copies) are restored from snapshots taken before the launch. Then
`tinyc.BoundsError` says what, where and in which work-group.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from tinyc.diagnostics import BoundsError, LaunchError
from tinyc.runtime.staging import USMPointer

REPORT_WORDS = 64  # as tinyc/spirv/codegen/bounds.py
LIMIT = 4
ENVIRONMENT = "TINYC_CHECK_BOUNDS"
_ZEROS = np.zeros(REPORT_WORDS, dtype=np.int64)


def _environment_reader() -> Any:
    """A reader of TINYC_CHECK_BOUNDS as os.environ holds it now (read on every call: tests and
    users set it at run time). CPython's os.environ keeps encoded keys (`_data`): looking one up
    there skips encoding the name each time (~0.5 us of a launch's ~5)."""
    data, encode = getattr(os.environ, "_data", None), getattr(os.environ, "encodekey", None)
    if isinstance(data, dict) and callable(encode):
        key, decode = encode(ENVIRONMENT), os.environ.decodevalue  # type: ignore[attr-defined]
        return lambda: decode(data[key]) if key in data else ""
    return lambda: os.environ.get(ENVIRONMENT, "")


_environment = _environment_reader()


def requested(value: Any) -> bool:
    """The check_bounds= argument, or else the environment's TINYC_CHECK_BOUNDS."""
    if value is None:
        text = _environment()
        return bool(text) and text.strip().lower() in ("1", "true", "yes", "on")
    if not isinstance(value, (bool, np.bool_)):
        raise LaunchError(f"check_bounds must be True, False or None, got {value!r}", argument="check_bounds")
    return bool(value)


class Snapshots:
    """Copies of the written USM spans of one call, taken before the launch.

    The copies come from the call's staging (the kernel's buffer pools): a
    fresh allocation would cost page faults on every call, several times the
    copy itself on the CPU device."""

    def __init__(self, queue: Any, memory: Any, spans: Sequence[tuple[int, int]], staging: Any):
        self.queue, self.memory = queue, memory
        self.saved: list[tuple[int, int, Any]] = []
        self.events: list[Any] = []
        for address, nbytes in spans:
            if nbytes <= 0:
                continue
            copy = staging.device_buffer(nbytes)
            source = memory.as_usm_memory(USMPointer(address, nbytes, queue))
            self.events.append(queue.memcpy_async(copy, source, nbytes))
            self.saved.append((address, nbytes, copy))

    def restore(self, after: Any) -> None:
        """Copy the snapshots back over the USM arrays (after the event `after`); waits."""
        events = []
        for address, nbytes, copy in self.saved:
            target = self.memory.as_usm_memory(USMPointer(address, nbytes, self.queue))
            events.append(self.queue.memcpy_async(target, copy, nbytes, [after]))
        for event in events:
            event.wait()


def report_buffer(queue: Any, staging: Any) -> tuple[Any, Any]:
    """A zeroed device report buffer (from the call's staging) and the event of its zeroing."""
    buffer = staging.device_buffer(REPORT_WORDS * 8)
    return buffer, queue.memcpy_async(buffer, _ZEROS, REPORT_WORDS * 8)


def read_report(queue: Any, buffer: Any, after: Any) -> np.ndarray:
    host = np.empty(REPORT_WORDS, dtype=np.int64)
    queue.memcpy_async(host, buffer, REPORT_WORDS * 8, [after]).wait()
    return host


def bounds_error(kernel: str, sites: Sequence[Any], report: np.ndarray) -> BoundsError:
    """The BoundsError of a report whose flag is set."""
    site_id, group, count = int(report[1]), int(report[2]), int(report[3])
    site = sites[site_id] if 0 <= site_id < len(sites) else None
    n = max(0, min(count, LIMIT))
    values = tuple(int(v) for v in report[4:4 + n])
    extra = tuple(int(v) for v in report[8:8 + LIMIT])
    bounds = tuple(int(v) for v in report[12:12 + LIMIT])
    kind = getattr(site, "kind", "access")
    problem, index, shape = _problem(kind, site, values, extra, bounds, n)
    where = f"{site.file}:{site.line}.{site.column}" if site is not None and site.line else "an unknown place"
    text = f"\n  {site.text}" if site is not None and site.text else ""
    message = (f"kernel '{kernel}', work-group {group}: {HEADLINES.get(kind, kind)} at {where}: {problem}"
               f"{text}\nno output was written back")
    return BoundsError(message, kernel=kernel, site=site, work_group=group, index=index, shape=shape,
                       extra=extra)


HEADLINES = {"access": "out-of-bounds access", "subview": "subview out of bounds",
             "expand": "expand that does not fit its mode", "fuse": "fuse of modes that are not contiguous",
             "group": "group index out of bounds", "coopmatrix": "cooperative matrix out of bounds",
             "shape rule": "operand sizes that do not match"}


def _tuple(values: Sequence[int]) -> str:
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


def _problem(kind: str, site: Any, values: tuple, extra: tuple, bounds: tuple, n: int):
    """(message, index, shape) for each kind of check."""
    order = n
    if kind == "access":
        shape = bounds[:order]
        return f"index {_tuple(values)} is outside the shape {_tuple(shape)}", values, shape
    if kind == "subview":
        offsets, sizes, shape = values, extra[:order], bounds[:order]
        single = " (size 0: a single index)" if 0 in sizes else ""
        return (f"offsets {_tuple(offsets)} with sizes {_tuple(sizes)}{single} do not fit in the shape "
                f"{_tuple(shape)}", offsets, shape)
    if kind == "expand":
        return (f"the expand shape multiplies to {values[0]} but the mode has {bounds[0]} elements",
                values, bounds[:1])
    if kind == "fuse":
        strides, sizes = values, extra[:order]
        return (f"modes with strides {_tuple(strides)} and sizes {_tuple(sizes)} are not contiguous, "
                f"so they cannot be fused", strides, sizes)
    if kind == "group":
        return f"member {values[0]} is outside the group of {bounds[0]} members", values, bounds[:1]
    if kind == "coopmatrix":
        return (f"the block of {extra[0]}x{extra[1]} elements (along the memref's modes) at "
                f"{_tuple(values[:2])} leaves the shape {_tuple(bounds[:2])}", values[:2], bounds[:2])
    if kind == "shape rule":
        rule = getattr(site, "detail", "the shape rule")
        return f"{rule} does not hold: {values[0]} != {bounds[0]}", values[:1], bounds[:1]
    return f"values {_tuple(values)} outside {_tuple(bounds[:order])}", values, bounds[:order]
