"""A batch split over the CPU's two sub-devices against one launch on the whole device.

Run from the repository root:

    python -m benchmarks.sharding [--rounds 21] [--cases fused,gemm,dg] [--idle] [--json out.json]

Per case, in one process, the Python API a user calls:

  whole       k(*args, batch=N)                       NumPy arguments, the whole device
  split       k(*args, batch=N, device=subs)          subs = tinyc.devices("opencl:cpu", split=True)
  resident    the same with the data already on the device(s): a PreparedCall on
              the whole device, against one PreparedCall per sub-device (its slice)
              submitted and waited for as k(..., device=subs) does
              (sharding.run_together; kernels only)
  tiny        batch 2 (one work-group per sub-device): the fixed cost per launch
  contexts    (fused only) the split with the sub-devices in one shared SYCL context
              (tinyc's choice) against one context per sub-device

Each round runs the pair (whole, split) back to back, the order alternating,
and the ratio split/whole is taken within the round; reported are the
median ratio over the rounds and its quartiles (the spread), with the
median times, and the ratio of the CPU time the process used (all its
threads) over all rounds. This 2-core machine is shared: ratios of adjacent
runs are much steadier than the times themselves, and `--idle` waits before
each round until no other process uses the CPUs (the load it reports is the
whole machine's, this benchmark included).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def fortran(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    return np.asfortranarray(rng.uniform(-1, 1, size=shape).astype(dtype))


def fused_case(rng: np.random.Generator, n: int) -> tuple[str, str, list[Any]]:
    args = [np.float32(0.5), fortran(rng, (16, 8, n)), fortran(rng, (8, 8)), fortran(rng, (8, 16)),
            fortran(rng, (16, 16, n))]
    return "samples/fused_kernel.ir", "fused_kernel", args


def gemm_case(rng: np.random.Generator, n: int) -> tuple[str, str, list[Any]]:
    return "samples/batched_gemm.ir", "batched_gemm", [fortran(rng, (32, 32, n)) for _ in range(3)]


def dg_case(rng: np.random.Generator, n: int) -> tuple[str, str, list[Any]]:
    args = [fortran(rng, (20, 20, 3), np.float64), fortran(rng, (20, 9, n), np.float64),
            fortran(rng, (9, 9, 3, n), np.float64), fortran(rng, (20, 9, n), np.float64)]
    return "samples/dg_volume.ir", "dg_volume", args


CASES: dict[str, tuple[Callable, int]] = {
    "fused": (fused_case, 100_000),
    "gemm": (gemm_case, 10_000),
    "dg": (dg_case, 20_000),
}


def idle_cpus(seconds: float = 0.3) -> float:
    """How many CPUs nobody used over the next `seconds` (Linux /proc/stat; nan elsewhere)."""
    def read() -> tuple[int, int]:
        with open("/proc/stat") as stat:
            ticks = [int(x) for x in stat.readline().split()[1:]]
        return ticks[3] + ticks[4], sum(ticks)  # idle + iowait, all

    try:
        idle0, all0 = read()
        time.sleep(seconds)
        idle1, all1 = read()
    except OSError:
        return float("nan")
    return (os.cpu_count() or 1) * (idle1 - idle0) / max(all1 - all0, 1)


class Idle:
    """Waits before a round until the other processes leave (almost) every CPU free.

    The machine is shared: a round during which another process takes a core
    measures that process. `--idle` waits up to `patience` seconds per round
    for a quiet moment (idle CPUs >= cpu_count - 0.15) and counts the rounds
    that had to run without one."""

    def __init__(self, enabled: bool, patience: float = 30.0):
        self.enabled, self.patience, self.waited, self.loaded = enabled, patience, 0.0, 0

    def __call__(self) -> None:
        if not self.enabled:
            return
        start, need = time.perf_counter(), (os.cpu_count() or 1) - 0.15
        while not idle_cpus() >= need:
            if time.perf_counter() - start > self.patience:
                self.loaded += 1
                break
        self.waited += time.perf_counter() - start


IDLE = Idle(False)


def paired(first: Callable[[], Any], second: Callable[[], Any], rounds: int, warmup: int = 2) -> dict[str, Any]:
    """Wall and CPU times of two functions run back to back, and the per-round ratios second/first.

    CPU time is the process's (every thread: Python and the runtime's workers),
    so its ratio shows the work a split adds whatever else the machine runs."""
    for _ in range(warmup):
        first()
        second()
    wall: tuple[list[float], list[float]] = ([], [])
    cpu: tuple[list[float], list[float]] = ([], [])
    for r in range(rounds):
        if IDLE.enabled:
            IDLE()
            first(), second()  # untimed: the runtime's threads fell asleep while we waited
        for which in ((0, 1) if r % 2 == 0 else (1, 0)):
            start, used = time.perf_counter(), time.process_time()
            (first, second)[which]()
            wall[which].append(time.perf_counter() - start)
            cpu[which].append(time.process_time() - used)
    ratios = sorted(y / x for x, y in zip(*wall))
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    return {"first_ms": statistics.median(wall[0]) * 1e3, "second_ms": statistics.median(wall[1]) * 1e3,
            "ratio": statistics.median(ratios), "q1": q1, "q3": q3, "rounds": rounds,
            "cpu_ratio": sum(cpu[1]) / max(sum(cpu[0]), 1e-9)}


def resident(kernel: Any, args: list[Any], batch: int, subs: Any) -> tuple[Callable, Callable]:
    """Launch-and-wait of data already on the devices: whole device, and both sub-devices at once."""
    from tinyc.runtime import sharding

    whole = kernel.prepare(*args, batch=batch)
    for event in whole.call.staging.events:
        event.wait()
    parts = sharding.plan(kernel.info, batch, subs)
    kernels = sharding.kernels_on(kernel, [p.queue for p in parts])
    prepared = []
    for k, part in zip(kernels, parts):
        sliced = sharding.SliceArguments(kernel.info.params, args, part, False, sharding.HostCopies()).values
        call = k.prepare(*sliced, batch=part.count)
        for event in call.call.staging.events:
            event.wait()
        prepared.append(call)

    def one() -> None:
        whole.launch().wait()

    def split() -> None:
        sharding.run_together([p.launch for p in prepared])

    return one, split


def run_case(name: str, rounds: int, batch: int | None, log: Callable[[str], None]) -> dict[str, Any]:
    import tinyc

    make, default = CASES[name]
    batch = batch or default
    rng = np.random.default_rng(0)
    file, kernel_name, args = make(rng, batch)
    subs = tinyc.devices("opencl:cpu", split=True)
    kernel = tinyc.compile((ROOT / file).read_text(), name=file)[kernel_name]
    out: dict[str, Any] = {"case": name, "kernel": kernel_name, "batch": batch, "devices": list(subs.labels)}
    out["numpy args"] = paired(lambda: kernel(*args, batch=batch),
                               lambda: kernel(*args, batch=batch, device=subs), rounds)
    log(f"{name}: numpy args {_line(out['numpy args'])}")
    one, split = resident(kernel, args, batch, subs)
    out["resident"] = paired(one, split, rounds)
    log(f"{name}: resident   {_line(out['resident'])}")
    small = [a[..., :2] if isinstance(a, np.ndarray) and a.ndim > 2 else a for a in args]
    if name == "fused" or name == "gemm":
        out["tiny"] = paired(lambda: kernel(*small, batch=2), lambda: kernel(*small, batch=2, device=subs),
                             rounds * 5)
        log(f"{name}: batch 2    {_line(out['tiny'])}")
    if name == "fused":
        import dpctl

        own = tinyc.Devices([dpctl.SyclQueue(d, property="in_order") for d in subs])
        out["own contexts"] = paired(lambda: kernel(*args, batch=batch, device=subs),
                                     lambda: kernel(*args, batch=batch, device=own), rounds)
        log(f"{name}: contexts   {_line(out['own contexts']).replace('whole', 'shared').replace('split', 'own')}")
    return out


def _line(r: dict[str, Any]) -> str:
    return (f"whole {r['first_ms']:.3f} ms, split {r['second_ms']:.3f} ms, "
            f"split/whole {r['ratio']:.3f} (quartiles {r['q1']:.3f}-{r['q3']:.3f}, {r['rounds']} rounds), "
            f"CPU time split/whole {r['cpu_ratio']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--json", default=None, help="write the measurements here")
    parser.add_argument("--idle", action="store_true",
                        help="before each round, wait for the other processes to leave the CPUs free")
    options = parser.parse_args()
    IDLE.enabled = options.idle
    start_load = os.getloadavg()
    results = [run_case(name, options.rounds, options.batch, print) for name in options.cases.split(",")]
    load = os.getloadavg()
    print(f"load average {start_load[0]:.2f} at the start, {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")
    if IDLE.enabled:
        print(f"waited {IDLE.waited:.0f} s for idle CPUs; {IDLE.loaded} rounds ran without them")
    if options.json:
        Path(options.json).write_text(json.dumps(
            {"load_start": start_load, "load": load, "idle": IDLE.enabled, "idle_wait_s": IDLE.waited,
             "rounds_without_idle": IDLE.loaded, "results": results}, indent=1))


if __name__ == "__main__":
    main()
