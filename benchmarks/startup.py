"""The toolchain's own speed, side by side with another checkout: first result, check, compile.

    python -m benchmarks.startup --baseline DIR [--rounds 15]   # writes startup.md/.json here

Rows (issue 22), each measured for this checkout's tinyc and, with
`--baseline`, another checkout's, in the same run:

1. **first result**: a fresh `python` process runs `import tinyc`,
   `tinyc.compile(fused_kernel.ir)` and the kernel at batch 1000 on NumPy
   arrays; the time from `import tinyc` to the returned result is taken inside
   the process (interpreter start-up excluded), with its phases. Caches warm:
   one untimed process per checkout fills its own cache directory first.
2. **`tinyc check`** of samples/fused_kernel.ir, cold: the wall time of a
   fresh `python -m tinyc.cli check` process.
3. **`tinyc compile`** of samples/fused_kernel.ir, cold: the same for
   `python -m tinyc.cli compile FILE -o OUT`.
4. **`compile_to_spirv`** of the fused kernel, warm, in process: a fresh
   process compiles it once untimed, then `repeat` times; min and median.
5. **checking 40,000 instructions** (benchmarks/parse_speed.py's program):
   the wall time of a fresh `python -m tinyc.cli check` process, and the
   process's CPU time of `check_source` alone in a warm process, with the
   garbage collector paused by the caller (as `tinyc check` does) and running
   (a library call; before, `check_source` paused it itself).

Two floors are measured in the same rounds: `python -c pass` (under every
cold row) and the runtime's own start-up, a process that imports NumPy and
dpctl, finds the devices and makes a queue (under row 1: tinyc needs all of
it before anything runs on the device).

Each checkout runs from a copy of its `tinyc` package in a temporary directory
with bytecode compiled ahead (as after `pip install`), `PYTHONPATH` pointing at
it. Rounds are interleaved (every row, every checkout, the order of the
checkouts alternating), and the table gives the median over the rounds and,
in parentheses, the minimum: on this shared machine, whatever else runs only
ever adds time. The CPU columns give the median CPU time (user + system, all
threads) of the process, or of the span measured in it: roughly what the wall
time is on an idle machine, and far steadier than it under load.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.compile_speed import _cpu_name, _env, _package_copy  # noqa: E402
from benchmarks.parse_speed import source as big_source  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SAMPLE = REPO / "samples" / "fused_kernel.ir"
BIG = 40_000

FIRST_RESULT = r"""
import sys, time, json
start, start_cpu = time.perf_counter(), time.process_time()
import tinyc
imported = time.perf_counter()
import numpy as np
program = tinyc.compile(open(sys.argv[1]).read())
compiled, compiled_cpu = time.perf_counter(), time.process_time()
n = 1000
rng = np.random.default_rng(7)
A = np.asfortranarray(rng.standard_normal((16, 8, n), dtype=np.float32))
B = np.asfortranarray(rng.standard_normal((8, 8), dtype=np.float32))
C = np.asfortranarray(rng.standard_normal((8, 16), dtype=np.float32))
D = np.asfortranarray(rng.standard_normal((16, 16, n), dtype=np.float32))
D0 = D.copy()
prepared, prepared_cpu = time.perf_counter(), time.process_time()
program["fused_kernel"](np.float32(0.5), A, B, C, D, batch=n)
done, done_cpu = time.perf_counter(), time.process_time()
want = 0.5 * np.einsum("ikn,jk,jl->iln", A.astype(np.float64), B.astype(np.float64), C.astype(np.float64)) + D0
ok = bool(np.allclose(D, want, rtol=1e-4, atol=1e-4 * np.abs(want).max()))
print(json.dumps({"total": (done - start) - (prepared - compiled), "import": imported - start,
                  "compile": compiled - imported, "launch": done - prepared, "correct": ok,
                  "cpu": (done_cpu - start_cpu) - (prepared_cpu - compiled_cpu)}))
"""

RUNTIME_FLOOR = r"""
import time, json
start, start_cpu = time.perf_counter(), time.process_time()
import tinyc.opencl_loader
tinyc.opencl_loader.ensure_opencl_icd()
import numpy, dpctl, dpctl.program, dpctl.memory
imported = time.perf_counter()
device = sorted(dpctl.get_devices(), key=lambda d: d.device_type.name != "gpu")[0]
queue = dpctl.SyclQueue(device, property="in_order")
print(json.dumps({"total": time.perf_counter() - start, "import": imported - start,
                  "cpu": time.process_time() - start_cpu}))
"""

WARM_COMPILE = r"""
import sys, time, json
from tinyc.compiler import compile_to_spirv
text = open(sys.argv[1]).read()
compile_to_spirv(text)
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    compile_to_spirv(text)
    times.append(time.perf_counter() - start)
times.sort()
print(json.dumps({"min": times[0], "median": times[len(times) // 2]}))
"""

CHECK_CPU = r"""
import sys, time, json, gc
from tinyc.compiler import check_source
text = open(sys.argv[1]).read()
check_source("func @f() {\n}\n")
gc.collect()
if sys.argv[2] == "paused":
    gc.disable()
start, start_cpu = time.perf_counter(), time.process_time()
program = check_source(text)
print(json.dumps({"wall": time.perf_counter() - start, "cpu": time.process_time() - start_cpu}))
"""


class Checkout:
    """One tinyc under test: a bytecode-compiled copy of its package and a cache directory."""

    def __init__(self, label: str, tree: Path, work: Path) -> None:
        self.label = label
        self.tree = tree
        self.package = _package_copy(tree, work / label, bytecode=True)
        self.env = _env(self.package, bytecode=True)
        self.env["TINYC_CACHE_DIR"] = str(work / label / "cache")
        self.env.pop("TINYC_BINARY_CACHE", None)
        self.out = work / label / "k.spv"

    def run(self, args: list[str]) -> tuple[float, str]:
        """Wall time of one fresh process and its standard output; raises if it failed.
        `self.cpu` is then the process's CPU time (user + system, all its threads)."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, *args], cwd=self.package, env=self.env,
                              capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        if proc.returncode != 0:
            raise RuntimeError(f"{self.label}: {' '.join(args)[:80]} failed: {proc.stderr.strip()[-400:]}")
        return elapsed, proc.stdout


def rows(big: Path, repeat: int) -> dict[str, Callable[[Checkout], dict[str, float]]]:
    """Each row: how one measurement of one checkout runs (seconds by field)."""
    def first_result(c: Checkout) -> dict[str, float]:
        wall, out = c.run(["-c", FIRST_RESULT, str(SAMPLE)])
        found = json.loads(out)
        if not found.pop("correct"):
            raise RuntimeError(f"{c.label}: the fused kernel's result is wrong")
        return {**found, "process": wall}

    def cli(*args: str) -> Callable[[Checkout], dict[str, float]]:
        def run(c: Checkout) -> dict[str, float]:
            wall = c.run(["-m", "tinyc.cli", *[a.format(out=c.out) for a in args]])[0]
            return {"total": wall, "cpu": c.cpu}
        return run

    def warm_compile(c: Checkout) -> dict[str, float]:
        found = json.loads(c.run(["-c", WARM_COMPILE, str(SAMPLE), str(repeat)])[1])
        return {"total": found["min"], "median": found["median"]}

    def check_cpu(collector: str) -> Callable[[Checkout], dict[str, float]]:
        def run(c: Checkout) -> dict[str, float]:
            found = json.loads(c.run(["-c", CHECK_CPU, str(big), collector])[1])
            return {"total": found["cpu"], "wall": found["wall"]}
        return run

    return {
        "first result (fused kernel, batch 1000, caches warm)": first_result,
        "`tinyc check` fused_kernel.ir, cold": cli("check", str(SAMPLE)),
        "`tinyc compile` fused_kernel.ir, cold": cli("compile", str(SAMPLE), "-o", "{out}"),
        "`compile_to_spirv` fused kernel, warm, in process (min)": warm_compile,
        f"check {BIG} instructions, fresh process": cli("check", str(big)),
        f"check {BIG} instructions, `check_source` CPU, collector paused by the caller": check_cpu("paused"),
        f"check {BIG} instructions, `check_source` CPU, collector running": check_cpu("running"),
    }


def floors(c: Checkout) -> dict[str, Callable[[], dict[str, float]]]:
    """Processes whose time is not tinyc's: the interpreter, the runtime's own start-up."""
    def python() -> dict[str, float]:
        return {"total": c.run(["-c", "pass"])[0], "cpu": c.cpu}

    def runtime() -> dict[str, float]:
        return json.loads(c.run(["-c", RUNTIME_FLOOR])[1])

    return {"floor: `python -c pass`": python,
            "floor: import NumPy + dpctl, get_devices, a queue (in process)": runtime}


def measure(checkouts: list[Checkout], big: Path, rounds: int, repeat: int) -> dict[str, Any]:
    """Every row for every checkout, interleaved round by round."""
    table = rows(big, repeat)
    for c in checkouts:  # warm the caches (device facts, binaries, compiled modules)
        table["first result (fused kernel, batch 1000, caches warm)"](c)
    results: dict[str, dict[str, list[dict[str, float]]]] = {
        name: {c.label: [] for c in checkouts} for name in table}
    floor_rows = floors(checkouts[0])
    results.update({name: {"": []} for name in floor_rows})
    for round_ in range(rounds):
        order = checkouts if round_ % 2 == 0 else checkouts[::-1]
        for name, run in table.items():
            for c in order:
                results[name][c.label].append(run(c))
        for name, run in floor_rows.items():
            results[name][""].append(run())
        print(f"round {round_ + 1}/{rounds} done", file=sys.stderr)
    return results


def summary(samples: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Median and minimum of every field."""
    fields = samples[0].keys()
    return {f: {"median": statistics.median(s[f] for s in samples), "min": min(s[f] for s in samples)}
            for f in fields}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}" if seconds < 0.1 else f"{seconds * 1e3:.0f}"


def markdown(results: dict[str, Any], labels: list[str], meta: dict[str, Any]) -> str:
    head = ["what"] + [f"{label} ms, median (min)" for label in labels]
    if len(labels) == 2:
        head.append(f"{labels[1]} / {labels[0]} (medians)")
    head += [f"{label} CPU ms" for label in labels]
    lines = ["# The toolchain's own speed: first result, check, compile", "",
             " ".join(__doc__.split("\n\n")[0].split()), "",
             f"Measured {meta['date']} on {meta['machine']}, {meta['rounds']} rounds; load average "
             f"{'/'.join(f'{x:.1f}' for x in meta['load_before'])} before, "
             f"{'/'.join(f'{x:.1f}' for x in meta['load_after'])} after. Command: `{meta['command']}`.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, by_label in results.items():
        stats = {label: summary(samples) for label, samples in by_label.items() if samples}
        if "" in stats:
            stats = {label: stats[""] for label in labels}
        cells = [f"{_ms(stats[l]['total']['median'])} ({_ms(stats[l]['total']['min'])})" for l in labels]
        if len(labels) == 2:
            ratio = stats[labels[1]]['total']['median'] / stats[labels[0]]['total']['median']
            cells.append("" if "" in by_label else f"{ratio:.2f}")
        cells += [_ms(stats[l]["cpu"]["median"]) if "cpu" in stats[l] else "" for l in labels]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    first = next(iter(results))
    floor = "floor: import NumPy + dpctl, get_devices, a queue (in process)"
    if results.get(floor, {}).get(""):
        runtime = summary(results[floor][""])["total"]["median"]
        lines += ["", f"Above the runtime's own start-up ({_ms(runtime)} ms, median), the first result "
                      "took " + ", ".join(f"{_ms(summary(results[first][label])['total']['median'] - runtime)}"
                                          f" ms ({label})" for label in labels) + " (medians)."]
    lines += ["", "Phases of the first result (medians, ms): " + "; ".join(
        f"{label}: " + ", ".join(f"{field} {_ms(v['median'])}" for field, v in
                                 summary(results[next(iter(results))][label]).items() if field != "total")
        for label in labels) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__.splitlines()[0])
    p.add_argument("--baseline", type=Path, help="another checkout to measure side by side (e.g. main)")
    p.add_argument("--baseline-label", default="before")
    p.add_argument("--label", default="after")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--repeat", type=int, default=200, help="compiles per warm measurement")
    p.add_argument("--out", type=Path, default=HERE)
    args = p.parse_args(argv)
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "machine": f"{_cpu_name()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "rounds": args.rounds, "load_before": list(os.getloadavg()),
            "command": "python -m benchmarks.startup" + (f" --baseline {args.baseline}" if args.baseline else "")
                       + f" --rounds {args.rounds}"}
    with tempfile.TemporaryDirectory(prefix="tinyc-startup-") as tmp:
        work = Path(tmp)
        big = work / "big.ir"
        big.write_text(big_source(BIG))
        checkouts = ([Checkout(args.baseline_label, args.baseline.resolve(), work)] if args.baseline else [])
        checkouts.append(Checkout(args.label, REPO, work))
        results = measure(checkouts, big, args.rounds, args.repeat)
    meta["load_after"] = list(os.getloadavg())
    labels = [c.label for c in checkouts]
    text = markdown(results, labels, meta)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "startup.md").write_text(text)
    (args.out / "startup.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
