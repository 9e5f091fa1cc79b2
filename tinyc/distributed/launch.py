"""`tinyc.distributed.run`: one launch over the ranks of an MPI communicator.

Every rank calls `run` (it is collective). With `scatter=True` root holds
the arguments: it checks them, splits the batch in proportion to the
ranks' devices (compute units, or `weights=`), and sends each rank its
slice of the batched arguments and a copy of the others (transfer.py);
every rank launches its slice on its device (`local_device`); the written
batched arguments come back into root's arrays. Non-root ranks may pass
None for every argument. With `scatter=False` each rank launches on its own
data and batch (batch=0: nothing to do), and `gather=True` collects the
written batched arguments on root (RunInfo.outputs).

A failure on any rank is reported to all of them (each raises a LaunchError
naming the ranks and devices that failed) and says what changed: with
`scatter=True` results are gathered only after every rank succeeded, so no
output is changed (except a written NumPy argument that is not split, which
root's launch writes in place); with `scatter=False` every rank whose launch
ran has changed its own outputs, and the message names those ranks. Kernels whose batch
cannot be split (sharding.split_problem) run whole on root's device.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.distributed.devices import local_device, mpi
from tinyc.distributed.transfer import Mover, Plan, plan_argument
from tinyc.ir.types import GroupType, MemrefType
from tinyc.runtime.arrays import array_view, check_dtype
from tinyc.runtime.device import device_label
from tinyc.runtime.devices import Devices, check_weights
from tinyc.runtime.groups import Group
from tinyc.runtime.sharding import HostCopies, check_batch_sizes, split_counts, split_problem


@dataclass
class RunInfo:
    """What one rank did in `run`; root also gets every rank's part (`ranks`)."""

    rank: int
    size: int
    device: str  # this rank's device (filter string, `parent/i` for a sub-device)
    start: int  # this rank's first work-group, counting over all ranks
    count: int  # work-groups launched here
    batch: int  # work-groups of all ranks
    seconds: float  # this rank's launch, wall clock, copies to and from its device included
    total_seconds: float  # the whole call on this rank: moving data, launch, results back
    ranks: list[tuple[str, int, int, float]] | None = None  # root: (device, start, count, seconds) per rank
    outputs: dict[str, Any] | None = None  # root, scatter=False with gather: written arguments of all ranks


def run(kernel: Any, *args: Any, batch: int, comm: Any = None, root: int = 0, scatter: bool = True,
        gather: bool | None = None, weights: Sequence[float] | None = None, device: Any = None) -> RunInfo:
    """Launch `kernel` over the ranks of `comm` (module docs); collective."""
    begin = time.perf_counter()
    comm = comm if comm is not None else mpi().COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if not 0 <= root < size:
        raise LaunchError(f"root must be a rank of the communicator (0..{size - 1}), got {root}", argument="root")
    queue = Devices([device if device is not None else local_device(comm)]).queues[0]
    label = device_label(queue.sycl_device)
    gather = scatter if gather is None else gather
    if scatter:
        return _scattered(kernel, args, batch, comm, root, weights, queue, label, begin)
    return _rank_local(kernel, args, batch, comm, root, gather, queue, label, begin)


def settle(comm: Any, longest: float = 2e-4) -> None:
    """A barrier that sleeps while it waits, instead of MPI's busy polling.

    Ranks that finished their launch wait here for the slower ones; polling
    at full speed would take the cores those ranks (and their devices'
    worker threads, on a CPU) still compute with."""
    request = comm.Ibarrier()
    pause = 2e-5
    while not request.Test():
        time.sleep(pause)
        pause = min(pause * 2, longest)


def _agree(comm: Any, error: BaseException | None, what: str, report: Any = None,
           changed: bool = False) -> list[Any]:
    """Every rank's `report`; raises on every rank if any rank failed (no rank may then
    wait in a collective alone). `changed`: this rank's launch ran and wrote arrays the
    caller sees, so the message says which ranks' outputs changed (never "no output was
    changed" when one did)."""
    settle(comm)
    failure = None if error is None else (str(error), getattr(error, "argument", None))
    found = comm.allgather((failure, report, changed))
    failed = [(r, e) for r, (e, _, _) in enumerate(found) if e is not None]
    if not failed:
        return [mine for _, mine, _ in found]
    if len(failed) == 1 or all(e == failed[0][1] for _, e in failed):
        ranks = ", ".join(str(r) for r, _ in failed)
        message = f"{what} failed on rank {ranks}: {failed[0][1][0]}"
    else:
        message = f"{what} failed: " + "; ".join(f"rank {r}: {text}" for r, (text, _) in failed)
    raise LaunchError(message + _changes([r for r, (_, _, wrote) in enumerate(found) if wrote], len(found)),
                      argument=None) from error


def _changes(wrote: list[int], size: int) -> str:
    """What a failed run changed: nothing, or the outputs of the ranks whose launches ran."""
    if not wrote:
        return " (no output was changed)"
    ranks = ", ".join(str(r) for r in wrote)
    if len(wrote) == size:
        return f" (the outputs of rank {ranks} were changed: their launches ran)"
    its = "its launch" if len(wrote) == 1 else "their launches"
    return f" (the outputs of rank {ranks} were changed: {its} ran; the other ranks changed no output)"


def _launch(kernel: Any, args: Sequence[Any], count: int, queue: Any, label: str) -> tuple[float, Exception | None]:
    """This rank's launch: (seconds, the error if it failed, naming the device)."""
    if not count:
        return 0.0, None
    start = time.perf_counter()
    try:
        kernel(*args, batch=count, device=queue)
    except Exception as exc:  # reported to every rank by _agree
        text = str(exc) if isinstance(exc, LaunchError) else f"{type(exc).__name__}: {exc}"
        error = LaunchError(f"{text} (on device {label} ({queue.sycl_device.name}))")
        error.argument = getattr(exc, "argument", None)
        return time.perf_counter() - start, error
    return time.perf_counter() - start, None


def _scattered(kernel: Any, args: tuple, batch: int, comm: Any, root: int, weights: Any, queue: Any,
               label: str, begin: float) -> RunInfo:
    rank, size = comm.Get_rank(), comm.Get_size()
    settle(comm)
    units = comm.allgather(float(queue.sycl_device.max_compute_units or 1))
    host = HostCopies()
    root_args: list[Any] = []
    message: Any = None
    if rank == root:
        try:
            root_args = _host_arguments(kernel.info.params, args, host)
            message = _plan(kernel, root_args, batch, weights if weights is not None else units, root, size)
        except LaunchError as exc:
            message = exc
    settle(comm)  # the others sleep while root checks and plans
    message = comm.bcast(message, root=root)
    if isinstance(message, LaunchError):
        raise LaunchError(str(message))
    counts, plans = message
    starts = [sum(counts[:r]) for r in range(size)]
    mover = Mover(comm, root, starts, counts) if plans is not None else None
    if mover is None:  # the batch cannot be split: root runs all of it on its own arguments
        local_args = root_args
    else:
        local_args = [mover.scatter(i, p, plan, root_args[i] if rank == root else None)
                      for i, (p, plan) in enumerate(zip(kernel.info.params, plans))]
    seconds, error = _launch(kernel, local_args, counts[rank], queue, label)
    in_place = rank == root and bool(counts[rank]) and _writes_in_place(kernel.info.params, plans, args)
    ranks = _agree(comm, error, f"{kernel.name}()", (label, starts[rank], counts[rank], seconds),
                   changed=in_place and error is None)
    if mover is not None:
        for i, plan in enumerate(plans):
            mover.gather(i, plan, local_args[i], root_args[i] if rank == root else None)
    if rank == root:
        host.commit()
    return RunInfo(rank, size, label, starts[rank], counts[rank], sum(counts), seconds,
                   time.perf_counter() - begin, ranks if rank == root else None)


def _writes_in_place(params: Sequence[Any], plans: Sequence[Plan] | None, args: Sequence[Any]) -> bool:
    """Does root's launch write the caller's own arrays? Written arguments split over the
    ranks are slices copied for the launch and only gathered back after every rank
    succeeded; USM arrays are written through host copies, committed at the end. But a
    written NumPy argument that travels whole (or a batch that cannot be split, run on
    root's arguments) is written in place."""
    return any(p.written and _holds_numpy(value) and (plans is None or plan.kind in ("whole", "value"))
               for p, plan, value in zip(params, plans or [None] * len(params), args))


def _holds_numpy(value: Any) -> bool:
    arrays = value.arrays if isinstance(value, Group) else value
    if isinstance(arrays, (list, tuple)):
        return any(isinstance(a, np.ndarray) for a in arrays)
    return isinstance(arrays, np.ndarray)


def _plan(kernel: Any, args: list[Any], batch: Any, weights: Sequence[float], root: int,
          size: int) -> tuple[list[int], list[Plan] | None]:
    """Root: per-rank work-group counts and how each argument travels (None: root runs all)."""
    kernel._check_count(args)
    batch = kernel._batch({"batch": batch})
    if batch is None:  # left out: the batch root's arguments take (runtime/launch_check.py)
        batch = kernel.inferred_batch(*args)
    params = kernel.info.params
    check_batch_sizes(params, args, batch)
    _check_dtypes(params, args)
    weights = check_weights(weights, size)
    if split_problem(kernel.info) is not None:
        return [batch if r == root else 0 for r in range(size)], None
    counts = split_counts(batch, weights)
    return counts, [plan_argument(p, v, True) for p, v in zip(params, args)]


def _check_dtypes(params: Sequence[Any], args: Sequence[Any]) -> None:
    """Cheap checks on root before anything moves (the launch checks the rest)."""
    for p, value in zip(params, args):
        element = p.type.element if isinstance(p.type, MemrefType) else (
            p.type.memref.element if isinstance(p.type, GroupType) else None)
        if element is None:
            continue
        arrays = value.arrays if isinstance(value, Group) else value
        first = arrays[0] if isinstance(arrays, (list, tuple)) and arrays else arrays
        if isinstance(first, np.ndarray):
            check_dtype(array_view(first, p.name, str(p.type)), element, p.name, str(p.type))


def _host_arguments(params: Sequence[Any], args: Sequence[Any], host: HostCopies) -> list[Any]:
    """Root's arguments with USM arrays replaced by host copies (MPI moves host memory)."""
    def local(p: Any, value: Any) -> Any:
        if isinstance(value, np.ndarray) or not hasattr(value, "__sycl_usm_array_interface__"):
            return value
        return host.of(value, p.name, str(p.type), p.written)

    out = []
    for p, value in zip(params, args):
        if isinstance(value, Group):
            arrays = value.arrays
            arrays = [local(p, a) for a in arrays] if isinstance(arrays, tuple) else local(p, arrays)
            value = Group(arrays, value.offset, value.shape, value.stride)
        elif isinstance(value, (list, tuple)):
            value = [local(p, a) for a in value]
        else:
            value = local(p, value)
        out.append(value)
    return out


def _rank_local(kernel: Any, args: tuple, batch: int, comm: Any, root: int, gather: bool, queue: Any,
                label: str, begin: float) -> RunInfo:
    rank, size = comm.Get_rank(), comm.Get_size()
    error = None
    try:
        count = 0 if isinstance(batch, (int, np.integer)) and not isinstance(batch, bool) and batch == 0 \
            else kernel._batch({"batch": batch})
        kernel._check_count(args)
        if count is None:  # left out: the batch this rank's arguments take
            count = kernel.inferred_batch(*args)
    except LaunchError as exc:
        count, error = 0, exc
    counts = _agree(comm, error, f"{kernel.name}()", count)
    starts = [sum(counts[:r]) for r in range(size)]
    seconds, error = _launch(kernel, args, count, queue, label)
    wrote = error is None and bool(count) and any(p.written for p in kernel.info.params)
    ranks = _agree(comm, error, f"{kernel.name}()", (label, starts[rank], count, seconds), changed=wrote)
    outputs = _gather_outputs(kernel.info.params, args, count, comm, root) if gather else None
    return RunInfo(rank, size, label, starts[rank], count, sum(counts), seconds, time.perf_counter() - begin,
                   ranks if rank == root else None, outputs if rank == root else None)


def _gather_outputs(params: Sequence[Any], args: Sequence[Any], count: int, comm: Any, root: int) -> dict[str, Any]:
    """Root: every written batched argument of all ranks, joined along its batch mode."""
    host = HostCopies()
    outputs: dict[str, Any] = {}
    for p, value in zip(params, args):
        if not p.written or p.batch_mode is None:
            continue
        arrays = value.arrays if isinstance(value, Group) else value
        if isinstance(arrays, (list, tuple)):
            mine: Any = [host.of(a, p.name, str(p.type), False) if not isinstance(a, np.ndarray) else a
                         for a in arrays[:count]]
            parts = comm.gather(mine, root=root)
            if comm.Get_rank() == root:
                outputs[p.name] = [member for part in parts for member in part]
            continue
        array = arrays if isinstance(arrays, np.ndarray) else host.of(arrays, p.name, str(p.type), False)
        mode = array.ndim - 1 if isinstance(p.type, GroupType) else p.batch_mode
        parts = comm.gather(array[(slice(None),) * mode + (slice(0, count),)], root=root)
        if comm.Get_rank() == root:
            outputs[p.name] = np.concatenate(parts, axis=mode)
    return outputs
