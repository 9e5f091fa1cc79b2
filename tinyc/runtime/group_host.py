"""Group arguments on a device that reads host memory, and the sizes groups report.

`host_numpy`: NumPy members of one layout go to the kernel by address: a
host table of their data pointers (read in bulk from NumPy's array objects
on every call, members.py) and host columns of their `?` sizes; nothing is
copied. The layout is checked in full the first time these members come
(by id), later only what may change in place (dtype, order, writeable,
aligned flags).

`record_sizes`: what a group's packer tells the launch conditions
(launch_check.py): the member count and each mode's smallest and largest
size over the members.

`Tables`: a group's device tables as the TableCache keeps them, with the
`?` values they describe (so a cached group still reports its sizes).

`MemberWindow`: one slice's members of a list in a split launch, so that
the slices read the list once, not once each.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyc.ir.types import DYNAMIC, MemrefType
from tinyc.runtime.members import (
    ALIGNED, WRITEABLE, TableCache, addresses, host_tables, member_ids, uniform_numpy,
)
from tinyc.runtime.numpy_objects import HostPlan, bulk_reads, numpy_heads_again, numpy_uniform
from tinyc.runtime.submit import Address


class Tables(list):
    """The kernel arguments of a group's device tables, with the `?` values they describe
    (`rows`: one layout's, or one row per member), kept in the TableCache."""

    def __init__(self, arguments: list, rows: Any):
        super().__init__(arguments)
        self.rows = rows


def record_sizes(memref: MemrefType, call: Any, index: int, count: int, rows: Any) -> None:
    """`call.sizes[index]`: the member count and each mode's smallest and largest size (`rows`:
    the `?` values, shape then stride, of one layout shared by all, or one row per member)."""
    if isinstance(rows, np.ndarray):
        low = rows.min(axis=0) if len(rows) else np.zeros(rows.shape[1], dtype=np.int64)
        high = rows.max(axis=0) if len(rows) else low
    else:
        low = high = rows
    lo, hi, slot = [], [], 0
    for s in memref.shape:  # the `?` sizes come first among the `?` values, in mode order
        if s == DYNAMIC:
            lo.append(int(low[slot]))
            hi.append(int(high[slot]))
            slot += 1
        else:
            lo.append(s)
            hi.append(s)
    call.sizes[index] = (count, tuple(lo), tuple(hi))


def host_numpy(tables: TableCache, arrays: Any, config: tuple, written: bool,
               fit_first: Callable[[Any], tuple]) -> tuple[HostPlan, np.ndarray] | None:
    """(the checked plan, the members' data pointers) of NumPy members of one layout (`arrays`:
    a list or tuple), or None (check them one by one: the error names the member).
    `fit_first(member)` checks the first member in full and returns its memref's `?` values.
    The plan's `members`, a snapshot made when it was, holds the members while a launch reads
    them: a plan is found only for exactly the objects it holds (their ids), so later calls
    make no snapshot (a tuple of 10^5 members touches every member's reference count)."""
    plan = tables.find_members(arrays, ("host", config))
    found = numpy_heads_again(plan.ids, plan) if isinstance(plan, HostPlan) else None
    if found is None:
        members = tuple(arrays)
        ids = member_ids(members)  # `members` holds them while they are read
        found = numpy_uniform(members, ids) if bulk_reads() else _one_by_one(members)
        if found is None:
            return None
        first = members[0]
        plan = HostPlan(fit_first(first), first.dtype, first.ndim, ids, members)
        plan.table = found[0]  # the pointers later calls must find again
        tables.add(("ids", ids, ("host", config)), plan, members)
    data, flags = found
    if not flags & ALIGNED or (written and not flags & WRITEABLE):
        return None
    return plan, data


def _one_by_one(members: tuple) -> tuple[np.ndarray, int] | None:
    """numpy_uniform without reading NumPy's objects in bulk (TINYC_NO_CPYTHON_INTERNALS=1, or
    another Python): the members' attributes one by one, ~1 us each."""
    flags = uniform_numpy(members)
    if flags is None or len({(m.strides, id(m.dtype)) for m in members}) != 1:
        return None
    return addresses(members).astype(np.uint64), flags


def host_arguments(tables: TableCache, data: np.ndarray, row: tuple, count: int) -> list:
    """The kernel arguments of members by address: their pointer table and `?` columns (the
    columns of one row are kept for later calls)."""
    key = ("columns", row, count)
    columns = tables.find(key)
    if columns is None:
        columns = host_tables(np.zeros(0, dtype=np.uint64), [np.full(count, v, dtype=np.int64) for v in row])[1:]
        tables.add(key, columns)
    table = np.ascontiguousarray(data, dtype=np.uint64)
    return [Address(table.ctypes.data, table), *columns]


class MemberWindow:
    """Members start .. start + count - 1 of a list or tuple of NumPy arrays: one slice's part
    of a group in a split launch (slices.py). By address, the slices of one call share one
    read of the whole list (`shared`, by parameter: the snapshot of the list and its members'
    data pointers); elsewhere the packer takes `fallback()`, the slice's members as a list."""

    __slots__ = ("arrays", "start", "count", "shared", "fallback")

    def __init__(self, arrays: Any, start: int, count: int, shared: dict, fallback: Callable[[], Any]):
        self.arrays, self.start, self.count = arrays, start, count
        self.shared, self.fallback = shared, fallback
