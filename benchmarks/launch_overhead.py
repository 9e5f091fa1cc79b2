"""Launch overhead of `Kernel.__call__` against submitting the same SPIR-V through dpctl.

Run from the repository root:

    python -m benchmarks.launch_overhead [--batch 100000] [--repeat 30] [--cases fused,gemm]

Two kernels at one batch size: the spec's fused kernel (samples/fused_kernel.ir,
A a group of 16×8 matrices) and a batched 8×8 gemm
(benchmarks/kernels/gemm_nn_f32_8.ir; `--gemm-source samples/batched_gemm.ir`
for the 32×32 sample). For each, in one process, on tinyc's queue:

  (a) raw     `queue.submit_async(kernel, packed, ...).wait()` of the same SPIR-V
              (built separately) with USM arguments packed once by hand; also
              (a') the same with the kernel object of tinyc's own build, which
              separates the launch path from differences between two builds
  (b) usm     `kernel(*args, batch=N)` with USM (device-resident) arguments; for
              the group, a list of N USM views (and a tuple, and the stacked
              (16, 8, N) USM array)
  (c) numpy   `kernel(*args, batch=N)` with NumPy arguments (for the group: a
              list of N separate (16, 8) arrays, and the stacked NumPy array)
  (d) by hand what (c) must do anyway, written with dpctl: gather the group's
              members into one host buffer (np.concatenate), copy every input
              host->device into allocations made once, submit, copy the
              written array back, wait

Each line is the median (and the minimum) over `--repeat` rounds; inside a
group of variants the order rotates every round, so load on this shared
machine hits them alike. Ratios are (b)/(a) (target < 1.05) and (c)/(d) (the
overhead over the transfers a NumPy caller needs anyway).

Because wall-clock ratios move by several percent with the load of this
2-core machine, the (b) variants are also timed with the submission
replaced by a no-op (`python us`): the launch path's own work per call,
which is what (b) - (a) measures when the machine is quiet.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def interleaved(fns: dict[str, Callable[[], Any]], rounds: int, warmup: int = 2) -> dict[str, tuple[float, float]]:
    """(median, minimum) seconds of each function, run round-robin with a rotating order."""
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            start = time.perf_counter()
            fns[name]()
            samples[name].append(time.perf_counter() - start)
    return {name: (statistics.median(v), min(v)) for name, v in samples.items()}


class _Done:
    def wait(self) -> None:
        pass


def python_time(k: Any, fns: dict[str, Callable[[], Any]], rounds: int = 300) -> dict[str, float]:
    """Median seconds per call of the (b) variants with the submission a no-op (no device work):
    `k.submit`, and the submitter every launch goes through (tinyc/runtime/submit.py)."""
    out = {}
    k.submit = lambda *args, **kwargs: _Done()  # an instance attribute shadows the method
    submitter = getattr(k, "_submitter", None)
    if submitter is not None:
        submitter.submit_raw = lambda *args, **kwargs: 0
        submitter.finish = lambda event: None
    try:
        for name, fn in fns.items():
            fn()
            samples = []
            for _ in range(rounds):
                start = time.perf_counter()
                fn()
                samples.append(time.perf_counter() - start)
            out[name] = statistics.median(samples)
    finally:
        del k.submit
        if submitter is not None:
            del submitter.submit_raw, submitter.finish
    return out


def fortran(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.asfortranarray(rng.uniform(-1, 1, size=shape).astype(np.float32))


class Setup:
    """Queue, tinyc kernel and the same SPIR-V built raw."""

    def __init__(self, source: Path, name: str):
        import dpctl.program

        import tinyc
        from tinyc.runtime.device import select_queue

        self.queue = select_queue()
        program = tinyc.compile(source.read_text(), name=str(source), device=self.queue)
        self.kernel = program[name]
        self.raw = dpctl.program.create_program_from_spirv(self.queue, program.spirv).get_sycl_kernel(name)
        x, y = self.kernel.info.work_group_size
        self.local = [1, y, x]

    def submit(self, args: list, batch: int, after: list | None = None, kernel: Any = None) -> Any:
        _, y, x = self.local
        return self.queue.submit_async(kernel or self.raw, args, [batch, y, x], self.local, after)

    def device(self, nbytes: int) -> Any:
        import dpctl.memory

        return dpctl.memory.MemoryUSMDevice(nbytes, queue=self.queue)


def fused(batch: int, repeat: int, rng: np.random.Generator) -> list[tuple[str, dict[str, float]]]:
    from benchmarks.device import UsmArray, pointer_table

    s = Setup(ROOT / "samples" / "fused_kernel.ir", "fused_kernel")
    q, k, alpha = s.queue, s.kernel, np.float32(0.5)
    A, B, C, D = fortran(rng, (16, 8, batch)), fortran(rng, (8, 8)), fortran(rng, (8, 16)), fortran(rng, (16, 16, batch))
    uA, uB, uC, uD = (UsmArray(q, x) for x in (A, B, C, D))
    usm_list = [uA.view(g * 128, (16, 8)) for g in range(batch)]
    usm_tuple = tuple(usm_list)
    table = pointer_table(q, uA.address + 512 * np.arange(batch, dtype=np.uint64))
    packed = [ctypes.c_float(alpha), table, ctypes.c_int64(batch), uB.memory, uC.memory, uD.memory,
              ctypes.c_int64(batch)]
    members = [np.asfortranarray(A[:, :, g]) for g in range(batch)]  # separate arrays

    # by hand: allocations and the pointer table made once
    hA, dA, dB, dC, dD = np.empty((16, 8 * batch), np.float32, order="F"), *(
        s.device(x.nbytes) for x in (A, B, C, D))
    hand_table = pointer_table(q, dA.__sycl_usm_array_interface__["data"][0]
                               + 512 * np.arange(batch, dtype=np.uint64))
    hand_args = [ctypes.c_float(alpha), hand_table, ctypes.c_int64(batch), dB, dC, dD, ctypes.c_int64(batch)]

    def by_hand(gather: bool) -> Callable[[], None]:
        def run() -> None:
            source = np.concatenate(members, axis=1, out=hA) if gather else A
            copies = [q.memcpy_async(dA, source, A.nbytes), q.memcpy_async(dB, B, B.nbytes),
                      q.memcpy_async(dC, C, C.nbytes), q.memcpy_async(dD, D, D.nbytes)]
            done = s.submit(hand_args, batch, copies)
            q.memcpy_async(D, dD, D.nbytes, [done]).wait()
        return run

    check_fused(k, alpha, A, B, C, D, members)
    rows = []
    usm = {
        "(a) raw submit": lambda: s.submit(packed, batch).wait(),
        "(a') raw submit, tinyc's kernel object": lambda: s.submit(packed, batch, kernel=k.sycl_kernel).wait(),
        "(b) usm, group as list": lambda: k(alpha, usm_list, uB, uC, uD, batch=batch),
        "(b) usm, group as tuple": lambda: k(alpha, usm_tuple, uB, uC, uD, batch=batch),
    }
    if stacked_supported(k, uA):
        usm["(b) usm, group as stacked array"] = lambda: k(alpha, uA, uB, uC, uD, batch=batch)
    rows.append(("usm", interleaved(usm, repeat)))
    rows.append(("python", python_time(k, {n: f for n, f in usm.items() if n.startswith("(b)")})))
    host = {
        "(d) by hand, gather + copies": by_hand(True),
        "(c) numpy, group as list": lambda: k(alpha, members, B, C, D, batch=batch),
        "(d) by hand, stacked A": by_hand(False),
    }
    if stacked_supported(k, A):
        host["(c) numpy, group as stacked array"] = lambda: k(alpha, A, B, C, D, batch=batch)
    rows.append(("numpy", interleaved(host, max(5, repeat // 3))))
    return rows


def stacked_supported(k: Any, array: Any) -> bool:
    """Does this tinyc accept a stacked array for a group (a later extension)?"""
    from tinyc.diagnostics import LaunchError

    try:
        k.prepare(np.float32(0), array, np.zeros((8, 8), np.float32, order="F"),
                  np.zeros((8, 16), np.float32, order="F"), np.zeros((16, 16, 1), np.float32, order="F"), batch=1)
        return True
    except LaunchError:
        return False


def check_fused(k: Any, alpha: np.float32, A, B, C, D, members) -> None:
    """One call on the first batch entries against NumPy (correctness before timing)."""
    n = min(64, A.shape[2])
    d = D[:, :, :n].copy(order="F")
    k(alpha, members[:n], B, C, d, batch=n)
    want = D[:, :, :n] + alpha * np.einsum("ikb,lk,lj->ijb", A[:, :, :n], B, C)
    np.testing.assert_allclose(d, want, rtol=1e-4, atol=1e-4)


def gemm(batch: int, repeat: int, rng: np.random.Generator, source: Path) -> list[tuple[str, dict[str, float]]]:
    from benchmarks.device import UsmArray

    text = source.read_text()
    name = text.split("func @", 1)[1].split("(", 1)[0]
    s = Setup(source, name)
    q, k = s.queue, s.kernel
    n = k.info.params[0].type.shape[0]
    A, B, C = fortran(rng, (n, n, batch)), fortran(rng, (n, n, batch)), np.zeros((n, n, batch), np.float32, order="F")
    uA, uB, uC = (UsmArray(q, x) for x in (A, B, C))
    packed = [uA.memory, ctypes.c_int64(batch), uB.memory, ctypes.c_int64(batch), uC.memory, ctypes.c_int64(batch)]
    dA, dB, dC = (s.device(x.nbytes) for x in (A, B, C))
    hand_args = [dA, ctypes.c_int64(batch), dB, ctypes.c_int64(batch), dC, ctypes.c_int64(batch)]

    def by_hand() -> None:
        copies = [q.memcpy_async(dA, A, A.nbytes), q.memcpy_async(dB, B, B.nbytes), q.memcpy_async(dC, C, C.nbytes)]
        done = s.submit(hand_args, batch, copies)
        q.memcpy_async(C, dC, C.nbytes, [done]).wait()

    k(A, B, C, batch=batch)
    m = min(64, batch)
    np.testing.assert_allclose(C[:, :, :m], np.einsum("ikb,kjb->ijb", A[:, :, :m], B[:, :, :m]), rtol=1e-4, atol=1e-4)
    usm = {"(a) raw submit": lambda: s.submit(packed, batch).wait(),
           "(a') raw submit, tinyc's kernel object": lambda: s.submit(packed, batch, kernel=k.sycl_kernel).wait(),
           "(b) usm": lambda: k(uA, uB, uC, batch=batch)}
    host = {"(d) by hand, copies": by_hand, "(c) numpy": lambda: k(A, B, C, batch=batch)}
    return [("usm", interleaved(usm, repeat)), ("numpy", interleaved(host, max(5, repeat // 3))),
            ("python", python_time(k, {"(b) usm": usm["(b) usm"]}))]


def report(title: str, rows: list[tuple[str, dict[str, tuple[float, float]]]]) -> list[str]:
    """Markdown lines: every variant with its ratios to (a) or to the first (d)."""
    out = [f"**{title}**", "", "| variant | median ms | min ms | ratio of medians | ratio of minima |",
           "|---|---|---|---|---|"]
    python = [(name, t) for kind, times in rows if kind == "python" for name, t in times.items()]
    rows = [row for row in rows if row[0] != "python"]
    for kind, times in rows:
        base_name = next(n for n in times if n.startswith("(a)" if kind == "usm" else "(d)"))
        (base, base_min), tag = times[base_name], base_name.split()[0]
        for name, (t, t_min) in times.items():
            ratios = f"{t / base:.3f} vs {tag} | {t_min / base_min:.3f} vs {tag}" if name != base_name else "1 | 1"
            out.append(f"| {name} | {t * 1e3:.2f} | {t_min * 1e3:.2f} | {ratios} |")
    if python:
        out += ["", "| launch path alone (submit replaced by a no-op) | python us per call |", "|---|---|"]
        out += [f"| {name} | {t * 1e6:.1f} |" for name, t in python]
    return out + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--cases", default="fused,gemm")
    parser.add_argument("--gemm-source", type=Path, default=ROOT / "benchmarks" / "kernels" / "gemm_nn_f32_8.ir")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    lines = []
    cases = args.cases.split(",")
    if "fused" in cases:
        lines += report(f"fused kernel, batch {args.batch}", fused(args.batch, args.repeat, rng))
    if "gemm" in cases:
        title = f"batched gemm ({args.gemm_source.name}), batch {args.batch}"
        lines += report(title, gemm(args.batch, args.repeat, rng, args.gemm_source))
    import os

    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print("\n".join(lines + [f"load average (1/5/15 min) at the end: {load}"]))


if __name__ == "__main__":
    main()
