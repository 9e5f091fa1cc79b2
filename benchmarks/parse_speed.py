"""Checking time against program size: `tinyc check` of n, 2n, 4n and 8n instructions.

    python -m benchmarks.parse_speed [--n 5000] [--repeat 5] [--baseline DIR --rounds 7 [--count 4000]]

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

With `--baseline DIR` (another checkout, e.g. main), the largest program is
also checked side by side: each round starts a fresh process per checkout
(the order alternating; each from a bytecode-compiled copy of its package, as
benchmarks/startup.py runs them) that times the stages one after the other
(lexing, the LALR driver, building the IR, verifying with the warnings), then
`check_source` whole and `tinyc check`'s launch-bounds notes of its program,
CPU time with the collector paused; and a cold
`tinyc check` process per checkout, its CPU time. Medians over the rounds,
and this checkout's time over the baseline's. With `--count N` also each stage's machine
instructions on N instructions under valgrind's callgrind, for both checkouts: a count that
the load of a shared machine does not change (a change of a few percent is lost in the timings'
noise there).
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


STAGES = r"""
import gc, inspect, json, sys, time
from tinyc.analysis.launch_bounds import launch_notes
from tinyc.diagnostics import Source
from tinyc.ir.verifier import verify
from tinyc.lint import WarningOptions
from tinyc.parser import lalr
from tinyc.parser.lexer import TensorLexer
from tinyc.parser.tree_to_ir import ProgramBuilder
from tinyc.pipeline import check_source
text = open(sys.argv[1]).read()
check_source("func @f() {\n}\n")
chained = {"chained": True} if "chained" in inspect.signature(lalr.parse).parameters else {}
gc.collect()
gc.disable()
clock = time.process_time
a = clock(); tokens = TensorLexer().tokens(text, recover=True)
b = clock(); tree = lalr.parse(tokens, **chained)  # as `tinyc.parser.parse` calls it
c = clock(); program = ProgramBuilder(Source(text, "big.ir")).program(tree)
d = clock(); verify(program, warnings=WarningOptions.of(None))
e = clock()
del tokens, tree, program
gc.collect()
f = clock(); program = check_source(text, "big.ir"); g = clock()
launch_notes(program); h = clock()
print(json.dumps({"lex": b - a, "lalr": c - b, "build": d - c, "verify": e - d, "check_source": g - f,
                  "notes": h - g}))
"""
"""One fresh process of `--baseline`: the stages of `check_source` one after the other, then
`check_source` whole (the same program again) and `tinyc check`'s launch-bounds notes of its
program, CPU seconds, the collector paused. The driver is called as the parser calls it (with
`chained=True` where the checkout's driver has it, front22d on)."""

SIDE_BY_SIDE = [("lex", "lexing"), ("lalr", "the LALR driver"), ("build", "building the IR"),
                ("verify", "verifying, with the warnings"), ("check_source", "`check_source`, whole"),
                ("notes", "`tinyc check`'s launch-bounds notes (after `check_source`)"),
                ("cold", "a cold `tinyc check` process (start-up, check, notes, printing)")]


def side_by_side(baseline: Path, instructions: int, rounds: int) -> dict[str, dict[str, float]]:
    """Medians of each row of SIDE_BY_SIDE for the baseline ("before") and this checkout ("after")."""
    import json
    import statistics

    from benchmarks.startup import Checkout

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        path = work / "big.ir"
        path.write_text(source(instructions))
        (work / "stages.py").write_text(STAGES)
        checkouts = [Checkout("before", baseline.resolve(), work), Checkout("after", REPO, work)]
        samples: dict[str, dict[str, list[float]]] = {c.label: {} for c in checkouts}
        for rnd in range(rounds):
            for c in checkouts if rnd % 2 == 0 else checkouts[::-1]:
                found = json.loads(c.run([str(work / "stages.py"), str(path)])[1])
                c.run(["-m", "tinyc.cli", "check", str(path)])
                found["cold"] = c.cpu
                for key, value in found.items():
                    samples[c.label].setdefault(key, []).append(value)
        return {label: {key: statistics.median(values) for key, values in rows.items()}
                for label, rows in samples.items()}


def side_by_side_lines(found: dict[str, dict[str, float]], rounds: int, baseline: Path,
                       instructions: int) -> list[str]:
    """The markdown table of `side_by_side`."""
    lines = ["", f"Side by side with `--baseline {baseline}` (\"before\"; \"after\" is this checkout), "
                 f"{rounds} rounds of fresh processes, interleaved, CPU seconds (medians):", "",
             f"| {instructions + 2:,} instructions | before | after | after / before |",
             "|---|---:|---:|---:|"]
    for key, what in SIDE_BY_SIDE:
        before, after = found["before"][key], found["after"][key]
        lines.append(f"| {what} | {before:.3f} | {after:.3f} | {after / before:.2f} |")
    return lines


COUNT = r"""
import gc, inspect, os, sys
from tinyc.diagnostics import Source
from tinyc.ir.verifier import verify
from tinyc.lint import WarningOptions
from tinyc.parser import lalr
from tinyc.parser.lexer import TensorLexer
from tinyc.parser.tree_to_ir import ProgramBuilder
from tinyc.pipeline import check_source
text, upto = open(sys.argv[1]).read(), int(sys.argv[2])
check_source("func @f() {\n}\n")
chained = {"chained": True} if "chained" in inspect.signature(lalr.parse).parameters else {}
gc.disable()
if upto >= 1: tokens = TensorLexer().tokens(text, recover=True)
if upto >= 2: tree = lalr.parse(tokens, **chained)
if upto >= 3: program = ProgramBuilder(Source(text, "big.ir")).program(tree)
if upto >= 4: verify(program, warnings=WarningOptions.of(None))
os._exit(0)  # (no teardown: its collection would be counted)
"""
"""One process under callgrind: the stages of `check_source` up to number `upto` (0: none)."""


def instruction_counts(checkouts: dict[str, Path], instructions: int) -> dict[str, list[int]]:
    """Machine instructions (callgrind's Ir) of each stage of SIDE_BY_SIDE's first four, per
    checkout: a count the machine's load does not change (string hashes fixed; each stage's
    count is its process's less the previous stage's)."""
    import re

    with tempfile.TemporaryDirectory() as tmp:
        path, script = Path(tmp) / "big.ir", Path(tmp) / "count.py"
        path.write_text(source(instructions))
        script.write_text(COUNT)
        found = {}
        for label, checkout in checkouts.items():
            env = dict(os.environ, PYTHONPATH=str(checkout.resolve()), PYTHONHASHSEED="0")
            totals = []
            for upto in range(5):
                run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                                      sys.executable, str(script), str(path), str(upto)],
                                     env=env, cwd=checkout, capture_output=True, text=True, check=True)
                totals.append(int(re.search(r"Collected : (\d+)", run.stderr).group(1)))
            found[label] = [b - a for a, b in zip(totals, totals[1:])]
        return found


def instruction_count_lines(found: dict[str, list[int]], baseline: Path, instructions: int) -> list[str]:
    """The markdown table of `instruction_counts` (millions)."""
    lines = ["", f"Machine instructions (callgrind's Ir, millions) of each stage of `check_source` of "
                 f"{instructions + 2:,} instructions, `--baseline {baseline}` (\"before\"):", "",
             "| stage | before | after | after / before |", "|---|---:|---:|---:|"]
    before, after = found["before"], found["after"]
    for (_, what), b, a in zip(SIDE_BY_SIDE, before + [sum(before)], after + [sum(after)]):
        lines.append(f"| {what} | {b / 1e6:,.0f} | {a / 1e6:,.0f} | {a / b:.2f} |")
    lines[-1] = lines[-1].replace(SIDE_BY_SIDE[4][1], "the four stages")
    return lines


def cold_check(instructions: int) -> float:
    """Wall time of a fresh `python -m tinyc.cli check FILE` (median of 3)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.ir"
        path.write_text(source(instructions))
        env = dict(os.environ, PYTHONPATH=str(REPO))
        times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "tinyc.cli", "check", str(path)], check=True, env=env,
                           capture_output=True)
            times.append(time.perf_counter() - start)
        return sorted(times)[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.parse_speed", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--out", type=Path, default=HERE)
    p.add_argument("--baseline", type=Path, help="another checkout to check side by side (e.g. main)")
    p.add_argument("--rounds", type=int, default=7, help="rounds of the side-by-side comparison")
    p.add_argument("--count", type=int, metavar="N", help="with --baseline: also count each stage's "
                   "machine instructions on N instructions under valgrind (slow: use ~4000)")
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
    if args.baseline is not None:
        found = side_by_side(args.baseline, 8 * args.n, args.rounds)
        lines += side_by_side_lines(found, args.rounds, args.baseline, 8 * args.n)
        if args.count:
            counts = instruction_counts({"before": args.baseline, "after": REPO}, args.count)
            lines += instruction_count_lines(counts, args.baseline, args.count)
    (args.out / "parse_speed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
