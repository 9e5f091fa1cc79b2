"""Warm compile_to_spirv, CPU time per stage: this checkout against another, interleaved.

    python -m benchmarks.compile_speed_warm --baseline DIR [--rounds 12] [--batch 20] [FILE ...]

Each checkout's tinyc runs in its own warm interpreter (compile_speed's
WarmServer; one untimed compile first: imports, tables, first-use caches). In
each round every interpreter compiles the file `batch` times in a row
(`compile_to_spirv(..., validate=False)`), the interpreters taking turns, the
order alternating round by round. Times are CPU time (`time.process_time`,
which the interpreters put in place of the pipeline's clock, so
`CompileResult.timings` is CPU time per stage): on a machine shared with other
work, wall time counts the others' turns too.
Reported per stage (and for the whole call, which also makes the stage
texts and the result, and pays the garbage collections): the minimum and median
over all compiles; and the ratio now/baseline of each round's medians, whose
median is the headline.
The table goes to benchmarks/compile_speed_warm.md (`--out`; its "## Notes" part
is kept).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

from benchmarks.compile_speed import STAGES, WarmServer

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
NOTES = "## Notes"
"""The output file's hand-written part from this heading on is kept when it is regenerated."""


def _total(run: dict[str, float]) -> float:
    return sum(run.get(stage, 0.0) for stage in STAGES)


def measure(trees: list[Path], path: Path, rounds: int, batch: int) -> list[list[list[dict[str, float]]]]:
    """runs[tree][round] = the stage times of that round's compiles."""
    servers = [WarmServer(tree) for tree in trees]
    runs: list[list[list[dict[str, float]]]] = [[] for _ in trees]
    try:
        for round_ in range(rounds):
            order = range(len(trees)) if round_ % 2 == 0 else reversed(range(len(trees)))
            for k in order:
                runs[k].append(servers[k].cpu_runs(path, batch))
    finally:
        for server in servers:
            server.close()
    return runs


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def markdown(names: list[str], path: str, runs: list[list[list[dict[str, float]]]], batch: int) -> str:
    """Per stage min / median of each checkout, then the round-by-round ratios."""
    lines = [f"## Warm `compile_to_spirv` of {path}, CPU time", "", " ".join(__doc__.split("\n\n")[2].split()), "",
             f"Measured {datetime.datetime.now():%Y-%m-%d %H:%M}, load average "
             f"{'/'.join(f'{x:.1f}' for x in os.getloadavg())}; {len(runs[0])} rounds of {batch} compiles each.",
             "", "| stage | " + " | ".join(f"{n} min ms | {n} median ms" for n in names) + " |",
             "|---|" + "---|---|" * len(names)]
    flat = [[run for round_ in tree for run in round_] for tree in runs]
    labels = {"total": "**source → SPIR-V** (the stages)", "call": "the whole call (stage texts, results, GC too)"}
    for stage in (*STAGES, "total", "call"):
        cells = []
        for tree in flat:
            values = [_total(r) if stage == "total" else r.get(stage, 0.0) for r in tree]
            cells += [_ms(min(values)), _ms(statistics.median(values))]
        lines.append(f"| {labels.get(stage, stage)} | " + " | ".join(cells) + " |")
    if len(runs) == 2:
        for what, key in (("the stages' total", _total), ("the whole call", lambda r: r["call"])):
            ratios = [statistics.median(map(key, now)) / statistics.median(map(key, before))
                      for now, before in zip(runs[0], runs[1])]
            lines += ["", f"Ratio {names[0]} / {names[1]} of each round's median of {what}: "
                          + ", ".join(f"{r:.2f}" for r in ratios)
                          + f"; median **{statistics.median(ratios):.2f}**."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.compile_speed_warm", description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="*", type=Path, help="sources (default: samples/fused_kernel.ir)")
    p.add_argument("--baseline", type=Path, help="another checkout to compare with")
    p.add_argument("--label", default="now", help="what to call this checkout")
    p.add_argument("--baseline-label", default="baseline", help="what to call the baseline")
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--batch", type=int, default=20)
    p.add_argument("--out", type=Path, default=HERE / "compile_speed_warm.md")
    args = p.parse_args(argv)
    trees = [REPO] + ([args.baseline.resolve()] if args.baseline else [])
    names = [args.label] + ([args.baseline_label] if args.baseline else [])
    sections = []
    for path in [f.resolve() for f in args.files] or [REPO / "samples/fused_kernel.ir"]:
        shown = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
        sections.append(markdown(names, shown, measure(trees, path, args.rounds, args.batch), args.batch))
    text = "\n".join(sections)
    print(text)
    kept = args.out.read_text().split(NOTES, 1) if args.out.exists() else []
    args.out.write_text(text + ("\n" + NOTES + kept[1] if len(kept) == 2 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
