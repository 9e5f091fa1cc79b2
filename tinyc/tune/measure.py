"""Timing candidate schedules of one kernel on the device, on synthetic data.

The inputs are random arrays of the kernel's types (`tinyc run`'s generator;
`?` sizes other than the batch mode are `DYNAMIC_SIZE`) at the batch the
user runs when the caller knows it (`tinyc tune --batch`, `$TINYC_TUNE_BATCH`),
else at the program's own batch (a static size of the mode indexed by the
work-group id, or of a group), else at a representative batch: at least
`MIN_WORK_GROUPS` work-groups and about `TARGET_SECONDS` of work, as long as
the data stays within `MAX_BYTES`. A schedule is chosen for the launches it
will run: a handful of work-groups (one per core, their data in the
first-level caches) favours other tiles than ten thousand of them, whose
operands stream from memory. The arrays are copied to the device once, with
the default schedule's kernel; every candidate is launched on the same packed
arguments (the ABI does not depend on the schedule). Times are the device's
own (event profiling), so Python overhead does not blur small differences.

Correctness is checked before a candidate is timed: on a small batch, its
outputs must equal the default schedule's bit for bit where the schedule
keeps the order of the arithmetic (`ORDER_CHANGING` in knobs.py), else agree
to NumPy tolerances.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import numpy as np

from tinyc.pipeline import check_source, compile_to_spirv
from tinyc.diagnostics import CompilationError
from tinyc.ir.types import DYNAMIC, MemrefType
from tinyc.reference.arguments import copy_argument
from tinyc.schedule.knobs import ORDER_CHANGING

MIN_WORK_GROUPS = 10_000
"""Work-groups of a representative launch (issue 20: not a handful)."""
TARGET_SECONDS = 0.002
"""A kernel so cheap that MIN_WORK_GROUPS take less than this gets more work-groups."""
MAX_BYTES = 1 << 30
"""Data of a representative launch at most (host arrays and their device copies)."""
DYNAMIC_SIZE = "32"
"""A `?` size that the caller does not give (`tinyc tune --size`): a mid-sized problem."""
MAX_BATCH = 1 << 20
CHECK_BATCH = 16
PROBE_BATCH = 64


class CandidateError(RuntimeError):
    """A candidate schedule that does not compile, build or compute the right result."""


class SameCode(CandidateError):
    """A candidate that compiles to the SPIR-V of one built before (nothing new to time)."""


def _nbytes(arg: Any) -> int:
    if isinstance(arg, np.ndarray):
        return arg.nbytes
    if isinstance(arg, (list, tuple)):
        return sum(_nbytes(a) for a in arg)
    return 0


class Bench:
    """One kernel (as its own source text) on one device, ready to time schedules."""

    def __init__(self, text: str, kernel: str, device: Any, device_info: Any,
                 given: dict[str, Any] | None = None, subgroup_size: int | None = None,
                 batch: int | None = None, sizes: dict[str, str] | None = None, seed: int = 0):
        self.text, self.kernel_name, self.device, self.info = text, kernel, device, device_info
        self.given, self.subgroup_size = dict(given or {}), subgroup_size
        self.sizes, self.seed = dict(sizes or {}), seed
        self._built: set[str] = set()   # digests of the SPIR-V of every schedule built
        self.default = self.build({})
        self.batch = self._fitting(batch)
        self._prepare()
        self._reference: list[Any] | None = None

    # -- building --------------------------------------------------------------
    def build(self, schedule: dict[str, Any]) -> Any:
        """The Kernel of a candidate schedule, over the caller's fixed knobs
        (CandidateError if it does not compile or build)."""
        from tinyc.runtime.kernel import Kernel
        from tinyc.schedule.program import merge

        full = merge(self.given, schedule)
        try:
            result = compile_to_spirv(self.text, f"<tuning {self.kernel_name}>",
                                      subgroup_size=self.subgroup_size, device_info=self.info,
                                      schedule={self.kernel_name: full} if full else None)
        except CompilationError as exc:
            raise CandidateError(f"does not compile: {str(exc).splitlines()[0]}") from None
        digest = hashlib.sha256(result.spirv).hexdigest()
        if digest in self._built:
            raise SameCode("the same SPIR-V as a schedule built before")
        self._built.add(digest)
        try:
            return Kernel(result.spirv, result.kernels[self.kernel_name], self.device)
        except Exception as exc:  # a build failure on the device is the candidate's problem
            raise CandidateError(f"does not build: {type(exc).__name__}: {exc}") from None

    # -- data ----------------------------------------------------------------------
    def _arguments(self, batch: int) -> list[Any]:
        from tinyc.harness.arguments import make_arguments

        sizes = dict(self.sizes)
        for p in self.default.info.params:  # `?` sizes the caller did not give
            if p.name not in sizes and isinstance(p.type, MemrefType) and DYNAMIC in p.type.shape:
                sizes[p.name] = "x".join("?" if (s == DYNAMIC and mode == p.batch_mode) else
                                         (DYNAMIC_SIZE if s == DYNAMIC else str(s))
                                         for mode, s in enumerate(p.type.shape))
        fn = check_source(self.text, f"<tuning {self.kernel_name}>")[self.kernel_name]
        return make_arguments(fn, self.default.info, batch, sizes, self.seed)[0]

    def _fitting(self, given: int | None) -> int:
        """The batch to time: `given` (--batch; a usage error if the kernel cannot take it) or
        a representative one the kernel can take (tinyc/harness/batches.py)."""
        from tinyc.harness.batches import fitting

        if given is not None:
            return fitting(self.default, self._arguments, given, given, lambda args: args)[1]
        wanted = self._representative_batch()
        return fitting(self.default, self._arguments, None, wanted, lambda args: args)[1]

    def _representative_batch(self) -> int:
        """The program's own batch, else MIN_WORK_GROUPS (more for a cheap kernel: about
        TARGET_SECONDS of work), within MAX_BYTES of data."""
        from tinyc.harness.batches import fitting

        own = own_batch(self.default.info)
        if own is not None:
            return max(1, min(own, MAX_BATCH))
        args, probe = fitting(self.default, self._arguments, None, PROBE_BATCH, lambda made: made)
        seconds = float(np.min(self.default.time(*args, batch=probe, repeat=3, warmup=1)))
        per_item = max(_nbytes(args) / probe, 1.0)
        by_time = probe * TARGET_SECONDS / max(seconds, 1e-7)
        by_memory = MAX_BYTES / per_item
        return int(max(1, min(max(MIN_WORK_GROUPS, by_time), by_memory, MAX_BATCH)))

    def _prepare(self) -> None:
        from tinyc.runtime.device import profiling_queue

        self.args = self._arguments(self.batch)
        self.prepared = self.default.prepare(*self.args, batch=self.batch)
        for event in self.prepared.call.staging.events:
            event.wait()
        self.queue = profiling_queue(self.default.queue)

    # -- timing ----------------------------------------------------------------------
    def time(self, kernel: Any, launches: int = 2) -> float:
        """The fastest of `launches` device times (seconds) of one launch over the batch."""
        best = float("inf")
        for _ in range(launches):
            event = kernel.submit(self.prepared.args, self.batch, self.queue)
            event.wait()
            best = min(best, (event.profiling_info_end - event.profiling_info_start) * 1e-9)
        return best

    def warm(self, kernel: Any) -> None:
        kernel.submit(self.prepared.args, self.batch, self.queue).wait()

    # -- checking ----------------------------------------------------------------------
    def _outputs(self, kernel: Any) -> list[Any]:
        batch = min(self.batch, CHECK_BATCH)
        if not hasattr(self, "_check_args"):
            self._check_args = self._arguments(batch)
        args = [copy_argument(a) for a in self._check_args]
        kernel(*args, batch=batch)
        return [a for p, a in zip(kernel.info.params, args) if p.written]

    def check(self, kernel: Any, schedule: dict[str, Any]) -> None:
        """Raise CandidateError unless the outputs match the default schedule's."""
        if self._reference is None:
            self._reference = self._outputs(self.default)
        got = self._outputs(kernel)
        exact = not _changes_order(schedule)
        for want, have in zip(self._reference, got):
            pairs = zip(want, have) if isinstance(want, list) else [(want, have)]
            for w, h in pairs:
                if exact:
                    same = w.tobytes(order="A") == h.tobytes(order="A")
                else:
                    tol = 1e-4 if w.dtype in (np.float32, np.complex64, np.float16) else 1e-10
                    scale = max(1.0, float(np.max(np.abs(w))) if w.size else 1.0)
                    same = np.allclose(h, w, rtol=tol, atol=tol * scale, equal_nan=True)
                if not same:
                    how = "bit for bit" if exact else "to NumPy tolerances"
                    raise CandidateError(f"results differ from the default schedule's ({how})")


def own_batch(info: Any) -> int | None:
    """The batch a kernel fixes itself: the smallest static size of a memref mode indexed by
    the work-group id, or of a group loaded with it (None when every such size is `?`)."""
    from tinyc.ir.types import GroupType

    sizes = []
    for p in info.params:
        if p.batch_mode is None:
            continue
        if isinstance(p.type, MemrefType) and p.type.shape[p.batch_mode] != DYNAMIC:
            sizes.append(p.type.shape[p.batch_mode])
        elif isinstance(p.type, GroupType) and p.type.size != DYNAMIC:
            sizes.append(p.type.size)
    return min(sizes) if sizes else None


def _changes_order(schedule: dict[str, Any]) -> bool:
    """Whether a knob that reorders additions differs from its default (1) in the schedule."""
    for key, knobs in schedule.items():
        if not isinstance(knobs, dict):
            continue
        opname = key.split("#")[0]
        for name in ORDER_CHANGING.get(opname, ()):
            value = knobs.get(name)
            if value is not None and list(value) != [1, 1]:
                return True
    return False


def elapsed(start: float) -> float:
    return time.perf_counter() - start
