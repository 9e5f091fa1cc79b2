"""Group arguments: checked and packed into the kernel ABI.

ABI (DESIGN.md): a pointer to a device array of member addresses (uint64),
then for every `?` in the memref's shape and stride a pointer to a device
int64 array with one entry per member, then the group size (int64) if it is
`?`, then the offset (int64) if it is `?`.

What a group argument may be:
  * a list or tuple of arrays (offset: the type's static offset, or 0 when
    it is `?`), or `Group(arrays, offset=k, shape=..., stride=...)`;
  * (extension) one array, NumPy or USM, with the members stacked along its
    last mode: member g is `array[..., g]` (so a (16, 8, N) Fortran array is
    a group of N 16x8 matrices), or `Group(array, offset=k, ...)`. Without a
    Group, the array must have one more mode than the memref.

Member i's memref starts `offset` elements after the member's first element.
How a member's memref layout is found:
  * shaped member: offset 0, no explicit `shape`, and the member's ndim equals
    the memref's order. It is checked like a memref argument and `?` sizes
    and strides come from its own shape and strides (members may differ).
  * flat member: any other case. The member must be contiguous (C or
    Fortran order, e.g. 1-D) and is a flat buffer of its elements; it must
    hold at least offset + extent elements, extent being the memref's span.
    The memref's sizes are its static sizes plus `Group(..., shape=...)` for
    the `?` ones (required), its strides the static ones, else
    `Group(..., stride=...)`, else packed column-major. `shape` and `stride`
    are full tuples (static entries must match the type), one for all
    members or a list with one tuple per member.

The layout of flat members and the checks of a Group's configuration are in
group_layouts.py. On a device that reads host memory, NumPy members of one
layout go by address (group_host.py: a host table of their data pointers,
read in bulk on every call); every packer reports the member count and sizes
to the launch conditions (group_host.record_sizes).

Fast paths (members.py), all falling back to the member-by-member check:
  * all-USM groups: when every member shares one layout, the first member is
    checked and the other pointers are read in bulk; the device tables are
    kept (TableCache) for the same members: a tuple or Group object passed
    again is recognised by identity, a list by its members' ids. USM members
    are taken to keep their pointer and layout while they live (as dpctl and
    dpnp arrays do).
  * NumPy members of one Fortran-contiguous layout (if the kernel writes
    them: writeable arrays that own their data): the data is copied on every
    call (it may change between calls), gathered by np.concatenate into one
    buffer and sent in one transfer, and if written copied back in one
    transfer and scattered; the pointer table (base + i * member size) is
    reused while the buffer is. The device sees a copy of each member, so a
    member shares no memory with the other arguments there: for written
    members the kernel checks that none is aliased (else member by member).
  * other NumPy members of one Fortran-contiguous layout (e.g. views of one
    array, written): checked once, their addresses read in bulk and staged
    as usual (a block of adjacent views is one region: one copy each way).
  * stacked arrays: one array, one copy; the table is base + g * stride.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.ir.types import DYNAMIC, GroupType
from tinyc.runtime.abi import abi_arity, null_arguments
from tinyc.runtime.arrays import (
    ArrayView,
    Layout,
    array_view,
    check_dtype,
    check_writable,
    extent,
    fit_memref,
)
from tinyc.runtime.group_host import MemberWindow, Tables, host_arguments, host_numpy, record_sizes
from tinyc.runtime.group_layouts import fit_flat, frozen, group_offset, per_member, uniform
from tinyc.runtime.members import (
    OWNDATA,
    WRITEABLE,
    GatherPlan,
    TableCache,
    addresses,
    gather,
    host_tables,
    member_ids,
    uniform_numpy,
    uniform_usm,
    upload_tables,
    writeable,
)
from tinyc.runtime.stacked import batch_first
from tinyc.signature import ParamInfo

Emit = Callable[[], list]


def _is_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) or hasattr(value, "__sycl_usm_array_interface__")


class Group:
    """Members of a group argument, with an offset and optional memref shapes.

    `Group(arrays, offset=k)` gives a `?` offset (or repeats a static one);
    `shape`/`stride` give the memref layout of flat members (module docs).
    `arrays` is a sequence of arrays, or one array with the members stacked
    along its last mode. A Group does not change after it is made, so
    passing the same Group again lets the runtime reuse what it checked.
    """

    __slots__ = ("_arrays", "_offset", "_shape", "_stride")

    def __init__(
        self,
        arrays: Sequence[Any] | Any,
        offset: int | None = None,
        shape: Sequence[int] | Sequence[Sequence[int]] | None = None,
        stride: Sequence[int] | Sequence[Sequence[int]] | None = None,
    ):
        self._arrays = arrays if _is_array(arrays) else tuple(arrays)
        self._offset = offset
        self._shape = frozen(shape)
        self._stride = frozen(stride)

    arrays = property(lambda self: self._arrays, doc="the members (a tuple), or the stacked array")
    offset = property(lambda self: self._offset)
    shape = property(lambda self: self._shape)
    stride = property(lambda self: self._stride)

    @property
    def stacked(self) -> bool:
        return not isinstance(self._arrays, tuple)

    def __len__(self) -> int:
        if self.stacked:
            shape = getattr(self._arrays, "shape", None) or self._arrays.__sycl_usm_array_interface__["shape"]
            return int(shape[-1]) if len(shape) else 0
        return len(self._arrays)

    def __getitem__(self, i: int) -> Any:
        return self._arrays[..., i] if self.stacked else self._arrays[i]

    def __repr__(self) -> str:
        kind = "stacked members" if self.stacked else "arrays"
        return f"Group({len(self)} {kind}, offset={self.offset})"


class GroupPacker:
    """Packer of one group parameter (module docs); one per kernel and parameter."""

    def __init__(self, param: ParamInfo, index: int = -1, batch_checks: bool = True):
        group: GroupType = param.type  # type: ignore[assignment]
        self.param, self.group, self.memref = param, group, group.memref
        self.index = index  # the parameter's position: its sizes go to call.sizes[index]
        self.batch_checks = batch_checks  # a batched group must hold the batch (no launch conditions)
        self.name, self.what, self.written = param.name, str(group), param.written
        self.slots = len(self.memref.dynamic_slots())
        self.tables = TableCache()

    # -- entry ----------------------------------------------------------------------
    def __call__(self, value: Any, call: Any) -> Emit:
        name, what = self.name, self.what
        if value is None:  # a null group (the kernel checks it with `associated`)
            return null_arguments(self.param, abi_arity(self.param))
        config: tuple = (None, None, None)
        if type(value) is MemberWindow:
            return self._window(value, call)
        if isinstance(value, Group):
            arrays, config = value.arrays, (value.offset, value.shape, value.stride)
        elif isinstance(value, (list, tuple)) or _is_array(value):
            arrays = value
        else:
            raise LaunchError(
                f"expected a list or tuple of arrays, tinyc.Group or a stacked array for {what}, "
                f"got {type(value).__name__}",
                argument=name,
            )
        stacked = _is_array(arrays)
        if stacked:
            view = array_view(arrays, name, what)
            if not isinstance(value, Group) and len(view.shape) != self.memref.order + 1:
                raise LaunchError(
                    f"expected a list or tuple of arrays, tinyc.Group or a stacked array for {what} "
                    f"(one more mode than the memref: members along the last), got an array of shape {view.shape}",
                    argument=name,
                )
            count = view.shape[-1] if view.shape else 0
        else:
            count = len(arrays)
        try:
            self._check_count(count, call.batch)
        except LaunchError as exc:   # a stacked array given batch-first: say where members go
            raise batch_first(exc, view.shape if stacked else None, self.memref, call.batch, name) from None
        offset = group_offset(self.group, config[0], name, what)
        shapes = per_member(config[1], count, what, name, "shape")
        strides = per_member(config[2], count, what, name, "stride")
        flat = offset != 0 or shapes is not None or strides is not None
        tail = ([ctypes.c_int64(count)] if self.group.size == DYNAMIC else []) + (
            [ctypes.c_int64(offset)] if self.group.offset == DYNAMIC else []
        )
        setup = (offset, shapes, strides, flat)
        if stacked:
            return self._stacked(view, count, setup, tail, call)
        return self._members(value, arrays, count, setup, tail, call)

    def _window(self, window: MemberWindow, call: Any) -> Emit:
        """One slice's members of a list of NumPy arrays (sharding): by address, from one read
        of the whole list that the slices of the call share; else as an ordinary list."""
        if not call.host_pointers:
            return self(window.fallback(), call)
        count = window.count
        self._check_count(count, call.batch)
        offset = group_offset(self.group, None, self.name, self.what)
        setup = (offset, None, None, offset != 0)
        key = (self.name, self.written, offset)
        if key not in window.shared:
            try:
                window.shared[key] = self._host_read(window.arrays, setup)
            except LaunchError:  # the slice that holds the member names it, as it sees it
                window.shared[key] = None
        read = window.shared[key]
        if read is None:
            return self(window.fallback(), call)
        plan, data = read
        record_sizes(self.memref, call, self.index, count, plan.row)
        call.keep.append(plan.members)
        part = data[window.start:window.start + count]
        tail = ([ctypes.c_int64(count)] if self.group.size == DYNAMIC else []) + (
            [ctypes.c_int64(offset)] if self.group.offset == DYNAMIC else [])
        return lambda: [*host_arguments(self.tables, part, plan.row, count), *tail]

    def _host_read(self, arrays: Sequence[Any], setup: tuple) -> Any:
        """(plan, data pointers) of NumPy members of one layout, by address (group_host.py)."""
        return host_numpy(self.tables, arrays, setup[:3], self.written, lambda first: tuple(
            self._fit(array_view(first, self.name, f"{self.what} member 0"), 0, setup).dynamic))

    def _check_count(self, count: int, batch: int) -> None:
        name, what, group = self.name, self.what, self.group
        if group.size != DYNAMIC and count != group.size:
            raise LaunchError(f"{what}: expected {group.size} arrays, got {count}", argument=name)
        if count == 0:
            raise LaunchError(f"{what}: a group needs at least one array", argument=name)
        if self.batch_checks and self.param.batch_mode is not None and count < batch:
            raise LaunchError(f"{what}: group has {count} arrays, too few for batch={batch}", argument=name)

    def _fit(self, view: ArrayView, i: int | None, setup: tuple) -> Layout:
        """Check one member (index i, None for stacked ones) and return its memref layout."""
        offset, shapes, strides, flat = setup
        label = f"{self.what} member {i}" if i is not None else f"{self.what} (stacked) member"
        k = i or 0
        check_dtype(view, self.memref.element, self.name, label)
        if not flat and len(view.shape) == self.memref.order:
            fitted = fit_memref(view, self.memref, self.name, label)
        else:
            fitted = fit_flat(view, self.memref, offset, shapes[k] if shapes else None,
                              strides[k] if strides else None, self.name, label)
        if self.written:
            check_writable(view, self.name, label)
        return fitted

    def _tables(self, key: tuple, addresses: Callable[[], np.ndarray], row: tuple, count: int,
                call: Any, pins: Any = None) -> list:
        """Device table and `?` columns for `key`, from the cache or uploaded now."""
        key = (*key, call.host_pointers)
        found = self.tables.find(key)
        if found is None:
            columns = [np.full(count, v, dtype=np.int64) for v in row]
            found = Tables(host_tables(addresses(), columns) if call.host_pointers else
                           upload_tables(call.queue, call.memory, addresses(), columns), row)
            self.tables.add(key, found, pins)
        return found

    # -- one array with the members along its last mode ---------------------------------------
    def _stacked(self, view: ArrayView, count: int, setup: tuple, tail: list, call: Any) -> Emit:
        itemsize = view.dtype.itemsize
        member = ArrayView(view.dtype, view.shape[:-1], view.strides[:-1], view.address, None, view.usm,
                           view.readonly, view.owner)
        try:
            fitted = self._fit(member, None, setup)
        except LaunchError as exc:
            raise batch_first(exc, view.shape, self.memref, call.batch, self.name) from None
        step = view.strides[-1] * itemsize if count > 1 else 0
        row = tuple(fitted.dynamic)
        record_sizes(self.memref, call, self.index, count, row)

        def table(base: int) -> list:
            key = ("stacked", base, step, count, row, self.slots)
            return self._tables(key, lambda: np.uint64(base) + np.uint64(step) * np.arange(count, dtype=np.uint64),
                                row, count, call)

        if view.host is None:
            call.check_usm_context(view, self.name, self.what)
            if self.written:
                call.note_usm_write(view.address, extent(view.shape, view.strides) * itemsize)
            return lambda: [*table(view.address), *tail]
        if call.host_pointers:  # the device reads the array where it is
            call.keep.append(view.host)
            return lambda: [*table(view.address), *tail]
        handle = call.staging.add(view.host, extent(view.shape, view.strides), self.written, view.address)
        call.lone.add(handle)  # an allocation of its own unless it overlaps another argument
        return lambda: [*table(call.staging.address(handle)), *tail]

    # -- a sequence of member arrays ---------------------------------------------------------------
    def _members(self, value: Any, arrays: Sequence[Any], count: int, setup: tuple, tail: list,
                 call: Any) -> Emit:
        config = setup[:3]
        if call.host_pointers and arrays and type(arrays[0]) is np.ndarray and uniform(setup[1]) \
                and uniform(setup[2]):  # by address (group_host.py)
            found = self._host_read(arrays, setup)
            if found is not None:
                plan, data = found
                record_sizes(self.memref, call, self.index, count, plan.row)
                call.keep.append(plan.members)
                return lambda: [*host_arguments(self.tables, data, plan.row, count), *tail]
        known = None
        # a bounds-checked call needs the spans of written USM members (runtime/bounds.py): one by one
        tracking = self.written and call.usm_writes is not None
        if isinstance(value, (tuple, Group)):  # seen before: the same objects, checked then
            known = self.tables.find(("object", id(value), config))
        if known is None:
            known = self.tables.find_members(arrays, config)
            if known is not None and isinstance(value, (tuple, Group)):  # next time by identity
                self.tables.add(("object", id(value), config), known, value)
        if isinstance(known, GatherPlan):
            if self._may_gather(call) and (not self.written or writeable(arrays)):
                emit = self._gathered(arrays, known, count, tail, call)
                if emit is not None:
                    record_sizes(self.memref, call, self.index, count, known.row)
                    return emit
        elif isinstance(known, Tables) and not tracking:
            record_sizes(self.memref, call, self.index, count, known.rows)
            return lambda: [*known, *tail]
        members = tuple(arrays)  # a snapshot: the ids name exactly what it pins
        ids = member_ids(members)
        pins = value if isinstance(value, (tuple, Group)) else members
        keys = [("ids", ids, config)] + ([("object", id(value), config)] if pins is value else [])

        if not uniform(setup[1]) or not uniform(setup[2]):
            return self._each(members, count, setup, tail, call, keys, pins)
        usm = uniform_usm(members) if not isinstance(members[0], np.ndarray) and not tracking else None
        if usm is not None and not (usm[1] and self.written):
            view = array_view(members[0], self.name, f"{self.what} member 0")
            fitted = self._fit(view, 0, setup)
            if call.same_context(view.owner):
                record_sizes(self.memref, call, self.index, count, tuple(fitted.dynamic))
                return self._cached(keys, lambda: usm[0], tuple(fitted.dynamic), count, call, pins, tail)
        flags = uniform_numpy(members)
        if flags is not None and (not self.written or flags & WRITEABLE):
            if self._may_gather(call) and (not self.written or flags & OWNDATA):
                view = array_view(members[0], self.name, f"{self.what} member 0")
                plan = GatherPlan(tuple(self._fit(view, 0, setup).dynamic), members[0].nbytes, ids)
                emit = self._gathered(members, plan, count, tail, call)
                if emit is not None:
                    record_sizes(self.memref, call, self.index, count, plan.row)
                    for key in keys:
                        self.tables.add(key, plan, pins)
                    return emit
            else:
                return self._staged(members, count, setup, tail, call)
        return self._each(members, count, setup, tail, call, keys, pins)

    def _staged(self, members: tuple, count: int, setup: tuple, tail: list, call: Any) -> Emit:
        """NumPy members of one layout, staged where they are (views of one buffer share a region)."""
        view = array_view(members[0], self.name, f"{self.what} member 0")
        row = tuple(self._fit(view, 0, setup).dynamic)
        record_sizes(self.memref, call, self.index, count, row)
        handles = call.staging.add_many(members, addresses(members), members[0].nbytes, self.written)

        def emit() -> list:
            table = call.staging.addresses(handles)
            columns = (call.staging.upload(np.full(count, v, dtype=np.int64)) for v in row)
            return [call.staging.upload(table), *columns, *tail]

        return emit

    def _cached(self, keys: list, addresses: Callable[[], np.ndarray], row: tuple, count: int, call: Any,
                pins: Any, tail: list) -> Emit:
        """All-USM members: tables made once (after every argument passed), then reused."""

        def emit() -> list:
            found = self._tables(keys[0], addresses, row, count, call, pins)
            for key in keys[1:]:
                self.tables.add(key, found, pins)
            return [*found, *tail]

        return emit

    def _may_gather(self, call: Any) -> bool:
        """Members the kernel writes are gathered unless this call found them aliased (Kernel._bind)."""
        return not self.written or call.gather_written

    def _gathered(self, members: Sequence[np.ndarray], plan: GatherPlan, count: int, tail: list,
                  call: Any) -> Emit | None:
        """NumPy members of one layout: one host buffer, one transfer each way; None on a mismatch."""
        size, row = plan.nbytes, plan.row
        total = size * count
        host = call.staging.host_buffer(total)
        if not gather(members, host):
            return None  # a member differs: check them one by one
        call.gathered.append((self.written, plan.ids))

        def emit() -> list:
            device = call.staging.device_buffer(total)
            call.staging.send(device, host, total)
            if self.written:
                call.staging.scatter_back(device, host, members)
            base = device.__sycl_usm_array_interface__["data"][0]
            key = ("gathered", base, size, count, row, self.slots)
            return [*self._tables(key, lambda: np.uint64(base) + np.uint64(size) * np.arange(count, dtype=np.uint64),
                                  row, count, call), *tail]

        return emit

    def _each(self, arrays: Sequence[Any], count: int, setup: tuple, tail: list, call: Any,
              keys: list, pins: Any) -> Emit:
        """Member by member: any mix of NumPy and USM arrays and layouts."""
        name, written, explicit = self.name, self.written, setup[1] is not None or setup[2] is not None
        dynamic = np.empty((count, self.slots), dtype=np.int64)  # one row per member
        addresses = np.zeros(count, dtype=np.uint64)
        staged: list[int] = []  # members copied from NumPy ...
        handles: list[int] = []  # ... and their staging handles
        seen: dict[tuple, tuple[Layout, int]] = {}  # NumPy (dtype, shape, strides) -> checked layout, extent
        in_host = False  # NumPy members passed by address
        for i, member in enumerate(arrays):
            known = None
            if type(member) is np.ndarray and not explicit:
                known = seen.get((member.dtype, member.shape, member.strides))
            if known is not None:  # same layout as an earlier member: only per-array flags
                if not member.flags.aligned or (written and not member.flags.writeable):
                    known = None  # let the full check report it
            host = member
            if known is None:
                label = f"{self.what} member {i}"
                view = array_view(member, name, label)
                known = (self._fit(view, i, setup), extent(view.shape, view.strides))
                host = view.host  # also an ndarray subclass; None for USM
                if host is None:
                    call.check_usm_context(view, name, label)
                    addresses[i] = view.address
                    if written:
                        call.note_usm_write(view.address, known[1] * view.dtype.itemsize)
                elif type(member) is np.ndarray and not explicit:
                    seen[(member.dtype, member.shape, member.strides)] = known
            dynamic[i] = known[0].dynamic
            if host is not None and call.host_pointers:  # read where it is
                addresses[i] = host.__array_interface__["data"][0]
                call.keep.append(host)
                in_host = True
            elif host is not None:
                staged.append(i)
                handles.append(call.staging.add(host, known[1], written))
        slots = self.slots
        record_sizes(self.memref, call, self.index, count, dynamic)
        if in_host and not staged:
            columns = [dynamic[:, k] for k in range(slots)]
            return lambda: [*host_tables(addresses, columns), *tail]

        if not staged:  # all USM: the tables can be kept for these members
            def emit_usm() -> list:
                found = self.tables.find(keys[0])
                if found is None:
                    columns = [np.ascontiguousarray(dynamic[:, k]) for k in range(slots)]
                    found = Tables(upload_tables(call.queue, call.memory, addresses, columns), dynamic)
                for key in keys:
                    self.tables.add(key, found, pins)
                return [*found, *tail]

            return emit_usm

        def emit() -> list:
            addresses[staged] = call.staging.addresses(np.array(handles))
            columns = (call.staging.upload(np.ascontiguousarray(dynamic[:, k])) for k in range(slots))
            return [call.staging.upload(addresses), *columns, *tail]

        return emit
