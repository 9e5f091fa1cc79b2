"""Check a Python call against a kernel's parameters and pack it into its ABI.

ABI (DESIGN.md): a scalar is one argument; a memref is a pointer, then one
int64 per `?` in its shape and then in its stride; a group is a pointer to a
device array of member addresses (uint64), then for every `?` in the memref's
shape and stride a pointer to a device int64 array with one entry per member,
then the group size (int64) if it is `?`, then the offset (int64) if it is `?`.

A call is packed in two phases, so a bad call fails before anything runs:
`bind` checks every argument and records what must reach the device; after
all arguments passed, the staging places the NumPy data in USM memory and
each bound argument emits its kernel arguments.

Groups. A group argument is a list or tuple of arrays (offset: the type's
static offset, or 0 when it is `?`) or `Group(arrays, offset=k)`. Member i's
memref starts `offset` elements after the member's first element. How a
member's memref layout is found:
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
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType, ScalarType, dim_text
from tinyc.runtime.arrays import (
    ArrayView,
    Layout,
    array_view,
    check_batch,
    check_dtype,
    extent,
    fit_memref,
    fitter,
    layout,
)
from tinyc.runtime.scalars import scalar_packer
from tinyc.runtime.signature import ParamInfo
from tinyc.runtime.staging import Staging, USMPointer

Emit = Callable[[], list]  # produces the kernel arguments after placement
Packer = Callable[[Any, "Call"], "list | Emit"]


class Group:
    """Members of a group argument, with an offset and optional memref shapes.

    `Group(arrays, offset=k)` gives a `?` offset (or repeats a static one);
    `shape`/`stride` give the memref layout of flat members (module docs).
    """

    def __init__(
        self,
        arrays: Sequence[Any],
        offset: int | None = None,
        shape: Sequence[int] | Sequence[Sequence[int]] | None = None,
        stride: Sequence[int] | Sequence[Sequence[int]] | None = None,
    ):
        self.arrays = list(arrays)
        self.offset = offset
        self.shape = shape
        self.stride = stride

    def __len__(self) -> int:
        return len(self.arrays)

    def __getitem__(self, i: int) -> Any:
        return self.arrays[i]

    def __repr__(self) -> str:
        return f"Group({len(self.arrays)} arrays, offset={self.offset})"


WRAPPER_CACHE_SIZE = 256


class Call:
    """State of one call between checking and launching.

    `wrappers` (owned by the Kernel, kept across calls) maps (address,
    nbytes) of USM arrays whose syclobj shares the kernel's context to the
    dpctl memory object that passes them: wrapping costs ~8 us per argument.
    The wrappers never own memory, so a stale entry is still a valid pointer
    in that context.
    """

    def __init__(self, queue: Any, memory: Any, batch: int, wrappers: dict | None = None):
        self.queue = queue
        self.memory = memory
        self.batch = batch
        self.staging = Staging(queue, memory)
        self.lone: set[int] = set()
        self.keep: list[Any] = []  # host buffers that must outlive their copies
        self.contexts: dict[int, bool] = {}  # id(syclobj) -> shares the queue's context
        self.wrappers = wrappers if wrappers is not None else {}

    def upload(self, host: np.ndarray) -> Any:
        """A device copy of a small host array (group metadata)."""
        memory = self.memory.MemoryUSMDevice(host.nbytes, queue=self.queue)
        self.staging.events.append(self.queue.memcpy_async(memory, host, host.nbytes))
        self.keep.append(host)
        return memory

    def same_context(self, owner: Any) -> bool:
        """Does a USM array's syclobj (queue, context, ...) share the kernel's context?"""
        if owner is self.queue:
            return True
        known = self.contexts.get(id(owner))
        if known is None:
            context = getattr(owner, "sycl_context", owner)
            try:
                known = bool(context == self.queue.sycl_context)
            except Exception:  # an unknown kind of syclobj
                known = False
            self.contexts[id(owner)] = known
        return known

    def usm_argument(self, view: ArrayView, name: str, what: str) -> Any:
        """Wrap a USM array's element 0 as a kernel argument; checks its context."""
        nbytes = extent(view.shape, view.strides) * view.dtype.itemsize
        key = (view.address, nbytes)
        trusted = self.same_context(view.owner)
        if trusted:
            found = self.wrappers.get(key)
            if found is not None:
                return found
        try:  # dpctl checks that the pointer belongs to the queue's context
            wrapped = self.memory.as_usm_memory(USMPointer(view.address, nbytes, self.queue))
        except (ValueError, TypeError) as exc:
            raise LaunchError(
                f"{what}: USM array is not usable on the kernel's queue ({exc})", argument=name
            ) from None
        if trusted:
            if len(self.wrappers) >= WRAPPER_CACHE_SIZE:
                self.wrappers.clear()
            self.wrappers[key] = wrapped
        return wrapped

    def check_usm_context(self, view: ArrayView, name: str, what: str) -> None:
        """A USM group member must belong to the kernel's context."""
        if not self.same_context(view.owner):  # ask the runtime about the pointer itself
            self.usm_argument(view, name, what)


def _read_only(view: ArrayView, param: ParamInfo, what: str) -> None:
    if param.written and view.readonly:
        raise LaunchError(f"{what}: the array is read-only but the kernel may write it", argument=param.name)


def _int64s(values: Sequence[int]) -> list:
    return [ctypes.c_int64(v) for v in values]


def memref_packer(param: ParamInfo) -> Packer:
    """Packer of a memref parameter: pointer, then its `?` sizes and strides."""
    memref: MemrefType = param.type  # type: ignore[assignment]
    name, what, written, mode = param.name, str(memref), param.written, param.batch_mode
    fit = fitter(memref).fit

    def bind(value: Any, call: Call) -> list | Emit:
        view = array_view(value, name, what)
        check_dtype(view, memref.element, name, what)
        fitted = fit(view, name, what)
        if mode is not None:
            check_batch(view.shape, mode, call.batch, name, what)
        _read_only(view, param, what)
        tail = _int64s(fitted.dynamic)
        if view.host is None:
            return [call.usm_argument(view, name, what), *tail]
        handle = call.staging.add(view.host, extent(view.shape, view.strides), written)
        call.lone.add(handle)
        return lambda: [call.staging.argument(handle), *tail]

    return bind


def _per_member(value: Any, count: int, what: str, name: str, key: str) -> list | None:
    """Normalise Group(shape=/stride=) to one tuple per member (or None)."""
    if value is None:
        return None
    try:
        items = list(value)
        if all(isinstance(v, (int, np.integer)) for v in items):
            items = [items] * count
        elif len(items) != count:
            raise LaunchError(f"{what}: Group {key}= has {len(items)} entries for {count} members", argument=name)
        tuples = [tuple(_whole(v) for v in item) for item in items]
    except (TypeError, ValueError):
        raise LaunchError(
            f"{what}: Group {key}= must be a tuple of non-negative integers or a list of them", argument=name
        ) from None
    return tuples


def _whole(value: Any) -> int:
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
    strides = stride if stride is not None else tuple(
        None if s == DYNAMIC else s for s in memref.stride
    )
    fitted = _packed_layout(memref, sizes, strides)
    need = offset + extent(fitted.shape, fitted.strides)
    if view.size < need:
        raise LaunchError(
            f"{what}: member holds {view.size} elements but offset {offset} + extent "
            f"{need - offset} needs {need}",
            argument=name,
        )
    return fitted


def _packed_layout(memref: MemrefType, sizes: tuple[int, ...], strides: tuple[int | None, ...]) -> Layout:
    """`?` strides (None) become packed column-major over the sizes."""
    filled: list[int] = []
    for i, s in enumerate(strides):
        filled.append(s if s is not None else (filled[-1] * sizes[i - 1] if i else 1))
    return layout(memref, sizes, tuple(filled))


def group_packer(param: ParamInfo) -> Packer:
    """Packer of a group parameter (ABI in the module docs)."""
    group: GroupType = param.type  # type: ignore[assignment]
    memref = group.memref
    name, what, written = param.name, str(group), param.written
    slots = len(memref.dynamic_slots())

    def bind(value: Any, call: Call) -> Emit:
        if isinstance(value, Group):
            arrays, offset, shapes, strides = value.arrays, value.offset, value.shape, value.stride
        elif isinstance(value, (list, tuple)):
            arrays, offset, shapes, strides = list(value), None, None, None
        else:
            raise LaunchError(
                f"expected a list or tuple of arrays or tinyc.Group for {what}, got {type(value).__name__}",
                argument=name,
            )
        count = len(arrays)
        if group.size != DYNAMIC and count != group.size:
            raise LaunchError(f"{what}: expected {group.size} arrays, got {count}", argument=name)
        if count == 0:
            raise LaunchError(f"{what}: a group needs at least one array", argument=name)
        if param.batch_mode is not None and count < call.batch:
            raise LaunchError(f"{what}: group has {count} arrays, too few for batch={call.batch}", argument=name)
        offset = _group_offset(group, offset, name, what)
        shapes = _per_member(shapes, count, what, name, "shape")
        strides = _per_member(strides, count, what, name, "stride")
        explicit = shapes is not None or strides is not None
        flat = offset != 0 or explicit
        dynamic = np.empty((count, slots), dtype=np.int64)  # one row per member
        addresses = np.zeros(count, dtype=np.uint64)
        staged: list[int] = []  # members copied from NumPy ...
        handles: list[int] = []  # ... and their staging handles
        seen: dict[tuple, tuple[Layout, int]] = {}  # NumPy (dtype, shape, strides) -> checked layout, extent
        for i, member in enumerate(arrays):
            known = None
            if type(member) is np.ndarray and not explicit:
                key = (member.dtype, member.shape, member.strides)
                known = seen.get(key)
            if known is not None:  # same layout as an earlier member: only per-array flags
                if not member.flags.aligned or (written and not member.flags.writeable):
                    known = None  # let the full check report it
            if known is None:
                label = f"{what} member {i}"
                view = array_view(member, name, label)
                check_dtype(view, memref.element, name, label)
                if not flat and len(view.shape) == memref.order:
                    fitted = fit_memref(view, memref, name, label)
                else:
                    fitted = fit_flat(
                        view, memref, offset, shapes[i] if shapes else None,
                        strides[i] if strides else None, name, label,
                    )
                _read_only(view, param, label)
                known = (fitted, extent(view.shape, view.strides))
                if view.host is None:
                    call.check_usm_context(view, name, label)
                    addresses[i] = view.address
                elif not explicit:
                    seen[(member.dtype, member.shape, member.strides)] = known
            dynamic[i] = known[0].dynamic
            if type(member) is np.ndarray:
                staged.append(i)
                handles.append(call.staging.add(member, known[1], written))
        tail = ([ctypes.c_int64(count)] if group.size == DYNAMIC else []) + (
            [ctypes.c_int64(offset)] if group.offset == DYNAMIC else []
        )

        def emit() -> list:
            if handles:
                addresses[staged] = call.staging.addresses(np.array(handles))
            columns = (call.upload(np.ascontiguousarray(dynamic[:, k])) for k in range(slots))
            return [call.upload(addresses), *columns, *tail]

        return emit

    return bind


def _group_offset(group: GroupType, given: Any, name: str, what: str) -> int:
    if given is not None:
        try:
            _whole(given)
        except ValueError:
            raise LaunchError(f"{what}: offset must be a non-negative integer, got {given!r}", argument=name) from None
    if group.offset == DYNAMIC:
        return int(given or 0)
    if given is not None and int(given) != group.offset:
        raise LaunchError(f"{what}: Group offset={given} but the type says offset {group.offset}", argument=name)
    return group.offset


def abi_arity(param: ParamInfo) -> int:
    """How many kernel arguments the parameter becomes under the ABI."""
    t = param.type
    if isinstance(t, MemrefType):
        return 1 + len(t.dynamic_slots())
    if isinstance(t, GroupType):
        return 1 + len(t.memref.dynamic_slots()) + (t.size == DYNAMIC) + (t.offset == DYNAMIC)
    return 1


def make_packer(param: ParamInfo, raw_arg: Callable[[np.ndarray], Any]) -> Packer:
    """The packer of one parameter, built once per kernel."""
    t = param.type
    if isinstance(t, ScalarType):
        pack = scalar_packer(t, param.name, raw_arg)
        return lambda value, call: [pack(value)]
    if isinstance(t, MemrefType):
        return memref_packer(param)
    if isinstance(t, GroupType):
        return group_packer(param)
    raise TypeError(f"parameter '{param.name}' has type {t}, which kernels cannot take")
