"""A compiled kernel that Python calls like a function over a batch.

Launch geometry (DESIGN.md): the work-group is (X, Y, 1) work-items and the
batch runs along OpenCL dimension 2 for seed programs, so the ND-range is
global (X, Y, N), local (X, Y, 1); in dpctl's slowest-first order
`[N, Y, X]`, `[1, Y, X]`. Programs of the newest language batch along
dimension 0 (tinyc.std.BATCH_AXIS), as its reference runtime does: global
(X·N, Y, 1), `[1, Y, X·N]`.
Everything that does not depend on the arguments (program, kernel handle,
per-parameter packers) is prepared once in the constructor, so a call costs
the argument checks, the copies and one submit. On a device that reads host
memory (`aspect::usm_system_allocations`, true for Intel's OpenCL CPU
runtime) NumPy arrays are passed by address: no copy in, no copy back
(`host_pointers`); elsewhere they are copied through a staging area. Across
calls a kernel keeps its staging buffers (pool.py) and the pointer tables of
recent groups (members.py); `release_buffers()` frees them. Submission goes
through dpctl's C interface (submit.py), which takes host addresses.
"""

from __future__ import annotations

import numbers
import time as _time
from typing import Any, Callable

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.runtime import bounds
from tinyc.runtime.arguments import Call, abi_arity, make_packer
from tinyc.runtime.device import device_label, import_dpctl, profiling_queue, select_queue
from tinyc.runtime.launch_check import LaunchCheck, LaunchInfo, _from_batch_modes
from tinyc.runtime.pool import Pools
from tinyc.runtime.staging import wait_all
from tinyc.runtime.program_cache import build_program
from tinyc.runtime.staging import USMPointer
from tinyc.runtime.submit import Address, Submitter, ranges
from tinyc.signature import KernelInfo

MAX_BATCH = 2**31 - 1


class PreparedCall:
    """A checked call whose data is on the device; launch it as often as needed."""

    def __init__(self, kernel: "Kernel", call: Call, args: list):
        self.kernel = kernel
        self.call = call
        self.args = args  # the packed kernel arguments
        self.batch = call.batch

    def launch(self, queue: Any = None) -> Any:
        """Submit once (after the copies in); returns the event, does not wait."""
        return self.kernel.submit(self.args, self.batch, queue, self.call.staging.events)

    def finish(self, after: Any) -> None:
        """Copy written NumPy arrays back once `after` completed; waits."""
        after.wait()
        self.call.staging.copy_back(after)


class Kernel:
    """One entry point of a SPIR-V module, bound to a queue.

    `k(*args, batch=N)` checks the arguments against the signature (raising
    LaunchError naming the argument before anything runs), copies NumPy data
    to the device, launches N work-groups, waits and copies written arrays
    back in place. USM arrays are passed without copies.
    """

    def __init__(self, spirv: bytes, info: KernelInfo, device: Any = None,
                 checked_variant: Callable[[], "Kernel"] | None = None):
        info = self.info = LaunchInfo.of(info)  # with max_batch (launch_check.py)
        self.name = info.name
        self.spirv = spirv  # kept to build the kernel for other devices (sharding.py)
        self._checked_variant = checked_variant  # builds the bounds-checked Kernel (runtime/bounds.py)
        self._checked: Kernel | None = None
        self.queue = select_queue(device)
        self.program = build_program(self.queue, spirv)
        if not self.program.has_sycl_kernel(info.name):
            raise KeyError(f"the SPIR-V module has no kernel named {info.name!r}")
        self.sycl_kernel = self.program.get_sycl_kernel(info.name)
        arity = sum(abi_arity(p) for p in info.params) + (info.bounds_sites is not None)
        if self.sycl_kernel.num_args != arity:  # a wrong count would crash the launch
            raise ValueError(
                f"kernel {info.name!r} takes {self.sycl_kernel.num_args} OpenCL arguments but its "
                f"signature packs {arity}: the SPIR-V and the KernelInfo disagree"
            )
        dpctl = import_dpctl()
        self._memory = dpctl.memory
        self._packers = [make_packer(p, dpctl.RawKernelArg, k, info.launch is None)
                         for k, p in enumerate(info.params)]
        self._contexts: dict = {}  # USM arrays' syclobjs: do they share the kernel's context?
        self._pools = Pools(self.queue, self._memory)  # staging buffers reused across calls
        self._in_order = bool(self.queue.is_in_order)
        self._submitter = Submitter(self.sycl_kernel)
        self._check = LaunchCheck(info)  # the compiler's launch conditions (launch_check.py)
        self._unbounded = bool(info.launch is not None and not info.launch.bounded
                               and checked_variant is not None)
        """An access the compiler cannot bound: calls run the bounds-checked variant by default."""
        self.host_pointers = reads_host_memory(self.queue)
        """NumPy arrays go in by address (True where the device reads host memory; set it
        to False to copy them through device memory instead, as on other devices)."""
        x, y = info.work_group_size
        self._x, self._y = x, y
        self._nd_ranges: dict[int, Any] = {}
        self._names = ", ".join(p.name for p in info.params)

    def __repr__(self) -> str:
        return f"<tinyc.Kernel {self.name}({self._names}) on {device_label(self.queue.sycl_device)}>"

    # -- checking and packing ------------------------------------------------
    def _batch(self, kwargs: dict[str, Any]) -> int | None:
        """The batch= of a call; None when left out (then inferred: launch_check.py)."""
        batch = kwargs.pop("batch", None)
        if kwargs:
            unknown = ", ".join(sorted(kwargs))
            raise LaunchError(f"{self.name}() got unknown keyword argument(s) {unknown}; "
                              f"only batch=, device=, weights= and check_bounds= are accepted")
        if batch is None:
            return None
        if type(batch) is not int:  # the common case without ABC checks
            if isinstance(batch, bool) or not isinstance(batch, numbers.Integral):
                raise LaunchError(f"batch must be a non-negative integer, got {batch!r}", argument="batch")
            batch = int(batch)
        if not 0 <= batch <= MAX_BATCH:
            raise LaunchError(f"batch must be between 0 and {MAX_BATCH}, got {batch}", argument="batch")
        return batch

    def _check_count(self, args: tuple) -> None:
        if len(args) != len(self._packers):
            raise LaunchError(
                f"{self.name}({self._names}) takes {len(self._packers)} arguments, got {len(args)}"
            )

    def _bind(self, call: Call, args: tuple) -> list:
        """Check every argument; nothing is copied to the device yet."""
        return [pack(value, call) for pack, value in zip(self._packers, args)]

    def _bound(self, args: tuple, batch: int | None, pools: Any, track_usm_writes: bool = False,
               conditions: bool = True, host_pointers: bool | None = None) -> tuple[Call, list]:
        """A checked call: every argument, and the launch conditions (launch_check.py) with
        the batch (`call.batch`; inferred when None) unless `conditions` is False (a
        bounds-checked launch checks every access itself). Bound again without gathering written
        group members if one of them is aliased by another argument (so the device shares
        memory between them as the host does). Binding only fills host buffers."""
        host = self.host_pointers if host_pointers is None else host_pointers
        call = Call(self.queue, self._memory, batch or 0, self._contexts, pools, self._in_order, host)
        call.usm_writes = [] if track_usm_writes else None
        try:
            parts = self._bind(call, args)
            if call.gathered and any(written for written, _ in call.gathered) and _aliased(call):
                call.staging.release()
                call = Call(self.queue, self._memory, batch or 0, self._contexts, pools, self._in_order, host)
                call.usm_writes = [] if track_usm_writes else None
                call.gather_written = False
                parts = self._bind(call, args)
            if batch is None:
                call.batch = self._check.infer(call, args)
            self._check.verify(call, args, call.batch, conditions)
        except BaseException:
            if call.staged:
                call.staging.release()
            raise
        return call, parts

    def inferred_batch(self, *args: Any) -> int:
        """The batch a call with these arguments and without `batch=` runs (launch_check.py)."""
        self._check_count(args)
        call, _ = self._bound(args, None, None)
        if call.staged:
            call.staging.release()
        return call.batch

    def max_batch(self, *args: Any) -> int:
        """The largest batch these arguments can take (as `k.info.max_batch`: LaunchInfo)."""
        self._check_count(args)
        call, _ = self._bound(args, 0, None)
        if call.staged:
            call.staging.release()
        check = self._check
        if self.info.launch is None:
            return min(_from_batch_modes(self.info, call), check.limit)
        return check.largest_batch(check.sizes(call, args), args)

    @staticmethod
    def _emit(call: Call, parts: list) -> list:
        if call.staged:
            call.staging.place(call.lone)
        packed: list = []
        for part in parts:
            packed.extend(part if type(part) is list else part())
        return packed

    def prepare(self, *args: Any, **kwargs: Any) -> PreparedCall:
        """Check and pack a call and copy its data in, without launching (benchmarks, and
        host code that submits with dpctl itself).

        The data goes to USM memory (NumPy arrays are copied even where the device reads
        host memory), so `PreparedCall.args` are what dpctl's own `queue.submit` takes
        (DESIGN.md: host code written for one implementation launches the other's SPIR-V).
        Returns once the copies in are done, so the arguments are ready for any launcher."""
        batch = self._batch(kwargs)
        self._check_count(args)
        call, parts = self._bound(args, batch, None, host_pointers=False)  # buffers of its own
        prepared = PreparedCall(self, call, [_for_dpctl(a, self._memory, self.queue)
                                             for a in self._emit(call, parts)])
        wait_all(call.staging.events, self._in_order)
        return prepared

    def pack(self, *args: Any, **kwargs: Any) -> PreparedCall:
        """Check and pack a call as `k(...)` would launch it, without launching: NumPy arrays
        by address where the device reads host memory (`host_pointers`), so `args` may hold
        `Address` objects that only `launch_raw` / `submit` take (not dpctl's `submit`). A caller
        that relaunches one packing may write new addresses of arrays of the same layout into
        its `Address` slots (tinyc.einsum does). The host tables it points into live as long as
        the returned PreparedCall (`.call.keep`). Returns once any copies in are done."""
        batch = self._batch(kwargs)
        self._check_count(args)
        call, parts = self._bound(args, batch, None)  # buffers of its own, not the pools'
        prepared = PreparedCall(self, call, self._emit(call, parts))
        if call.staged:
            wait_all(call.staging.events, self._in_order)
        return prepared

    # -- launching -------------------------------------------------------------
    def _ranges(self, batch: int) -> Any:
        """Global and local range in dpctl's slowest-first order (module docs), as submitted."""
        found = self._nd_ranges.get(batch)
        if found is None:
            x, y = self._x, self._y
            found = ranges([1, y, x * batch], [1, y, x]) if self.info.batch_axis == 0 else \
                ranges([batch, y, x], [1, y, x])
            if len(self._nd_ranges) >= 16:
                self._nd_ranges.clear()
            self._nd_ranges[batch] = found
        return found

    def submit(self, packed: list, batch: int, queue: Any = None, after: list | None = None,
               variant: "Kernel | None" = None) -> Any:
        """Submit packed arguments over `batch` work-groups (of `variant`'s kernel, same ABI,
        if given); returns the event (a dpctl.SyclEvent)."""
        submitter = (variant or self)._submitter
        return submitter.submit(queue or self.queue, packed, self._ranges(batch), after or ())

    def launch_raw(self, packed: list, batch: int) -> None:
        """Launch already packed kernel arguments and wait (no checks; no event object: the
        fast path of a caller that re-launches one packed call, e.g. tinyc.einsum)."""
        if batch:
            submitter = self._submitter
            submitter.finish(submitter.submit_raw(self.queue, packed, self._ranges(batch)))

    def submit_raw(self, packed: list, batch: int) -> int:
        """Submit already packed kernel arguments without waiting (no checks): the raw event,
        which the caller hands to `finish_raw` (0 when nothing ran). For a caller that queues
        several launches on this in-order queue and waits once (tinyc.einsum's chunked sums)."""
        if not batch:
            return 0
        return self._submitter.submit_raw(self.queue, packed, self._ranges(batch))

    def finish_raw(self, event: int) -> None:
        """Wait for a raw event of `submit_raw` and delete it."""
        if event:
            self._submitter.finish(event)

    def __call__(self, *args: Any, check_bounds: bool | None = None, **kwargs: Any) -> None:
        """Launch and wait; `check_bounds=True` (or TINYC_CHECK_BOUNDS=1) runs the
        bounds-checked variant, which raises BoundsError instead of writing out of bounds
        (on this kernel's device: a checked launch is not split over devices)."""
        requested = bounds.requested(check_bounds)
        checking = requested and (check_bounds or self._checked_variant is not None)
        if check_bounds is None and not requested and self._unbounded:
            checking = True  # an access the compiler cannot bound: checked unless check_bounds=False
        if ("device" in kwargs or "weights" in kwargs) and not checking:  # the batch split over devices
            from tinyc.runtime import sharding

            device, weights = kwargs.pop("device", None), kwargs.pop("weights", None)
            return sharding.launch(self, args, self._batch(kwargs), device, weights)
        kwargs.pop("device", None), kwargs.pop("weights", None)
        batch = self._batch(kwargs)
        self._check_count(args)
        if checking:  # (TINYC_CHECK_BOUNDS skips raw SPIR-V kernels: they have no variant)
            return self._call_checked(args, batch)
        call, parts = self._bound(args, batch, self._pools)
        batch = call.batch
        if not call.staged:  # nothing copied: submit and wait
            packed = self._emit(call, parts)
            if batch:
                submitter = self._submitter
                submitter.finish(submitter.submit_raw(self.queue, packed, self._ranges(batch)))
            return
        events = call.staging.events
        try:
            packed = self._emit(call, parts)
            if batch:
                done = self.submit(packed, batch, None, events)
                events.append(done)
                call.staging.copy_back(done)
        finally:
            wait_all(events, self._in_order)  # never free or reuse memory a copy or kernel still uses
            call.staging.release()

    def _checked_kernel(self) -> "Kernel":
        """The bounds-checked variant (compiled and built on first use); same ABI plus a
        report buffer, so calls bind their arguments with this kernel's packers."""
        if self._checked is None:
            if self._checked_variant is None:
                raise LaunchError(f"kernel {self.name!r} has no bounds-checked variant (it was not made "
                                  f"by tinyc.compile)", argument="check_bounds")
            self._checked = self._checked_variant()
        return self._checked

    def _call_checked(self, args: tuple, batch: int) -> None:
        """A bounds-checked call (runtime/bounds.py). Dry variant: it checks without storing,
        then the plain kernel runs if it found nothing. Else: it runs for real, after
        snapshots of the written USM arrays, which it restores on a violation. Either
        way a violation raises BoundsError with no output written back."""
        if batch == 0:  # nothing runs: the arguments are only checked
            call, _ = self._bound(args, batch, self._pools, conditions=False)
            if call.staged:
                call.staging.release()
            return
        variant = self._checked_kernel()
        dry = variant.info.bounds_dry
        # not dry, it writes for real: NumPy data is copied (not by address), so a violation
        # leaves the caller's arrays as they were (nothing copied back)
        call, parts = self._bound(args, batch, self._pools, track_usm_writes=not dry, conditions=False,
                                  host_pointers=None if dry else False)
        batch = call.batch
        events = call.staging.events
        try:
            packed = self._emit(call, parts)
            report, zeroed = bounds.report_buffer(self.queue, call.staging)
            events.append(zeroed)
            snapshots = None if dry else bounds.Snapshots(self.queue, self._memory, call.usm_writes,
                                                          call.staging)
            if snapshots is not None:
                events += snapshots.events
            checked = self.submit(packed + [report], batch, None, events, variant)
            events.append(checked)
            found = bounds.read_report(self.queue, report, checked)
            if found[0]:
                if snapshots is not None:
                    snapshots.restore(checked)
                raise bounds.bounds_error(self.name, variant.info.bounds_sites, found)
            done = checked
            if dry:
                done = self.submit(packed, batch, None, [checked])
                events.append(done)
            call.staging.copy_back(done)
        finally:
            wait_all(events, self._in_order)  # never free or reuse memory a copy or kernel still uses
            call.staging.release()

    def release_buffers(self) -> None:
        """Free the staging buffers and group tables kept for later calls."""
        self._pools.clear()
        for packer in self._packers:
            tables = getattr(packer, "tables", None)
            if tables is not None:
                tables.clear()

    def time(
        self, *args: Any, batch: int = 1, repeat: int = 10, warmup: int = 1, wall: bool = False
    ) -> list[float]:
        """Seconds per launch, `repeat` times, with the data already on the device.

        Device time from event profiling (kernel execution only) unless
        `wall=True` (submit to completion, as seen from Python). NumPy
        arguments are not copied back; USM arguments see every launch.
        """
        prepared = self.prepare(*args, batch=batch)
        queue = self.queue if wall else profiling_queue(self.queue)
        for event in prepared.call.staging.events:
            event.wait()
        for _ in range(warmup):
            prepared.launch(queue).wait()
        times = []
        for _ in range(repeat):
            start = _time.perf_counter()
            event = prepared.launch(queue)
            event.wait()
            if wall:
                times.append(_time.perf_counter() - start)
            else:
                times.append((event.profiling_info_end - event.profiling_info_start) * 1e-9)
        return times


def _for_dpctl(argument: Any, memory: Any, queue: Any) -> Any:
    """A packed argument as dpctl's `submit` takes it: a USM address as a USM memory object."""
    if isinstance(argument, Address):
        return memory.as_usm_memory(USMPointer(argument.address, 1, queue))
    return argument


def reads_host_memory(queue: Any) -> bool:
    """Whether the queue's device reads any host memory (`aspect::usm_system_allocations`)."""
    try:
        return bool(queue.sycl_device.has_aspect_usm_system_allocations)
    except Exception:  # an unknown device: copy
        return False


def _aliased(call: Call) -> bool:
    """Does a gathered, written group share a member with another gathered group,
    or is a NumPy argument (or a view's base) one of its members?

    Written gathered members own their data (members.uniform_numpy), so only
    an array derived from a member itself can alias one."""
    gathered = call.gathered
    roots = []
    for array in call.staging.arrays:
        while isinstance(array.base, np.ndarray):
            array = array.base
        roots.append(id(array))
    found = np.array(roots, dtype=np.uint64)
    for i, (written, ids) in enumerate(gathered):
        if not written:
            continue
        if len(found) and np.isin(found, ids).any():
            return True
        for j, (_, other) in enumerate(gathered):
            if j != i and np.intersect1d(ids, other).size:
                return True
    return False
