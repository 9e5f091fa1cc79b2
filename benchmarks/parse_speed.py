"""Checking time against program size: `tinyc check` of n, 2n, 4n and 8n instructions.

    python -m benchmarks.parse_speed [--n 5000] [--repeat 5]

One function of N instructions (a mix of arithmetic, loads, stores,
subviews, comparisons and casts, each using earlier values, as a generated
kernel would) is checked (`tinyc.compiler.check_source`: lex, parse, build
the IR, verify) for N = n, 2n, 4n, 8n. The sizes are timed interleaved
(round-robin, a fresh parse each time), `repeat` rounds, and the median is
reported with the CPU time per instruction (the process's own, which other
work on a shared machine disturbs less than the wall clock; both are shown):
a linear-time front end keeps that flat. Each check runs with the garbage
collector paused, as `tinyc check` runs it (the library leaves the collector
alone; the largest size is also timed with it running), and garbage is
collected untimed before each check, so a run does not pay for the previous
one's discarded program.
Also timed: a cold `python -m tinyc.cli check FILE` of the largest program
(start-up included), as a user runs it. Writes parse_speed.md next to
this file (or to --out).
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

BODY = [
    "  %x{i} = arith.add %a, %b : f32",
    "  %y{i} = arith.mul %x{i}, %a : f32",
    "  %v{i} = load %A[%i, %j] : f32",
    "  store %y{i}, %A[%j, %i]",
    "  %s{i} = subview %A[%i:4, :] : memref<f32x4x8,strided<1,16>>",
    "  %c{i} = cmp.lt %x{i}, %v{i} : bool",
    "  %k{i} = cast %y{i} : f64",
    "  %n{i} = arith.add %i, %j : index",
]


def source(instructions: int) -> str:
    """One function with `instructions` instructions (in groups of len(BODY))."""
    lines = ["func @big(%a: f32, %b: f32, %A: memref<f32x16x8>) {",
             "  %i = constant 1 : index", "  %j = constant 2 : index"]
    for i in range(instructions // len(BODY)):
        lines += [line.format(i=i) for line in BODY]
    return "\n".join(lines) + "\n}\n"


def measure(n: int, repeat: int) -> list[dict]:
    from tinyc.compiler import check_source

    sizes = [n, 2 * n, 4 * n, 8 * n]
    texts = {s: source(s) for s in sizes}
    check_source(texts[n])  # imports and tables loaded
    times: dict[int, list[float]] = {s: [] for s in sizes}
    cpu: dict[int, list[float]] = {s: [] for s in sizes}
    collected: list[float] = []
    for rnd in range(repeat):
        for s in sizes[rnd % 4:] + sizes[:rnd % 4]:
            gc.collect()  # untimed: the last size's discarded program is not this one's cost
            gc.disable()  # as `tinyc check` runs (tinyc/collector.py)
            start, start_cpu = time.perf_counter(), time.process_time()
            program = check_source(texts[s])
            times[s].append(time.perf_counter() - start)
            cpu[s].append(time.process_time() - start_cpu)
            gc.enable()
            del program
        gc.collect()
        start_cpu = time.process_time()
        program = check_source(texts[sizes[-1]])  # the collector running, as from Python
        collected.append(time.process_time() - start_cpu)
        del program
    rows = []
    for s in sizes:
        median = sorted(times[s])[len(times[s]) // 2]
        median_cpu = sorted(cpu[s])[len(cpu[s]) // 2]
        rows.append({"instructions": s + 2, "seconds": median, "cpu_seconds": median_cpu,
                     "us_per_instruction": median_cpu / (s + 2) * 1e6})
    rows[-1]["cpu_seconds_collector_running"] = sorted(collected)[len(collected) // 2]
    return rows


def cold_check(instructions: int) -> float:
    """Wall time of a fresh `python -m tinyc.cli check FILE` (median of 3)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.ir"
        path.write_text(source(instructions))
        env = dict(os.environ, PYTHONPATH=str(REPO))
        times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "tinyc.cli", "check", str(path)], check=True, env=env)
            times.append(time.perf_counter() - start)
        return sorted(times)[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.parse_speed", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--out", type=Path, default=HERE)
    args = p.parse_args(argv)
    rows = measure(args.n, args.repeat)
    cold = cold_check(8 * args.n)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = ["# Checking time against program size", "",
             f"`python -m benchmarks.parse_speed --n {args.n}`: `check_source` (lex, parse, build, "
             f"verify) of one function, the collector paused as `tinyc check` runs, sizes timed "
             f"interleaved, median of {args.repeat} "
             f"(load average {load:.1f} while measuring).", "",
             "| instructions | CPU time (s) | wall time (s) | CPU µs per instruction | vs n |",
             "|---:|---:|---:|---:|---:|"]
    base = rows[0]["us_per_instruction"]
    lines += [f"| {r['instructions']} | {r['cpu_seconds']:.3f} | {r['seconds']:.3f} | "
              f"{r['us_per_instruction']:.1f} | {r['us_per_instruction'] / base:.2f} |" for r in rows]
    lines += ["", f"A cold `python -m tinyc.cli check` of the {rows[-1]['instructions']}-instruction "
                  f"file (interpreter start-up and imports included): {cold:.2f} s. With the "
                  f"collector running (`check_source` called from Python): "
                  f"{rows[-1]['cpu_seconds_collector_running']:.3f} s CPU."]
    (args.out / "parse_speed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
