"""Weak scaling over MPI ranks: the fused kernel with a fixed number of elements per rank.

Run from the repository root (needs `pip install '.[mpi]'`):

    python -m benchmarks.mpi_scaling [--per-rank 50000] [--rounds 15] [--json out.json]

The driver starts `mpiexec -n P python -m benchmarks.mpi_scaling --worker`
for P = 1 (on the whole CPU device, and on one half of it: a sub-device,
the resources one rank has when two share the node) and P = 2 (one
sub-device per rank, tinyc.distributed.local_device), and prints the table.
Each worker times, per round and interleaved:

  resident    the data already on each rank's device (DG-style: every rank owns
              its elements and keeps them there), one launch, every rank at once
  rank-local  tinyc.distributed.run(k, ..., scatter=False): each rank launches on its
              own NumPy arrays (copies to and from its device included)
  scattered   tinyc.distributed.run(k, ...) with all data on rank 0: scatter,
              launches, gather

A round's time is the slowest rank's (MPI_MAX of the per-rank times, between
barriers). Weak-scaling efficiency = T(1 rank on a half) / T(P ranks).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODES = ("resident", "rank-local", "scattered")


def fortran(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.asfortranarray(rng.uniform(-1, 1, size=shape).astype(np.float32))


def worker(per_rank: int, rounds: int, half: bool) -> None:
    from mpi4py import MPI

    import tinyc
    from tinyc.runtime.sharding import kernels_on

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    device = tinyc.devices("opencl:cpu", split=True)[0] if half else tinyc.distributed.local_device(comm)
    kernel = tinyc.compile((ROOT / "samples/fused_kernel.ir").read_text(), device=device)["fused_kernel"]
    queue = tinyc.Devices([device]).queues[0]
    rng = np.random.default_rng(rank)
    B, C = fortran(rng, (8, 8)), fortran(rng, (8, 16))
    A, D = fortran(rng, (16, 8, per_rank)), fortran(rng, (16, 16, per_rank))
    prepared = kernels_on(kernel, [queue])[0].prepare(0.5, A, B, C, D, batch=per_rank)
    for event in prepared.call.staging.events:
        event.wait()
    everything = [fortran(rng, (16, 8, per_rank * size)), fortran(rng, (16, 16, per_rank * size))] \
        if rank == 0 else [None, None]

    def scattered() -> None:
        a, d = everything
        tinyc.distributed.run(kernel, 0.5, a, B if rank == 0 else None, C if rank == 0 else None, d,
                              batch=per_rank * size, comm=comm, device=device)

    modes: dict[str, Callable[[], Any]] = {
        "resident": lambda: prepared.launch().wait(),
        "rank-local": lambda: tinyc.distributed.run(kernel, 0.5, A, B, C, D, batch=per_rank, comm=comm,
                                                    scatter=False, device=device),
        "scattered": scattered,
    }
    times: dict[str, list[float]] = {m: [] for m in MODES}
    for r in range(rounds + 2):
        for mode in MODES[r % 3:] + MODES[:r % 3]:
            comm.Barrier()
            start = time.perf_counter()
            modes[mode]()
            elapsed = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
            if r >= 2:  # two warm-up rounds
                times[mode].append(elapsed)
    if rank == 0:
        label = tinyc.Devices([device]).labels[0]
        print(json.dumps({"ranks": size, "device": label, "half": half, "per_rank": per_rank,
                          "ms": {m: statistics.median(v) * 1e3 for m, v in times.items()},
                          "spread": {m: [min(v) * 1e3, max(v) * 1e3] for m, v in times.items()}}))


def mpiexec() -> str:
    path = os.path.join(sysconfig.get_path("scripts"), "mpiexec")
    return path if os.path.exists(path) else "mpiexec"


def drive(per_rank: int, rounds: int) -> list[dict[str, Any]]:
    rows = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for ranks, half in ((1, False), (1, True), (2, False)):
        command = [mpiexec(), "-n", str(ranks), sys.executable, "-m", "benchmarks.mpi_scaling", "--worker",
                   "--per-rank", str(per_rank), "--rounds", str(rounds)] + (["--half"] if half else [])
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd=ROOT)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    base = next(r for r in rows if r["ranks"] == 1 and r["half"])
    lines = ["| ranks | device of each rank | elements per rank | " + " | ".join(f"{m} ms" for m in MODES)
             + " | efficiency (resident, rank-local, scattered) |",
             "|---|---|---|" + "---|" * len(MODES) + "---|"]
    for r in rows:
        eff = ", ".join(f"{base['ms'][m] / r['ms'][m]:.2f}" for m in MODES)
        what = "half the CPU (sub-device)" if r["half"] or r["ranks"] > 1 else "the whole CPU"
        lines.append(f"| {r['ranks']} | {what} | {r['per_rank']} | "
                     + " | ".join(f"{r['ms'][m]:.1f}" for m in MODES) + f" | {eff} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-rank", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--half", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", default=None)
    options = parser.parse_args()
    if options.worker:
        worker(options.per_rank, options.rounds, options.half)
        return
    rows = drive(options.per_rank, options.rounds)
    print(table(rows))
    load = os.getloadavg()
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if options.json:
        Path(options.json).write_text(json.dumps({"load": load, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
