"""Running a compiled contraction: operands as the kernel's memrefs, launched by `Kernel`.

A call passes each operand, the output and any scratch as the memref view the
kernel's parameter describes (the array's own memory, its dimensions ordered
by stride: layout.py) to `Kernel.__call__`, which checks them against the
signature and passes NumPy arrays by address where the device reads host
memory (no copy in or out; elsewhere it copies them).

A plain call (NumPy arrays in, a new array out, alpha 1, beta 0) with the
signature of an earlier one skips even that: the first such call packs its
arguments once (`Kernel.pack`, all checks), later ones write the new
addresses into that packing and relaunch it (`Kernel.launch_raw`) — a
dictionary lookup, a new output array and one submit.
"""

from __future__ import annotations

import ctypes
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from tinyc.contractions.compiled import UNSIGNED, Analysis, Compiled, Signature, materialize, signed
from tinyc.contractions.layout import Layout
from tinyc.runtime import results
from tinyc.runtime.numpy_objects import numpy_head


@dataclass
class Call:
    """A call's analysis, its kernel and launch data (cached by the exact signatures)."""

    analysis: Analysis
    compiled: Compiled | None          # None: the result has no elements, or is a view
    groups: int = 0                    # work-groups to launch
    view: tuple | None = None          # (shape, element strides, transpose) of a view result
    packed: list | None = None         # the packed arguments of a call by address (after the first)
    slots: list[int] = field(default_factory=list)   # where its array addresses are
    scalars: tuple = ()                # the alpha and beta packed (complex ones stay as packed)
    lock: threading.Lock = field(default_factory=threading.Lock)


# -- arrays ---------------------------------------------------------------------------
def usm_interface(x: Any) -> dict | None:
    return getattr(x, "__sycl_usm_array_interface__", None) if not isinstance(x, np.ndarray) else None


def signature(x: Any) -> Signature:
    if isinstance(x, np.ndarray):
        return Signature("numpy", x.dtype, x.shape, x.strides, x.flags.aligned)
    iface = x.__sycl_usm_array_interface__
    dtype = np.dtype(iface["typestr"])
    shape = tuple(int(n) for n in iface["shape"])
    strides = iface.get("strides")
    if strides is None:
        strides = [1] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * max(shape[d + 1], 1)
    return Signature("usm", dtype, shape, tuple(int(s) * dtype.itemsize for s in strides))


def address(x: Any) -> int:
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0]
    iface = x.__sycl_usm_array_interface__
    return int(iface["data"][0]) + int(iface.get("offset") or 0) * np.dtype(iface["typestr"]).itemsize


def queue_of(x: Any) -> Any:
    owner = x.__sycl_usm_array_interface__.get("syclobj")
    return getattr(owner, "sycl_queue", owner)


def memref_view(x: Any, t: Layout) -> Any:
    """The array as the kernel's memref of layout `t`: the same memory, modes ordered by stride
    (size-1, broadcast and diagonal dimensions as the layout has them)."""
    if isinstance(x, np.ndarray):
        view = np.lib.stride_tricks.as_strided(x, t.shape, tuple(s * x.itemsize for s in t.strides))
        return view.view(signed(x.dtype)) if x.dtype in UNSIGNED else view
    return UsmView(x, t.shape, t.strides)


class UsmView:
    """A strided view of a USM array, by its __sycl_usm_array_interface__ alone."""

    def __init__(self, base: Any, shape: Sequence[int], strides: Sequence[int]):
        iface = dict(base.__sycl_usm_array_interface__)
        iface["shape"], iface["strides"] = tuple(shape), tuple(strides)
        kind = np.dtype(iface["typestr"])
        if kind in UNSIGNED:   # (the kernel's integers are signless)
            iface["typestr"] = signed(kind).str
        self._base = base
        self.__sycl_usm_array_interface__ = iface


def new_output(shape: tuple[int, ...], dtype: np.dtype, order: str, queue: Any) -> Any:
    if queue is None:
        return results.empty(shape, dtype, order)
    try:
        import dpnp
    except ImportError:  # pragma: no cover - dpnp is how tinyc returns USM results
        raise TypeError("USM operands need out= (a USM array) when dpnp is not installed") from None
    return dpnp.empty(shape, dtype=dtype, order=order, sycl_queue=queue)


def finish(result: Any, out: Any, a: Analysis) -> Any:
    """What the call returns: `out` itself, or the new result (a bool one from its counts of
    true products, NumPy's OR of ANDs; a 0-d one as a NumPy scalar, as np.einsum)."""
    if out is not None:
        return out
    if a.boolean:
        result = result != 0
    return result[()] if isinstance(result, np.ndarray) and result.ndim == 0 else result


def check_scalar(value: Any, name: str, dtype: np.dtype) -> Any:
    """alpha or beta as the kernel takes it for a contraction computing in `dtype`: complex
    only for complex types, an integer for integer types (modulo 2^bits for unsigned ones, as
    the signed kernel computes)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, complex, np.number)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if dtype.kind != "c" and isinstance(value, (complex, np.complexfloating)):
        if value.imag != 0:
            raise TypeError(f"{name} is complex ({value}) but the kernel computes in {dtype}")
        value = value.real
    if dtype.kind in "iu":
        if not isinstance(value, (int, np.integer)) and not float(value).is_integer():
            raise TypeError(f"{name}={value!r} is not an integer, but the kernel computes in {dtype}")
        value = wrapped(int(value), dtype) if dtype.kind == "u" else int(value)
    return value


def wrapped(value: int, dtype: np.dtype) -> int:
    """An integer modulo 2^bits of `dtype`, in the signed range the kernel's scalar takes."""
    half = 1 << (8 * dtype.itemsize - 1)
    return (value + half) % (2 * half) - half


def scaled_alpha(alpha: Any, a: Analysis) -> Any:
    """alpha times the call's scale (summed labels no operand holds); modulo 2^bits for
    integers, as the sum itself would wrap."""
    if a.scale == 1:
        return alpha
    return wrapped(alpha * a.scale, a.compute) if a.compute.kind in "iu" else alpha * a.scale


# -- calls ------------------------------------------------------------------------------
def run(call: Call, arrays: list, out: Any, alpha: Any, beta: Any, check_bounds: bool = False,
        split: Callable[..., None] | None = None) -> Any:
    """One call: `out := alpha·einsum + beta·out`, or a new output. `check_bounds` runs the
    bounds-checked kernel; `split(arrays, target, alpha, beta)`, if given, launches the call
    split over several devices instead (split.py)."""
    a, c = call.analysis, call.compiled
    alpha = check_scalar(alpha, "alpha", a.compute)
    beta = check_scalar(beta, "beta", a.result)
    if a.boolean and (alpha != 1 or (out is not None and beta != 0)):
        raise TypeError("alpha and beta need numbers; the result is bool (NumPy's OR of ANDs)")
    usm_queue = next((queue_of(x) for x in arrays if usm_interface(x) is not None), None)
    target, result = out, out
    if out is None:
        result = new_output(a.out_shape, a.result, a.out_order, usm_queue)
        target, beta = result, 0
    if a.empty:
        return finish(result, out, a)
    inputs = [materialize(x, labels, a.compute) if conv else x
              for x, conv, labels in zip(arrays, a.convert, a.subscripts.inputs)]
    temp = None
    if out is not None and (not a.out_direct or _overlaps(out, inputs)):
        if usm_interface(out) is not None:
            raise ValueError("out overlaps an operand (or has a layout the kernel cannot write); "
                             "pass a separate output array")
        temp = _like_out(out, a) if a.out_direct else results.empty(a.out_shape, a.result, a.out_order)
        if beta != 0:
            temp[...] = out
        target = temp
    if isinstance(target, np.ndarray) and not target.flags.writeable:
        raise ValueError("out is read-only")
    if split is not None and a.dynamic and not check_bounds:   # (a checked launch is not split)
        split(arrays, target, alpha, beta)   # each slice converts and scales its own
    elif check_bounds or not _by_address(call, [*inputs, target], _addresses([*inputs, target]),
                                         scaled_alpha(alpha, a), beta):
        c.kernel(*kernel_arguments(call, inputs, target, alpha, beta), batch=call.groups,
                 check_bounds=True if check_bounds else None)
    if temp is not None:
        queued = _pending()
        if queued is not None:   # (a launch queued by `queued_on` writes temp: wait for it first)
            queued.wait()
        out[...] = temp   # (into a bool out: nonzero counts are True)
    return finish(result, out, a)


def _like_out(out: np.ndarray, a: Analysis) -> np.ndarray:
    """A temporary for an `out` the kernel could write but overlaps an operand: its elements
    where the kernel's output layout (made from out's strides) puts them."""
    steps = [s // out.itemsize for s in out.strides]
    extent = 1 + sum((n - 1) * step for n, step in zip(out.shape, steps))
    base = results.empty((max(extent, 1),), a.result)
    return np.lib.stride_tricks.as_strided(base, out.shape, [step * base.itemsize for step in steps])


def kernel_arguments(call: Call, inputs: Sequence[Any], target: Any, alpha: Any, beta: Any) -> list:
    """The kernel's arguments for a call: alpha (times the call's scale), beta, the operands
    (converted ones already materialized) and the target as memref views, and any scratch."""
    a, c = call.analysis, call.compiled
    views = [memref_view(x, t) for x, t in zip(inputs, a.inputs)] if c.spec.inputs else []
    views.append(memref_view(target, a.output))
    if c.scratch_per_group:
        views.append(results.empty((c.scratch_per_group, call.groups), signed(a.compute), "F"))
    return [scaled_alpha(alpha, a), beta, *views]


def run_plain(call: Call, operands: Sequence[np.ndarray]) -> Any:
    """A plain call (NumPy arrays in, a new array out) of a signature seen before; None when
    an operand is misaligned (the general path copies it)."""
    addresses = _addresses(operands)
    if addresses is None:
        return None
    a = call.analysis
    result = results.empty(a.out_shape, a.result, a.out_order)
    addresses.append(numpy_head(result)[0])   # (results.empty makes exact ndarrays)
    if not _by_address(call, [*operands, result], addresses, 1, 0):
        call.compiled.kernel(*kernel_arguments(call, operands, result, 1, 0), batch=call.groups)
    return finish(result, None, a)


def _addresses(arrays: Sequence[Any]) -> list[int] | None:
    """The arrays' addresses when all are aligned NumPy arrays (else None); read from the
    array objects (numpy_objects.py: ~0.3 us each, `x.ctypes.data` ~1.3)."""
    found = []
    for x in arrays:
        if type(x) is not np.ndarray:
            return None
        where = numpy_head(x)[0]
        if where % x.itemsize:   # (stricter than NumPy's ALIGNED for complex: the kernel's vectors)
            return None
        found.append(where)
    return found


def _by_address(call: Call, arrays: Sequence[np.ndarray], addresses: list[int] | None, alpha: Any,
                beta: Any) -> bool:
    """Launch a call whose arrays (its operands, then its target) are aligned NumPy arrays
    (`addresses`, from `_addresses`) by address: the first call of a signature is checked and
    packed by the kernel, later ones write their addresses (and a real alpha and beta) into
    that packing, about 20 us of Python instead of 60-70 for the checked path. False when a
    call cannot go so (USM or misaligned arrays, a scratch buffer, a device that cannot read
    host memory, complex scalars other than the packed ones): the caller launches it checked."""
    c = call.compiled
    if addresses is None or c.scratch_per_group or not c.spec.inputs or not c.kernel.host_pointers:
        return False
    with call.lock:
        packed = call.packed
        if packed is None:
            _pack(call, arrays, alpha, beta)
            return True
        if not _set_scalars(call, alpha, beta):
            return False
        for slot, where in zip(call.slots, addresses):
            packed[slot].address = where
        queued = _pending()
        if queued is not None and c.kernel.queue is queued.queue:
            queued.events.append((c.kernel, c.kernel.submit_raw(packed, call.groups)))
        else:
            c.kernel.launch_raw(packed, call.groups)
    return True


class Queued:
    """Launches submitted to one in-order queue and not waited for yet (`queued_on`)."""

    def __init__(self, queue: Any):
        self.queue = queue
        self.events: list[tuple[Any, int]] = []

    def wait(self) -> None:
        events, self.events = self.events, []
        for kernel, event in events:
            kernel.finish_raw(event)


_queued = threading.local()


def _pending() -> Queued | None:
    """This thread's launches queued by `queued_on` and not waited for yet, if any."""
    return getattr(_queued, "launches", None)


@contextmanager
def queued_on(queue: Any) -> Iterator[Queued]:
    """Within the block, relaunches by address (`_by_address`) on `queue` (in order) are
    submitted without waiting: a kernel launched later on that queue runs after them, and
    its wait covers theirs. On leaving, every one is waited for (also after an error), so
    no memory they use is freed while they run. Other queues, and out-of-order ones, wait
    at each launch as usual."""
    previous = _pending()
    queued = Queued(queue)
    _queued.launches = queued if queue is not None and queue.is_in_order else None
    try:
        yield queued
    finally:
        _queued.launches = previous
        queued.wait()


_REAL_SCALARS = (ctypes.c_float, ctypes.c_double)
"""Packed scalars a new alpha or beta is written into as a float; others are packed again."""


def _set_scalars(call: Call, alpha: Any, beta: Any) -> bool:
    """Write alpha and beta into the packing (its first two arguments); complex ones, packed
    as raw bytes, only match the packed values."""
    if (alpha, beta) == call.scalars:
        return True
    packed = call.packed
    if not all(type(packed[k]) in _REAL_SCALARS for k in (0, 1)):   # (complex raw bytes, f16 bits)
        return False
    try:
        packed[0].value, packed[1].value = float(alpha), float(beta)
    except OverflowError:   # (the checked path says which)
        return False
    call.scalars = (alpha, beta)
    return True


def _pack(call: Call, arrays: Sequence[np.ndarray], alpha: Any, beta: Any) -> None:
    """The first call of a signature by address: checked and packed by the kernel, then
    launched; its packing kept for the next calls when every array went in by address."""
    from tinyc.runtime.arguments import abi_arity
    from tinyc.runtime.submit import Address

    a, kernel = call.analysis, call.compiled.kernel
    layouts = [*a.inputs, a.output]
    views = [memref_view(x, t) for x, t in zip(arrays, layouts)]
    prepared = kernel.pack(alpha, beta, *views, batch=call.groups)   # NumPy by address: Address slots
    kernel.launch_raw(prepared.args, call.groups)
    positions, at = [], 0
    for p in kernel.info.params:
        positions.append(at)
        at += abi_arity(p)
    slots = positions[2:2 + len(views)]
    if all(type(prepared.args[s]) is Address for s in slots) and not prepared.call.staged:
        for s in slots:
            prepared.args[s].keep = None     # the arrays of later calls are alive while they run
        call.slots, call.packed, call.scalars = slots, prepared.args, (alpha, beta)


def _overlaps(out: Any, inputs: Sequence[Any]) -> bool:
    if not isinstance(out, np.ndarray):
        lo = address(out)
        hi = lo + _span_usm(out)
        return any(usm_interface(x) is not None and address(x) < hi and lo < address(x) + _span_usm(x)
                   for x in inputs)
    return any(isinstance(x, np.ndarray) and np.may_share_memory(out, x) for x in inputs)


def _span_usm(x: Any) -> int:
    s = signature(x)
    if 0 in s.shape:
        return 0
    return sum((n - 1) * st for n, st in zip(s.shape, s.strides)) + s.dtype.itemsize
