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

Groups are checked and packed in groups.py (Group, GroupPacker).
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.ir.types import BoolType, GroupType, MemrefType, ScalarType
from tinyc.runtime.abi import abi_arity, null_arguments  # noqa: F401 (abi_arity: importable here too)
from tinyc.runtime.arrays import ArrayView, array_view, check_batch, check_dtype, check_writable, extent, fitter
from tinyc.runtime.groups import Group, GroupPacker  # noqa: F401 (Group: re-exported)
from tinyc.runtime.members import ALIGNED, WRITEABLE
from tinyc.runtime.numpy_objects import numpy_head
from tinyc.runtime.scalars import bool_packer, scalar_packer
from tinyc.runtime.staging import Staging, USMPointer
from tinyc.signature import ParamInfo
from tinyc.runtime.submit import Address

Emit = Callable[[], list]  # produces the kernel arguments after placement
Packer = Callable[[Any, "Call"], "list | Emit"]


CONTEXT_CACHE_SIZE = 64


class Call:
    """State of one call between checking and launching.

    `contexts` (owned by the Kernel, kept across calls) remembers whether a
    USM array's syclobj shares the kernel's context (asking costs ~1 us),
    holding the syclobj so that its id stays its own. `host_pointers`: the
    device reads host memory (system allocations), so NumPy data goes in by
    address; else it is copied through `staging`, made on first use.
    """

    __slots__ = ("queue", "memory", "batch", "pools", "in_order", "host_pointers", "_staging", "lone",
                 "gather_written", "gathered", "contexts", "usm_writes", "keep", "sizes")

    def __init__(self, queue: Any, memory: Any, batch: int, contexts: dict | None = None, pools: Any = None,
                 in_order: bool = False, host_pointers: bool = False):
        self.queue = queue
        self.memory = memory
        self.batch = batch
        self.pools, self.in_order = pools, in_order
        self.host_pointers = host_pointers  # NumPy data goes in by address (the device reads host memory)
        self._staging: Staging | None = None  # made when something is copied
        self.lone: set[int] = set()
        self.gather_written = True  # may written group members be gathered (groups.py)?
        self.gathered: list[tuple[bool, np.ndarray]] = []  # (written, member ids) of gathered groups
        self.contexts = contexts if contexts is not None else {}  # id(syclobj) -> (syclobj, same context)
        self.usm_writes: list[tuple[int, int]] | None = None  # bounds-checked calls: written USM spans
        self.keep: list[Any] = []  # host tables passed by address: alive until the call ends
        self.sizes: dict[int, Any] = {}  # parameter index -> what the launch bounds read (launch_check.py)

    @property
    def staging(self) -> Staging:
        """The NumPy data of the call copied to the device (made on first use)."""
        if self._staging is None:
            self._staging = Staging(self.queue, self.memory, self.pools, self.in_order)
        return self._staging

    @property
    def staged(self) -> bool:
        """Whether anything of this call is copied (or was placed in pooled buffers)."""
        return self._staging is not None

    def note_usm_write(self, address: int, nbytes: int) -> None:
        """A USM span the kernel may write (bounds-checked calls restore it on a violation)."""
        if self.usm_writes is not None:
            self.usm_writes.append((int(address), int(nbytes)))

    def same_context(self, owner: Any) -> bool:
        """Does a USM array's syclobj (queue, context, ...) share the kernel's context?"""
        if owner is self.queue:
            return True
        known = self.contexts.get(id(owner))
        if known is not None and known[0] is owner:
            return known[1]
        context = getattr(owner, "sycl_context", owner)
        try:
            same = bool(context == self.queue.sycl_context)
        except Exception:  # an unknown kind of syclobj
            same = False
        if len(self.contexts) >= CONTEXT_CACHE_SIZE:
            self.contexts.clear()
        self.contexts[id(owner)] = (owner, same)  # the owner is held: its id stays its own
        return same

    def usm_argument(self, view: ArrayView, name: str, what: str) -> Any:
        """A USM array's element 0 as a kernel argument; checks its context.

        An array of the queue's context goes by address; another is wrapped by
        dpctl, which checks that the pointer belongs to the queue's context."""
        if self.same_context(view.owner):
            return Address(view.address, view.usm)
        nbytes = extent(view.shape, view.strides) * view.dtype.itemsize
        try:  # dpctl checks that the pointer belongs to the queue's context
            wrapped = self.memory.as_usm_memory(USMPointer(view.address, nbytes, self.queue))
        except (ValueError, TypeError) as exc:
            raise LaunchError(
                f"{what}: USM array is not usable on the kernel's queue ({exc})", argument=name
            ) from None
        return wrapped

    def check_usm_context(self, view: ArrayView, name: str, what: str) -> None:
        """A USM group member must belong to the kernel's context."""
        if not self.same_context(view.owner):  # ask the runtime about the pointer itself
            self.usm_argument(view, name, what)


def _int64s(values: Sequence[int]) -> list:
    return [ctypes.c_int64(v) for v in values]


USM_MEMO_SIZE = 64


def _usm_key(value: Any) -> tuple | None:
    """What a USM array's checks depend on: its interface's fields (None if not hashable)."""
    iface = getattr(value, "__sycl_usm_array_interface__", None)
    if type(iface) is not dict:
        return None
    get = iface.get
    key = (get("data"), get("shape"), get("strides"), get("typestr"), get("offset"), get("syclobj"))
    try:
        hash(key)
    except TypeError:
        return None
    return key


_STEADY_MODULES = ("dpnp.", "dpctl.tensor.")


def _steady(value: Any, owner: Any) -> bool:
    """A dpnp (or dpctl.tensor) array on a queue: its pointer and layout stay while it lives,
    so a later call may skip its interface (~5 us: it waits for its queue) and wait itself."""
    return type(value).__module__.startswith(_STEADY_MODULES) and hasattr(owner, "wait") \
        and hasattr(owner, "sycl_context")


def memref_packer(param: ParamInfo, index: int = -1, batch_checks: bool = True) -> Packer:
    """Packer of a memref parameter: pointer, then its `?` sizes and strides.

    USM arrays seen before are recognised by their interface's fields (the
    key keeps the syclobj alive, so its identity cannot be reused): the
    checked kernel arguments are reused, only the batch is checked again.
    The array's shape goes to `call.sizes[index]` (the launch conditions read it); the
    batch mode is checked against the batch only without them (`batch_checks`).
    """
    memref: MemrefType = param.type  # type: ignore[assignment]
    name, what, written = param.name, str(memref), param.written
    mode = param.batch_mode if batch_checks else None
    fit = fitter(memref).fit
    memo: dict[tuple, tuple[tuple[int, ...], list, tuple[int, int]]] = {}  # USM key -> (shape, args, span)
    layouts: dict[tuple, list] = {}  # NumPy (dtype, shape, strides) checked before -> `?` arguments
    need = ALIGNED | (WRITEABLE if written else 0)
    arrays: dict[int, tuple] = {}  # id of a dpnp array seen before -> (it, its queue, shape, args, span)

    def bind(value: Any, call: Call) -> list | Emit:
        if type(value) is np.ndarray and call.host_pointers:  # the common case, by address
            tail = layouts.get((value.dtype, value.shape, value.strides))
            if tail is not None:
                address, flags = numpy_head(value)
                if flags & need == need:
                    shape = value.shape
                    call.sizes[index] = shape
                    if mode is not None:
                        check_batch(shape, mode, call.batch, name, what)
                    return [Address(address, value), *tail]
        known = arrays.get(id(value))
        if known is not None and known[0] is value:  # a dpnp array seen before (held: its id is its own)
            if known[1] is not call.queue:
                known[1].wait()  # what its interface would do: its queue's work on it is done
            call.sizes[index] = known[2]
            if mode is not None:
                check_batch(known[2], mode, call.batch, name, what)
            if written:
                call.note_usm_write(*known[4])
            return known[3]
        if value is None:
            return null_arguments(param, abi_arity(param))
        key = _usm_key(value) if type(value) is not np.ndarray else None
        if key is not None:
            known = memo.get(key)
            if known is not None:
                call.sizes[index] = known[0]
                if mode is not None:
                    check_batch(known[0], mode, call.batch, name, what)
                if written:
                    call.note_usm_write(*known[2])
                return known[1]
        view = array_view(value, name, what)
        check_dtype(view, memref.element, name, what)
        fitted = fit(view, name, what)
        call.sizes[index] = view.shape
        if mode is not None:
            check_batch(view.shape, mode, call.batch, name, what)
        if written:
            check_writable(view, name, what)
        tail = _int64s(fitted.dynamic)
        if view.host is None:
            arguments = [call.usm_argument(view, name, what), *tail]
            span = (view.address, extent(view.shape, view.strides) * view.dtype.itemsize)
            if written:
                call.note_usm_write(*span)
            if key is not None and call.same_context(view.owner):
                if len(memo) >= USM_MEMO_SIZE:
                    memo.clear()
                memo[key] = (view.shape, arguments, span)
                if _steady(value, view.owner):
                    if len(arrays) >= USM_MEMO_SIZE:
                        arrays.clear()
                    arrays[id(value)] = (value, view.owner, view.shape, arguments, span)
            return arguments
        if not (written or param.read) and not call.host_pointers:  # never touched: nothing to copy
            return [call.staging.device_buffer(64), *tail]
        if call.host_pointers:  # the device reads the array where it is
            if type(value) is np.ndarray:
                if len(layouts) >= USM_MEMO_SIZE:
                    layouts.clear()
                layouts[(value.dtype, value.shape, value.strides)] = tail
            return [Address(view.address, view.host), *tail]
        handle = call.staging.add(view.host, extent(view.shape, view.strides), written, view.address)
        call.lone.add(handle)
        return lambda: [call.staging.argument(handle), *tail]

    return bind


def make_packer(param: ParamInfo, raw_arg: Callable[[np.ndarray], Any], index: int = -1,
                batch_checks: bool = True) -> Packer:
    """The packer of one parameter (the `index`th), built once per kernel. `batch_checks`:
    a batch mode must cover the batch (kernels without launch conditions: launch_check.py)."""
    t = param.type
    if isinstance(t, ScalarType):
        pack = scalar_packer(t, param.name, raw_arg)
        return lambda value, call: [pack(value)]
    if isinstance(t, BoolType):
        pack = bool_packer(param.name)
        return lambda value, call: [pack(value)]
    if isinstance(t, MemrefType):
        return memref_packer(param, index, batch_checks)
    if isinstance(t, GroupType):
        return GroupPacker(param, index, batch_checks)
    raise TypeError(f"parameter '{param.name}' has type {t}, which kernels cannot take")
