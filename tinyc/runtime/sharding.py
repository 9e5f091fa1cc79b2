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

Order of work, so that a failure leaves every output as it was where it can:
  1. every slice is checked and its data staged on its device (nothing runs);
  2. every slice is submitted, to all queues at once, the first slice last;
  3. all kernels are waited for, the first slice first; any failure raises
     DeviceError naming the device, before anything is copied back;
  4. only then are results copied back into the caller's arrays.
On devices that read host memory, NumPy arrays are passed by address (no
copies, kernel.py): a kernel that fails after another device's slice ran
leaves that slice's part of a NumPy output written (the error says so); a
failure while checking and staging (step 1) still changes nothing.
USM arrays the kernel writes, or that live in another SYCL context than a
slice's device, go through a host copy made once per call (written ones are
copied back at step 4), so they too stay untouched when a device fails.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.runtime.device import device_label
from tinyc.runtime.devices import Devices, as_devices
from tinyc.runtime.groups import Group
from tinyc.runtime.slices import HostCopies, SliceArguments, check_batch_sizes
from tinyc.runtime.staging import wait_all
from tinyc.signature import KernelInfo


class DeviceError(LaunchError):
    """One device of a split launch failed. `.device` is that device. No output was changed,
    except where the other devices wrote NumPy outputs in place (passed by address) before
    the failure showed: the message says which."""

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


# -- the launch ---------------------------------------------------------------------------
def run_together(submits: Sequence[Callable[[], Any]],
                 failure: Callable[[BaseException, int], BaseException] | None = None) -> list[Any]:
    """Submit one slice per device and wait for all; returns their events.

    `submits[i]()` submits slice i and returns its event. Slices are
    submitted last first and waited for first first. On Intel's OpenCL CPU
    runtime the host thread that waits works on the first sub-device only
    (its arena takes the waiting thread; the others run on the runtime's
    worker threads alone, of which a 2-core CPU has one): submitted last,
    the first slice finds the workers already busy with the others, and the
    waiting thread runs it itself, so the sub-devices run at the same time.
    Submitted first, the workers start on it and the other slices wait for
    them (docs/scaling.md, "Sub-devices run at the same time"). `failure(exc,
    i)`, if given, is what to raise when slice i's submit or wait raises exc.
    """
    events: list[Any] = [None] * len(submits)
    for i in reversed(range(len(submits))):
        events[i] = _attempt(submits[i], i, failure)
    for i, event in enumerate(events):
        _attempt(event.wait, i, failure)
    return events


def _attempt(action: Callable[[], Any], i: int,
             failure: Callable[[BaseException, int], BaseException] | None) -> Any:
    """action(), with an exception of slice i turned into failure(exc, i)."""
    try:
        return action()
    except Exception as exc:
        if failure is None:
            raise
        raise failure(exc, i) from exc


def _failure(exc: BaseException, part: Slice, changed: bool = False) -> DeviceError:
    """`exc` raised for one slice, as an error naming its device; `changed`: other slices
    may have written NumPy outputs in place (passed by address) before it failed."""
    argument = getattr(exc, "argument", None)
    text = str(exc) if isinstance(exc, LaunchError) else f"{type(exc).__name__}: {exc}"
    outcome = ("the other slices may have written their parts of NumPy outputs, which the devices "
               "write in place" if changed else "no output was changed")
    message = f"{text} (on {part.device_text}, work-groups {part.start}..{part.start + part.count - 1}; {outcome})"
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

    def submit(self) -> Any:
        packed = self.kernel._emit(self.call, self.parts)
        self.done = self.kernel.submit(packed, self.part.count, None, self.call.staging.events)
        self.call.staging.events.append(self.done)
        return self.done

    def settle(self) -> None:
        """Wait for everything submitted and give the buffers back (always runs)."""
        if self.call is None or not self.call.staged:
            return
        try:
            wait_all(self.call.staging.events, self.kernel._in_order)
        finally:
            self.call.staging.release()


def launch(kernel: Any, args: tuple, batch: int, device: Any, weights: Any = None) -> None:
    """Run `kernel(*args, batch=batch)` split over `device` (module docs)."""
    kernel._check_count(args)
    if batch is None:  # left out: the largest batch the arguments take (launch_check.py)
        batch = kernel.inferred_batch(*args)
    if not batch:  # nothing runs: the arguments are only checked, on one device
        kernel(*args, batch=0)
        return
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
    in_place = any(p.written for p in params) and any(k.host_pointers for k in kernels)
    _run_slices(running, in_place, host)


def launch_sliced(parts: Sequence[tuple[Any, Sequence[Any], Slice]]) -> None:
    """Launch calls the caller sliced itself, one per device, together: (kernel, its
    arguments, its Slice of work-groups) each, the kernel built for the slice's queue
    (kernels_on). Steps 1-4 of the module docs, as `launch` (tinyc.einsum: a kernel with
    several batch entries per work-group, whose arguments `launch` cannot slice)."""
    host = HostCopies()
    running = [_Running(k, s, _Given(list(args))) for k, args, s in parts]
    in_place = any(p.written for p in parts[0][0].info.params) and any(k.host_pointers for k, _, _ in parts)
    _run_slices(running, in_place, host)


@dataclass
class _Given:
    """The arguments of a slice made by the caller (nothing to copy back but the kernel's)."""

    values: list
    commits: list = field(default_factory=list)


def _run_slices(running: list["_Running"], in_place: bool, host: HostCopies) -> None:
    """Stage every slice, run them together, then copy back (module docs, steps 1-4)."""
    def failure(exc: BaseException, i: int) -> DeviceError:
        return _failure(exc, running[i].part)

    def run_failure(exc: BaseException, i: int) -> DeviceError:
        # slices are submitted last first: when slice i fails, the later ones were submitted
        others_ran = i < len(running) - 1 or (running[i].done is not None and len(running) > 1)
        return _failure(exc, running[i].part, in_place and others_ran)

    try:
        for i in reversed(range(len(running))):  # staged in the order they are submitted
            _attempt(running[i].stage, i, failure)
        run_together([r.submit for r in running], run_failure)
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
    started = [r.call.staging.start_copy_back(r.done) for r in reversed(running)][::-1]
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
