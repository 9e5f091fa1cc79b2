"""One launch split over several devices: `k(..., batch=N, device=[d0, d1])`.

The batch is cut into contiguous slices, one per device, in proportion to
the devices' weights (devices.py). A slice [s, s + n) is launched as a batch
of n work-groups whose arguments are views of the caller's:

* a memref indexed by the group id in mode m (ParamInfo.batch_mode) is
  sliced along m, so work-group g of the slice sees entry s + g as entry g;
* a group loaded with the group id keeps members s .. s + n - 1 (a stacked
  array: those entries of its last mode), with its offset, shape= and stride=;
* scalars and arguments without a batch mode (shared matrices) go whole to
  every device.

Where the type fixes the batch mode's size (`memref<f32x8x100>`, a group of
exactly 100), the slice is padded to that size: a host copy for memrefs,
repeats of the slice's first member for groups; the kernel never touches
the padding. Kernels whose slices would not compute what one launch does
(the compiler's `batch_split_problem`: a written argument without a batch
mode, builtin.group_size, other uses of the group id) run whole on the
device of the largest weight: correct, just not split (docs/scaling.md).

Order of work, so that a failure leaves every output as it was:
  1. every slice is checked and its data staged on its device (nothing runs);
  2. every slice is submitted, to all queues at once;
  3. all kernels are waited for; any failure raises DeviceError naming the
     device, before anything is copied back;
  4. only then are results copied back into the caller's arrays.
USM arrays the kernel writes, or that live in another SYCL context than a
slice's device, go through a host copy made once per call (written ones are
copied back at step 4), so they too stay untouched when a device fails.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType
from tinyc.runtime.arrays import array_view, check_batch, check_writable, extent
from tinyc.runtime.device import device_label, import_dpctl
from tinyc.runtime.devices import Devices, as_devices
from tinyc.runtime.groups import Group
from tinyc.runtime.staging import USMPointer, wait_all
from tinyc.signature import KernelInfo, ParamInfo


class DeviceError(LaunchError):
    """One device of a split launch failed; no output was changed. `.device` is that device."""

    def __init__(self, message: str, device: Any = None, argument: str | None = None):
        super().__init__(message)
        self.device = device
        self.argument = argument


@dataclass
class Slice:
    """The work-groups [start, start + count) of a launch, on one queue."""

    queue: Any
    start: int
    count: int

    @property
    def device_text(self) -> str:
        device = self.queue.sycl_device
        return f"device {device_label(device)} ({device.name})"


def split_counts(batch: int, weights: Sequence[float]) -> list[int]:
    """Work-groups per device: proportional to the weights, summing to `batch`
    (largest remainders get the leftovers, earlier devices first on ties)."""
    total = float(sum(weights))
    exact = [batch * w / total for w in weights]
    counts = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: batch - sum(counts)]:
        counts[i] += 1
    return counts


def split_problem(info: KernelInfo) -> str | None:
    """Why this kernel's batch cannot be split (None: it can)."""
    problem = getattr(info, "batch_split_problem", None)
    if problem:
        return problem
    for p in info.params:  # also checked here for KernelInfo made without the analysis
        if p.written and p.batch_mode is None:
            return f"it writes %{p.name}, which is not indexed by the group id"
    return None


def plan(info: KernelInfo, batch: int, targets: Devices) -> list[Slice]:
    """The slices of a launch: one per device with work, or all on one device."""
    weights = targets.weights
    if len(targets) == 1 or split_problem(info) is not None:
        best = max(range(len(weights)), key=lambda i: (weights[i], -i))
        return [Slice(targets.queues[best], 0, batch)]
    slices, start = [], 0
    for queue, count in zip(targets.queues, split_counts(batch, weights)):
        if count:
            slices.append(Slice(queue, start, count))
            start += count
    return slices


# -- per-device kernels ------------------------------------------------------------------
_kernels_lock = threading.Lock()


def kernels_on(kernel: Any, queues: Sequence[Any]) -> list[Any]:
    """The kernel built for each queue (cached on `kernel`; new builds run in parallel)."""
    with _kernels_lock:
        known = kernel.__dict__.setdefault("_on_queues", {id(kernel.queue): (kernel.queue, kernel)})
        missing = list({id(q): q for q in queues if id(q) not in known}.values())
    if missing:
        make = lambda q: type(kernel)(kernel.spirv, kernel.info, q)  # noqa: E731
        if len(missing) == 1:
            built = [make(missing[0])]
        else:
            with ThreadPoolExecutor(len(missing)) as pool:
                built = list(pool.map(make, missing))
        with _kernels_lock:
            for q, k in zip(missing, built):
                known.setdefault(id(q), (q, k))
    return [known[id(q)][1] for q in queues]


# -- arguments of one slice -------------------------------------------------------------
class _USMView:
    """A USM array restricted to some entries of one mode (no copy)."""

    __slots__ = ("__sycl_usm_array_interface__", "_keep")

    def __init__(self, interface: dict, keep: Any):
        self.__sycl_usm_array_interface__ = interface
        self._keep = keep


def _usm_strides(iface: dict) -> tuple[int, ...]:
    strides = iface.get("strides")
    if strides is not None:
        return tuple(int(s) for s in strides)
    shape, out, step = iface["shape"], [], 1
    for n in reversed(shape):
        out.insert(0, step)
        step *= max(int(n), 1)
    return tuple(out)


def _usm_slice(value: Any, mode: int, start: int, count: int) -> Any:
    iface = dict(value.__sycl_usm_array_interface__)
    strides = _usm_strides(iface)
    shape = list(map(int, iface["shape"]))
    shape[mode] = count
    iface.update(shape=tuple(shape), strides=strides,
                 offset=int(iface.get("offset") or 0) + start * strides[mode])
    return _USMView(iface, value)


def _usm_context(value: Any) -> Any:
    owner = value.__sycl_usm_array_interface__.get("syclobj")
    return getattr(owner, "sycl_context", owner)


class HostCopies:
    """Host copies of USM arrays for one call: made on first use, written back by `commit`."""

    def __init__(self) -> None:
        self._copies: dict[int, list] = {}  # id -> [USM memory, host bytes, host array, written]

    def of(self, value: Any, name: str, what: str, written: bool) -> np.ndarray:
        found = self._copies.get(id(value))
        if found is None:
            view = array_view(value, name, what)
            if written:
                check_writable(view, name, what)
            itemsize = view.dtype.itemsize
            nbytes = max(extent(view.shape, view.strides) * itemsize, 1)
            raw = np.empty(nbytes, dtype=np.uint8)
            memory = self._memory(value, view.address, nbytes)
            memory.copy_to_host(raw)
            host = np.ndarray(view.shape, view.dtype, buffer=raw,
                              strides=tuple(s * itemsize for s in view.strides))
            found = self._copies[id(value)] = [memory, raw, host, False, value]
        found[3] = found[3] or written
        return found[2]

    @staticmethod
    def _memory(value: Any, address: int, nbytes: int) -> Any:
        dpctl = import_dpctl()
        owner = value.__sycl_usm_array_interface__.get("syclobj")
        if not isinstance(owner, dpctl.SyclQueue):
            context = getattr(owner, "sycl_context", owner)
            owner = dpctl.SyclQueue(context, context.get_devices()[0])
        return dpctl.memory.as_usm_memory(USMPointer(address, nbytes, owner))

    def commit(self) -> None:
        """Write the copies of written arrays back (after every device succeeded)."""
        for memory, raw, _, written, _ in self._copies.values():
            if written:
                memory.copy_from_host(raw)


class SliceArguments:
    """The arguments of one slice, and what to copy back after success."""

    def __init__(self, params: Sequence[ParamInfo], args: Sequence[Any], part: Slice, whole: bool,
                 host: HostCopies):
        self.part, self.whole, self.host = part, whole, host
        self.context = part.queue.sycl_context
        self.commits: list[Callable[[], None]] = []  # padded copies -> the caller's arrays
        self.values = [self._argument(p, v) for p, v in zip(params, args)]

    def _argument(self, p: ParamInfo, value: Any) -> Any:
        t = p.type
        if isinstance(t, MemrefType):
            return self._memref(p, t, value)
        if isinstance(t, GroupType):
            return self._group(p, t, value)
        return value

    def _local(self, p: ParamInfo, value: Any, written: bool) -> Any:
        """A USM array usable on this slice's queue as is, else its host copy."""
        if isinstance(value, np.ndarray) or not hasattr(value, "__sycl_usm_array_interface__"):
            return value
        if not written and _usm_context(value) == self.context:
            return value
        return self.host.of(value, p.name, str(p.type), written)

    def _memref(self, p: ParamInfo, t: MemrefType, value: Any) -> Any:
        mode = p.batch_mode
        if mode is None or self.whole:
            return self._local(p, value, p.written)
        shape = _shape(value)
        if shape is None or len(shape) != t.order:
            return value  # not an array of this order: the kernel's checks say what is wrong
        start, count = self.part.start, self.part.count
        local = self._local(p, value, p.written)
        if t.shape[mode] != DYNAMIC and t.shape[mode] != count:
            if not isinstance(local, np.ndarray):
                local = self.host.of(value, p.name, str(t), p.written)
            if p.written:  # the padded copy is writable; the caller's array must be too
                check_writable(array_view(local, p.name, str(t)), p.name, str(t))
            return self._padded(local, mode, t.shape[mode], p.written)
        if isinstance(local, np.ndarray):
            return local[(slice(None),) * mode + (slice(start, start + count),)]
        return _usm_slice(local, mode, start, count)

    def _padded(self, array: np.ndarray, mode: int, size: int, written: bool) -> np.ndarray:
        """A host array of the type's static batch size whose first entries are this slice's."""
        start, count = self.part.start, self.part.count
        itemsize = array.itemsize
        strides = tuple(s // itemsize for s in array.strides)
        padded_shape = array.shape[:mode] + (size,) + array.shape[mode + 1:]
        raw = np.zeros(max(extent(padded_shape, strides), 1), dtype=array.dtype)
        padded = np.lib.stride_tricks.as_strided(raw, padded_shape, array.strides, writeable=True)
        here = (slice(None),) * mode + (slice(0, count),)
        there = (slice(None),) * mode + (slice(start, start + count),)
        padded[here] = array[there]
        if written:
            self.commits.append(lambda: array.__setitem__(there, padded[here]))
        return padded

    def _group(self, p: ParamInfo, t: GroupType, value: Any) -> Any:
        batched = p.batch_mode is not None and not self.whole
        config: tuple | None = None
        arrays = value
        if isinstance(value, Group):
            arrays, config = value.arrays, (value.offset, value.shape, value.stride)
        stacked = _shape(arrays) is not None
        if not stacked and not isinstance(arrays, (list, tuple)):
            return value  # not a group: the kernel's checks say what is wrong
        pad = t.size if batched and t.size != DYNAMIC and t.size != self.part.count else 0
        if stacked:
            local = self._local(p, arrays, p.written)
            if pad and not isinstance(local, np.ndarray):
                local = self.host.of(arrays, p.name, str(t), p.written)
        else:
            local = [self._local(p, a, p.written) for a in arrays]
        if not batched:
            if stacked and local is arrays or not stacked and all(map(_is, local, arrays)):
                return value  # unchanged: the kernel may know this object from earlier calls
            return Group(local, *config) if config else local
        arrays = local
        start, count = self.part.start, self.part.count
        if stacked and not pad:
            shape = _shape(arrays)
            members = (arrays[..., start:start + count] if isinstance(arrays, np.ndarray)
                       else _usm_slice(arrays, len(shape) - 1, start, count))
        else:
            members = [arrays[..., g] for g in range(start, start + count)] if stacked else list(
                arrays[start:start + count])
            members += members[:1] * (pad - count if pad else 0)
        if config is None:
            return members if stacked and not pad else (tuple(members) if isinstance(value, tuple) else members)
        offset, shape, stride = config
        return Group(members, offset, slice_per_member(shape, start, count, pad),
                     slice_per_member(stride, start, count, pad))


def slice_per_member(value: Any, start: int, count: int, pad: int) -> Any:
    """Group(shape=/stride=) for a slice: one tuple stays, a list per member is sliced."""
    if value is None or all(isinstance(v, (int, np.integer)) for v in value):
        return value
    part = list(value[start:start + count])
    return part + part[:1] * (pad - count if pad else 0)


def _is(a: Any, b: Any) -> bool:
    return a is b


def _shape(value: Any) -> tuple[int, ...] | None:
    """The shape of a NumPy or USM array (None for anything else)."""
    if isinstance(value, np.ndarray):
        return value.shape
    iface = getattr(value, "__sycl_usm_array_interface__", None)
    if isinstance(iface, dict) and "shape" in iface:
        try:
            return tuple(int(n) for n in iface["shape"])
        except (TypeError, ValueError):
            return None
    return None


def check_batch_sizes(params: Sequence[ParamInfo], args: Sequence[Any], batch: int) -> None:
    """Batched arrays and groups must cover the whole batch (before slicing hides it)."""
    for p, value in zip(params, args):
        if p.batch_mode is None:
            continue
        what = str(p.type)
        if isinstance(p.type, MemrefType):
            shape = _shape(value)
            if shape is not None and len(shape) == p.type.order:
                check_batch(shape, p.batch_mode, batch, p.name, what)
            continue
        arrays = value.arrays if isinstance(value, Group) else value
        shape = _shape(arrays)
        count = (shape[-1] if shape else 0) if shape is not None else (
            len(arrays) if isinstance(arrays, (list, tuple)) else None)
        if count is not None and count < batch:
            raise LaunchError(f"{what}: group has {count} arrays, too few for batch={batch}", argument=p.name)


# -- the launch ---------------------------------------------------------------------------
def _failure(exc: BaseException, part: Slice) -> DeviceError:
    """`exc` raised for one slice, as an error naming its device."""
    argument = getattr(exc, "argument", None)
    text = str(exc) if isinstance(exc, LaunchError) else f"{type(exc).__name__}: {exc}"
    message = (f"{text} (on {part.device_text}, work-groups {part.start}..{part.start + part.count - 1}; "
               f"no output was changed)")
    error = DeviceError(message, part.queue.sycl_device, argument)
    error.__cause__ = exc
    return error


class _Running:
    """One slice between staging and copying back."""

    def __init__(self, kernel: Any, part: Slice, arguments: SliceArguments):
        self.kernel, self.part, self.arguments = kernel, part, arguments
        self.call: Any = None
        self.parts: Any = None
        self.done: Any = None

    def stage(self) -> None:
        self.call, self.parts = self.kernel._bound(self.arguments.values, self.part.count, self.kernel._pools)

    def submit(self) -> None:
        packed = self.kernel._emit(self.call, self.parts)
        self.done = self.kernel.submit(packed, self.part.count, None, self.call.staging.events)
        self.call.staging.events.append(self.done)

    def settle(self) -> None:
        """Wait for everything submitted and give the buffers back (always runs)."""
        if self.call is None:
            return
        try:
            wait_all(self.call.staging.events, self.kernel._in_order)
        finally:
            self.call.staging.release()


def launch(kernel: Any, args: tuple, batch: int, device: Any, weights: Any = None) -> None:
    """Run `kernel(*args, batch=batch)` split over `device` (module docs)."""
    kernel._check_count(args)
    targets = as_devices(device, weights)
    slices = plan(kernel.info, batch, targets)
    kernels = kernels_on(kernel, [s.queue for s in slices])
    params = kernel.info.params
    if len(slices) == 1 and not _has_usm(args):
        kernels[0](*args, batch=batch)  # one device: an ordinary launch
        return
    check_batch_sizes(params, args, batch)
    host = HostCopies()
    running = [_Running(k, s, SliceArguments(params, args, s, len(slices) == 1, host))
               for k, s in zip(kernels, slices)]
    try:
        for step in ("stage", "submit"):
            for r in running:
                try:
                    getattr(r, step)()
                except Exception as exc:
                    raise _failure(exc, r.part) from exc
        for r in running:
            try:
                r.done.wait()
            except Exception as exc:
                raise _failure(exc, r.part) from exc
        _copy_back(running)  # every device succeeded: now change the outputs
        host.commit()
    finally:
        for r in running:
            try:
                r.settle()
            except Exception:  # the first error is the one to report
                pass


def _copy_back(running: list[_Running]) -> None:
    """Copy every slice's results back: all copies submitted first, so the devices copy at once."""
    started = [r.call.staging.start_copy_back(r.done) for r in running]
    for r, state in zip(running, started):
        r.call.staging.finish_copy_back(state)
        for commit in r.arguments.commits:
            commit()


def _has_usm(args: Sequence[Any]) -> bool:
    """Does any argument (or group member) live in USM memory?"""
    def usm(value: Any) -> bool:
        return not isinstance(value, np.ndarray) and hasattr(value, "__sycl_usm_array_interface__")

    for value in args:
        arrays = value.arrays if isinstance(value, Group) else value
        if usm(arrays) or (isinstance(arrays, (list, tuple)) and any(map(usm, arrays))):
            return True
    return False
