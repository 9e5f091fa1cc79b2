"""The fuzzing campaign: programs, then mutants; a report per failure and the summary line.

Programs come in modules of `per_module` kernels; program i of seed S is
`program_kernel(S, i)`, so any failure is reproduced by its
seed and index alone (`--only I`). They run in worker processes
(tinyc/fuzz/isolate.py) unless `--in-process`, so that a crash of the
device's compiler is counted and reported instead of ending the campaign. Failing kernels are shrunk (unless
`--no-shrink`) and written, with the reason, to the report (stderr or
`--report FILE`). Mutants are made from the generated programs' sources.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import TextIO

from tinyc.fuzz.chunks import Tally, program_kernels, run_chunk, show_progress
from tinyc.fuzz.mutate import check_mutant, mutate

MUTANT_SOURCES = 200
"""Mutants are made from the first MUTANT_SOURCES programs of the seed."""

def run_programs(seed: int, indices: range, per_module: int, tally: Tally, out: TextIO,
                 shrinking: bool, progress: TextIO | None) -> bool:
    """Run programs `indices` of the seed in this process; False if the device hung."""
    started = time.time()
    for at in range(indices.start, indices.stop, per_module):
        if not run_chunk(seed, range(at, min(at + per_module, indices.stop)), tally, out, shrinking):
            return False
        show_progress(progress, tally, len(indices), started)
    return True


def run_mutants(seed: int, count: int, sources: int, tally: Tally, out: TextIO, time_limit: float,
                progress: TextIO | None) -> None:
    """`count` mutants of the first `sources` generated programs."""
    rng = random.Random(f"mutants:{seed}")
    texts = [k.text for k in program_kernels(seed, 0, max(1, sources))]
    started = time.time()
    for n in range(count):
        text = rng.choice(texts)
        for _ in range(rng.choice((1, 1, 2, 3))):
            text = mutate(text, rng)
        outcome = check_mutant(text, time_limit)
        tally.mutants += 1
        tally.mutant_statuses[outcome.status] += 1
        if outcome.status == "internal":
            tally.counts["internal-errors"] += 1
        elif outcome.status == "hang":
            tally.counts["hangs"] += 1
        if outcome.status in ("internal", "hang"):
            out.write(f"--- mutant {outcome.status}: seed {seed} mutant {n}\n{outcome.detail.rstrip()}\n"
                      f"{outcome.text}\n")
            out.flush()
        if progress is not None and (n + 1) % 1000 == 0:
            progress.write(f"[{n + 1}/{count} mutants, {time.time() - started:.0f} s] "
                           f"{dict(tally.mutant_statuses)}\n")
            progress.flush()


def main(argv: list[str] | None = None) -> int:
    from tinyc.fuzz.isolate import run_isolated, work  # noqa: I001 (worker processes)

    parser = argparse.ArgumentParser(prog="python -m tinyc.fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200, help="random programs to run (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the campaign (default 0)")
    parser.add_argument("--start", type=int, default=0, help="index of the first program (default 0)")
    parser.add_argument("--mutants", type=int, default=None,
                        help="mutants to compile (default: 5 per program)")
    parser.add_argument("--per-module", type=int, default=20, help="kernels per compiled module (JIT)")
    parser.add_argument("--no-shrink", action="store_true", help="report failing programs unshrunk")
    parser.add_argument("--only", type=int, default=None, help="run program ONLY of the seed alone")
    parser.add_argument("--in-process", action="store_true",
                        help="run programs in this process (a crash of the device compiler ends the run)")
    parser.add_argument("--report", type=argparse.FileType("w"), default=None,
                        help="write failures here (default: standard error)")
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per mutant compile")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.programs, args.start, 0 if args.mutants is None else args.mutants) < 0 or args.per_module < 1:
        parser.error("--programs, --start, --mutants must be >= 0 and --per-module >= 1")
    shrinking = not args.no_shrink
    indices = range(args.start, args.start + args.programs) if args.only is None else range(args.only, args.only + 1)
    if args.worker:
        return work(args.seed, indices, args.per_module, shrinking)
    out = args.report or sys.stderr
    progress = None if args.quiet else sys.stderr
    tally = Tally()
    run = run_programs if args.in_process else run_isolated
    alive = run(args.seed, indices, args.per_module, tally, out, shrinking, progress)
    mutants = 5 * args.programs if args.mutants is None else args.mutants
    if alive and args.only is None:
        run_mutants(args.seed, mutants, MUTANT_SOURCES, tally, out, args.time_limit, progress)
    covered = ", ".join(f"{k} {v}" for k, v in sorted(tally.features.items()))
    print(f"instructions used: {covered}")
    print(f"program outcomes: {dict(tally.statuses)}; collectives checked against NumPy: "
          f"{tally.collectives_checked}")
    print(f"mutants {tally.mutants}: {dict(tally.mutant_statuses)}")
    print(tally.summary())
    return 1 if tally.failed else 0
