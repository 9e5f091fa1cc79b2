"""The launch path of issue 19, side by side in one run: copies, the launch floor, lists, sharding.

Run from the repository root:

    python -m benchmarks.launch_path [--batch 100000] [--rounds 15] [--out benchmarks/launch_path.md]

1. NumPy against dpnp. The README's fused kernel (samples/fused_kernel.ir) at
   batch N with NumPy arrays (the group A stacked, and as a list of N arrays)
   and with dpnp arrays (stacked) on the kernel's queue. Where the device reads
   host memory, NumPy arrays go by address: target NumPy/dpnp <= 1.1. NumPy
   places a large array 16 bytes past a page, dpnp on a page: the same NumPy
   data 64-byte aligned is a row of its own. Also the Python side alone of the
   NumPy calls (the submission a no-op; the thread's CPU time).
2. The launch floor. An empty kernel (one `memref<f32x?>` argument, no work)
   launched with batch 1: `k(x)` with a NumPy array, with a dpnp array, and a
   raw dpctl `queue.submit_async(kernel, [usm, size], ...).wait()` of the same
   SPIR-V kernel: microseconds per call (targets 25 and 15).
3. Sharding a list. The fused kernel with A a list of N NumPy arrays, on the
   whole device and split over its two sub-devices (`device=tinyc.devices(
   "opencl:cpu", split=True)`): target split/whole <= 1.1. The same with A
   stacked shows what splitting itself costs (one core per sub-device: a
   static half each, where the whole device balances its two threads), and
   the Python side alone of the list launches (every submission a no-op; the
   thread's CPU time).

Every row of tables 1 and 3 is the median over `--rounds` rounds in which
the variants run round-robin in a rotating order; in table 2 the variants
take turns call by call (1000 x `--rounds` calls each) and the median single
call is reported (this 2-core machine is shared: ratios of adjacent runs are
steadier than times, and a median of single calls skips the bursts of other
processes). Results are checked against NumPy before anything is timed.
"""

from __future__ import annotations

import argparse
import ctypes
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
EMPTY = "func @empty(%x: memref<f32x?>) {\n}\n"


def interleaved(fns: dict[str, Callable[[], Any]], rounds: int, inner: int = 1,
                clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median seconds per call of each function (`inner` calls per sample), round-robin;
    `clock=time.thread_time`: the calling thread's CPU time (the Python side alone, which
    never waits: steadier than wall time where other processes take the cores)."""
    names = list(fns)
    for name in names:
        fns[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            fn = fns[name]
            start = clock()
            for _ in range(inner):
                fn()
            samples[name].append((clock() - start) / inner)
    return {name: statistics.median(v) for name, v in samples.items()}


def fused_inputs(batch: int, rng: np.random.Generator) -> tuple:
    A = np.asfortranarray(rng.uniform(-1, 1, (16, 8, batch)).astype(np.float32))
    B = np.asfortranarray(rng.uniform(-1, 1, (8, 8)).astype(np.float32))
    C = np.asfortranarray(rng.uniform(-1, 1, (8, 16)).astype(np.float32))
    D = np.zeros((16, 16, batch), np.float32, order="F")
    return A, B, C, D


def check_fused(k: Any, A: np.ndarray, group: Any, B: Any, C: Any, D: Any, host: Callable[[Any], np.ndarray],
                device: Any = None) -> None:
    """One launch on a zero D against NumPy (the first 64 entries checked), before any timing."""
    batch = A.shape[2]
    k(np.float32(0.5), group, B, C, D, batch=batch, **({"device": device} if device is not None else {}))
    n = min(64, batch)
    want = 0.5 * np.einsum("ikb,lk,lj->ijb", A[:, :, :n], host(B), host(C))
    got = host(D)[:, :, :n]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def aligned(x: np.ndarray, alignment: int = 64) -> np.ndarray:
    """A Fortran-order copy of x whose data starts on an `alignment`-byte boundary (NumPy's own
    large arrays start 16 bytes past a page: every 64-byte column of the fused kernel's A and
    D then straddles two cache lines)."""
    raw = np.empty(x.nbytes + alignment, np.uint8)
    start = (-raw.ctypes.data) % alignment
    out = raw[start:start + x.nbytes].view(x.dtype).reshape(x.shape, order="F")
    out[...] = x
    return out


def numpy_against_dpnp(batch: int, rounds: int) -> list[tuple[str, float]]:
    import dpnp

    import tinyc

    k = tinyc.compile((ROOT / "samples" / "fused_kernel.ir").read_text())["fused_kernel"]
    A, B, C, D = fused_inputs(batch, np.random.default_rng(1))
    members = [np.asfortranarray(A[:, :, g]) for g in range(batch)]
    on = lambda x: dpnp.asarray(x, order="F", sycl_queue=k.queue)  # noqa: E731
    dA, dB, dC, dD = on(A), on(B), on(C), on(D)
    alpha = np.float32(0.5)
    zeros = lambda: np.zeros(D.shape, np.float32, order="F")  # noqa: E731 (D accumulates: fresh ones)
    check_fused(k, A, A, B, C, zeros(), np.asarray)
    check_fused(k, A, members, B, C, zeros(), np.asarray)
    check_fused(k, A, dA, dB, dC, on(zeros()), dpnp.asnumpy)
    A64, D64 = aligned(A), aligned(D)
    check_fused(k, A64, A64, B, C, aligned(zeros()), np.asarray)
    times = interleaved({
        "NumPy, A stacked": lambda: k(alpha, A, B, C, D, batch=batch),
        "NumPy, A a list of arrays": lambda: k(alpha, members, B, C, D, batch=batch),
        "dpnp, A stacked": lambda: k(alpha, dA, dB, dC, dD, batch=batch),
        "NumPy, A stacked, A and D 64-byte aligned": lambda: k(alpha, A64, B, C, D64, batch=batch),
    }, rounds)
    python = python_only(k, {
        "NumPy, A stacked: Python only (CPU)": lambda: k(alpha, A, B, C, D, batch=batch),
        "NumPy, A a list of arrays: Python only (CPU)": lambda: k(alpha, members, B, C, D, batch=batch),
    }, rounds)
    return list(times.items()) + list(python.items())


def python_only(k: Any, fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """The launch path's own time per call: the submission (tinyc/runtime/submit.py) a no-op."""
    submitter = k._submitter
    submitter.submit_raw = lambda *args, **kwargs: 0
    submitter.finish = lambda event: None
    try:
        return interleaved(fns, rounds, clock=time.thread_time)
    finally:
        del submitter.submit_raw, submitter.finish


def launch_floor(rounds: int) -> list[tuple[str, float]]:
    import dpnp
    import dpctl.memory

    import tinyc

    k = tinyc.compile(EMPTY)["empty"]
    q = k.queue
    x = np.zeros(16, np.float32)
    dx = dpnp.zeros(16, dtype=np.float32, sycl_queue=q)
    usm = dpctl.memory.MemoryUSMDevice(64, queue=q)
    wg_x, wg_y = k.info.work_group_size
    size = ctypes.c_int64(16)
    raw = lambda: q.submit_async(k.sycl_kernel, [usm, size], [1, wg_y, wg_x], [1, wg_y, wg_x]).wait()  # noqa: E731
    return list(per_call({
        "raw dpctl submit and wait (USM)": raw,
        "k(x, batch=1), x NumPy": lambda: k(x, batch=1),
        "k(x, batch=1), x dpnp": lambda: k(dx, batch=1),
    }, rounds * 1000).items())


def per_call(fns: dict[str, Callable[[], Any]], calls: int) -> dict[str, float]:
    """Median seconds of single calls, the functions taking turns call by call (a call takes
    microseconds: other processes' bursts hit every function alike and the median skips them)."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    clock = time.perf_counter
    items = list(fns.items())
    for fn in fns.values():
        fn()
    for _ in range(calls):
        for name, fn in items:
            start = clock()
            fn()
            samples[name].append(clock() - start)
    return {name: statistics.median(v) for name, v in samples.items()}


def sharded_list(batch: int, rounds: int) -> list[tuple[str, float]]:
    import tinyc

    k = tinyc.compile((ROOT / "samples" / "fused_kernel.ir").read_text())["fused_kernel"]
    subs = tinyc.devices("opencl:cpu", split=True)
    A, B, C, D = fused_inputs(batch, np.random.default_rng(2))
    members = [np.asfortranarray(A[:, :, g]) for g in range(batch)]
    alpha = np.float32(0.5)
    check_fused(k, A, members, B, C, np.zeros_like(D, order="F"), np.asarray)
    check_fused(k, A, members, B, C, np.zeros_like(D, order="F"), np.asarray, device=subs)
    check_fused(k, A, A, B, C, np.zeros_like(D, order="F"), np.asarray, device=subs)
    fns = {
        "whole device, A a list": lambda: k(alpha, members, B, C, D, batch=batch),
        "two sub-devices, A a list": lambda: k(alpha, members, B, C, D, batch=batch, device=subs),
        "whole device, A stacked": lambda: k(alpha, A, B, C, D, batch=batch),
        "two sub-devices, A stacked": lambda: k(alpha, A, B, C, D, batch=batch, device=subs),
    }
    times = interleaved(fns, rounds)
    python = submissions_skipped({f"{name}: Python only (CPU)": fn for name, fn in list(fns.items())[:2]}, rounds)
    return list(times.items()) + list(python.items())


class _Done:
    def wait(self) -> None:
        pass


def submissions_skipped(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """The launch path's own time per call on every device: each kernel's submission a no-op."""
    from tinyc.runtime.submit import Submitter

    real = {name: getattr(Submitter, name) for name in ("submit_raw", "finish", "submit")}
    Submitter.submit_raw = lambda self, *args, **kwargs: 0  # type: ignore[method-assign]
    Submitter.finish = lambda self, event: None  # type: ignore[method-assign]
    Submitter.submit = lambda self, *args, **kwargs: _Done()  # type: ignore[method-assign]
    try:
        return interleaved(fns, rounds, clock=time.thread_time)
    finally:
        for name, method in real.items():
            setattr(Submitter, name, method)


def table(title: str, rows: list[tuple[str, float]], unit: str, base: str | None, target: str) -> str:
    scale = 1e6 if unit == "us" else 1e3
    lines = [f"### {title}", "", f"| variant | {unit} | ratio |", "|---|---:|---:|"]
    reference = dict(rows).get(base) if base else None
    for name, seconds in rows:
        ratio = f"{seconds / reference:.2f}" if reference else "-"
        lines.append(f"| {name} | {seconds * scale:.{1 if unit == 'us' else 2}f} | {ratio} |")
    return "\n".join(lines + ["", target, ""])


def ratio(rows: list[tuple[str, float]], a: str, b: str) -> float:
    found = dict(rows)
    return found[a] / found[b]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "launch_path.md")
    args = parser.parse_args()
    copies = numpy_against_dpnp(args.batch, args.rounds)
    floor = launch_floor(args.rounds)
    shards = sharded_list(args.batch, args.rounds)
    dpnp_time = dict(copies)["dpnp, A stacked"]
    text = "\n".join([
        "# The launch path (issue 19)", "",
        f"`python -m benchmarks.launch_path --batch {args.batch} --rounds {args.rounds}` on "
        f"{platform.node() or 'this machine'}, {time.strftime('%Y-%m-%d')}: medians of interleaved rounds "
        f"(benchmarks/launch_path.py says how).", "",
        table(f"The fused kernel at batch {args.batch}: NumPy against dpnp", copies, "ms",
              "dpnp, A stacked", f"Target: NumPy / dpnp <= 1.1 (NumPy stacked: "
              f"{dict(copies)['NumPy, A stacked'] / dpnp_time:.2f}; with A and D 64-byte aligned, "
              f"as dpnp's are: {dict(copies)['NumPy, A stacked, A and D 64-byte aligned'] / dpnp_time:.2f})."),
        table("The launch floor: an empty kernel, batch 1", floor, "us", "raw dpctl submit and wait (USM)",
              "Targets: at most 25 us with a NumPy argument, 15 us with a USM (dpnp) argument."),
        table(f"A list of {args.batch} NumPy arrays: sharded over two sub-devices against the whole device",
              shards, "ms", "whole device, A a list",
              f"Target: sharded / whole <= 1.1 (A a list: {ratio(shards, 'two sub-devices, A a list', 'whole device, A a list'):.2f}; "
              f"the same split with A stacked: {ratio(shards, 'two sub-devices, A stacked', 'whole device, A stacked'):.2f})."),
    ])
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
