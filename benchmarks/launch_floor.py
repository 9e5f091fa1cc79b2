"""What a launch costs on the CPU device, against NumPy calls that take less.

Run from the repository root:

    python -m benchmarks.launch_floor [--repeat 200] [--out benchmarks]

Issue 20 asks for no contraction below 0.8x the fastest NumPy way at 2,000 entries.
Some of NumPy's ways finish in less time than one launch of any kernel takes. This
benchmark measures the launch floor in one process and sets it beside those NumPy calls.

1. **The floor, hot.** A tinyc.einsum call of one batch entry (`bij,bjk->bik`, 16x8 by
   8x12), called back to back: the OpenCL runtime's enqueue and wait plus tinyc's call
   path (its kernel does almost nothing).
2. **The floor after idle.** The same call after the calling thread computed for
   0.1-20 ms without the device. The runtime's worker threads stop spinning about
   1 ms after a kernel and go to sleep; the next launch wakes them.
3. **NumPy's fast ways** at 2,000 entries: `x.T @ y` (a weight gradient), `np.dot` of the
   flattened operands (a Frobenius product), `np.einsum('bi,bi->b')`, and
   `x.sum(axis=...)`.
4. **The BLAS thread that keeps spinning.** CPU time the process spends during a 50 ms
   `time.sleep` right after a call: after a multi-threaded NumPy BLAS call, OpenBLAS keeps
   a thread spinning on one of the cores. After a tinyc call the runtime's threads stop
   after about 1 ms.
5. **What the spin costs a kernel.** A two-core kernel (`ikb,kjb->ijb`, 16x8 by 8x12 at
   20,000 entries) timed in a loop of its own calls, and timed right after a NumPy BLAS
   call. Interleaved benchmarks (einsum_suite.py's "vs" columns) measure the second case.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from benchmarks.compile_speed import _cpu_name


def _median_us(run: Callable[[], Any], repeat: int, before: Callable[[], Any] | None = None) -> float:
    """Median microseconds of `run`, each call preceded (untimed) by `before`."""
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def _busy(ms: float) -> Callable[[], None]:
    """The calling thread computing for `ms` milliseconds (no device, no BLAS)."""
    def run() -> None:
        end = time.perf_counter() + ms * 1e-3
        while time.perf_counter() < end:
            pass
    return run


def _cpu_during_sleep(after: Callable[[], Any], rounds: int = 5, seconds: float = 0.05) -> float:
    """Milliseconds of the process's CPU time during a sleep that follows `after` (median)."""
    spent = []
    for _ in range(rounds):
        after()
        start = time.process_time()
        time.sleep(seconds)
        spent.append(time.process_time() - start)
    return float(np.median(spent)) * 1e3


def _check(got: Any, subscripts: str, operands: list[np.ndarray]) -> None:
    """tinyc's result against np.einsum in float64, within the summation bound (K + 2)·eps·Σ|terms|
    for K terms per entry: a benchmark of wrong results measures nothing."""
    wide = [x.astype(np.float64) for x in operands]
    want = np.einsum(subscripts, *wide)
    magnitude = np.einsum(subscripts, *[np.abs(x) for x in wide])
    inputs, output = subscripts.split("->")
    sizes = {label: n for term, x in zip(inputs.split(","), operands) for label, n in zip(term, x.shape)}
    terms = int(np.prod([n for label, n in sizes.items() if label not in output]))
    bound = (terms + 2) * float(np.finfo(np.float32).eps) * magnitude
    if not np.all(np.abs(np.asarray(got, np.float64) - want) <= bound):
        raise AssertionError(f"tinyc.einsum({subscripts!r}) differs from NumPy beyond the summation bound")


def measure(repeat: int) -> dict[str, Any]:
    import tinyc

    rng = np.random.default_rng(0)
    one = [rng.standard_normal((1, 16, 8)).astype(np.float32), rng.standard_normal((1, 8, 12)).astype(np.float32)]
    floor = lambda: tinyc.einsum("bij,bjk->bik", *one)   # noqa: E731
    _check(floor(), "bij,bjk->bik", one)
    for _ in range(20):
        floor()
    rows: dict[str, Any] = {"floor_hot": _median_us(floor, repeat)}
    rows["floor_after_idle"] = {ms: _median_us(floor, max(repeat // 4, 20), _busy(ms)) for ms in (0.1, 1, 5, 20)}

    n = 2000
    x, y = rng.standard_normal((n, 16)).astype(np.float32), rng.standard_normal((n, 16)).astype(np.float32)
    t = rng.standard_normal((n, 16, 12)).astype(np.float32)
    ways = [  # NumPy's way, its contraction and operands
        ("`x.T @ y` (`bi,bj->ij`)", lambda: x.T @ y, "bi,bj->ij", [x, y]),
        ("`np.dot` of the flat operands (`bi,bi->`)", lambda: np.dot(x.ravel(), y.ravel()), "bi,bi->", [x, y]),
        ("`np.einsum('bi,bi->b')`", lambda: np.einsum("bi,bi->b", x, y), "bi,bi->b", [x, y]),
        ("`t.sum(axis=0)` (`bij->ij`)", lambda: t.sum(axis=0), "bij->ij", [t]),
        ("`t.sum(axis=(1, 2))` (`bij->b`)", lambda: t.sum(axis=(1, 2)), "bij->b", [t]),
    ]
    numpy_ways = {label: way for label, way, _, _ in ways}
    tinyc_ways = {label: (lambda s=s, ops=ops: tinyc.einsum(s, *ops)) for label, _, s, ops in ways}
    for label, _, subscripts, operands in ways:
        _check(tinyc_ways[label](), subscripts, operands)
        _check(numpy_ways[label](), subscripts, operands)
    for run in [*numpy_ways.values(), *tinyc_ways.values()]:
        for _ in range(10):
            run()
    rows["numpy_2000"] = {k: (_median_us(f, repeat), _median_us(tinyc_ways[k], repeat)) for k, f in numpy_ways.items()}

    big = rng.standard_normal((512, 512)).astype(np.float32)
    blas = lambda: big @ big   # noqa: E731
    a = rng.standard_normal((16, 8, 20000)).astype(np.float32)
    b = rng.standard_normal((8, 12, 20000)).astype(np.float32)
    kernel = lambda: tinyc.einsum("ikb,kjb->ijb", a, b)   # noqa: E731
    _check(kernel(), "ikb,kjb->ijb", [a, b])
    for _ in range(5):
        blas()
        kernel()
    rows["spin_ms"] = {"after a NumPy BLAS call (512x512 matmul)": _cpu_during_sleep(blas),
                       "after a tinyc call": _cpu_during_sleep(kernel),
                       "after nothing": _cpu_during_sleep(lambda: None)}
    rows["kernel_us"] = {"in a loop of its own calls": _median_us(kernel, max(repeat // 4, 20)),
                         "right after a NumPy BLAS call": _median_us(kernel, max(repeat // 4, 20), blas)}
    return rows


def report(rows: dict[str, Any]) -> str:
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "# The launch floor against NumPy's fastest small calls",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {platform.machine()} ({_cpu_name()}), "
        f"{os.cpu_count()} CPUs; load average {load}. Command: `python -m benchmarks.launch_floor`. "
        "Medians of calls in one process (benchmarks/launch_floor.py says what each row is).",
        "",
        "| what | µs per call |",
        "|---|---:|",
        f"| tinyc.einsum, 1 entry, back to back (the floor, hot) | {rows['floor_hot']:.1f} |",
    ]
    lines += [f"| the same after {ms:g} ms of computing without the device | {us:.1f} |"
              for ms, us in rows["floor_after_idle"].items()]
    lines += ["", "At 2,000 entries (f32, C order):", "",
              "| NumPy's way | NumPy µs | tinyc.einsum µs | NumPy / tinyc |", "|---|---:|---:|---:|"]
    lines += [f"| {k} | {np_us:.1f} | {t_us:.1f} | {np_us / t_us:.2f} |"
              for k, (np_us, t_us) in rows["numpy_2000"].items()]
    lines += ["", "CPU time of the process during a 50 ms sleep that follows a call:", "",
              "| after | CPU ms in the sleep |", "|---|---:|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in rows["spin_ms"].items()]
    loop, after = rows["kernel_us"]["in a loop of its own calls"], rows["kernel_us"]["right after a NumPy BLAS call"]
    lines += ["", "`ikb,kjb->ijb` (16x8 by 8x12, 20,000 entries), a kernel on both cores:", "",
              "| timed | µs per call |", "|---|---:|"]
    lines += [f"| {k} | {v:.0f} |" for k, v in rows["kernel_us"].items()]
    lines += ["", f"Right after a BLAS call the kernel takes {after / loop:.2f}x its time in a loop of its own calls.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.launch_floor", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--out", type=Path, default=None, help="directory for launch_floor.md")
    args = parser.parse_args(argv)
    text = report(measure(args.repeat))
    print(text)
    if args.out is not None:
        (args.out / "launch_floor.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
