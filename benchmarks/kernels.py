"""The kernel rows of issue 22: tuned gemm and the fused kernel against OpenCL C and the roofline.

Run from the repository root (about 15 minutes with the default budget):

    python -m benchmarks.kernels [--cases ...] [--tune-budget 20] [--repeat 15] [--out DIR]

Every case runs side by side in one process (benchmarks/suite.py): tinyc through its
API and submitted raw, untuned and tuned, the hand-written OpenCL C variants, NumPy,
and the two ceilings of the roofline in every round — the FMA-peak kernel of the
case's precision, and for the fused kernel four streaming kernels over its footprint — so a
kernel's share of a ceiling is a per-round ratio like the others. Each kernel is
tuned afresh (an empty cache) at the batch the case runs (`TINYC_TUNE_BATCH`, set by
benchmarks/suite.py), as
`tinyc.compile(src, tune=True)` does for a user who says at what batch the kernel
runs; the tuner's report (best schedule, gain over the default, candidates timed of
those ranked, search time) goes into the table.

Writes `kernels.md` and `kernels.json` next to this file (or to --out).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report  # noqa: E402
from benchmarks.cases import make_case  # noqa: E402
from benchmarks.device import blas_info, describe_device, make_queue  # noqa: E402
from benchmarks.suite import STREAM, Config, bandwidth_share, paired_ratio, run_case  # noqa: E402

HERE = Path(__file__).resolve().parent
GEMM_CASES = [f"gemm_{op}_{t}_{n}" for t in ("f32", "f64") for n in (32, 64)
              for op in ("nn", "nt", "tn", "tt")]
CASES = GEMM_CASES + ["fused"]
STREAM_KERNELS = ("copy", "read", "triad", "update")
"""The memory ceiling is the fastest of these in each round (as `tinyc bench` takes the
fastest of them): a write to a line not read first costs a read too on this CPU, so copy
alone understates what a read-modify-write kernel like the fused one can move."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.kernels", description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    p.add_argument("--repeat", type=int, default=15, help="interleaved rounds per case")
    p.add_argument("--tune-budget", type=float, default=20.0, help="seconds of tuning per kernel")
    p.add_argument("--device", default=None)
    p.add_argument("--out", type=Path, default=HERE)
    return p.parse_args(argv)


def tuner_entries(before: set[Path]) -> list[dict]:
    """Cache entries written since `before` (the tuning of the case just run)."""
    from tinyc.tune import cache

    return [json.loads(p.read_text()) for p in cache.entries() if p not in before]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ["TINYC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tinyc-kernels-cache-")
    os.environ["TINYC_TUNE_BUDGET"] = str(args.tune_budget)
    from tinyc.cli.roofline import best_peak, stream_launch
    from tinyc.runtime.device import profiling_queue
    from tinyc.tune import cache

    queue = make_queue(args.device)
    config = Config(repeat=args.repeat, tune_budget=args.tune_budget)
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "device": describe_device(queue), "cpu_count": os.cpu_count(),
            "python": platform.python_version(), "blas": blas_info(),
            "load_average_at_start": list(os.getloadavg()), "config": vars(config),
            "command": " ".join(["python", "-m", "benchmarks.kernels", *(argv or sys.argv[1:])])}
    peaks: dict = {}
    ceilings: dict = {}
    for element in ("f32", "f64"):
        rate, launch = best_peak(profiling_queue(queue), element)
        peaks[element] = launch
        ceilings[f"peak_{element}"] = rate
        ceilings[f"peak_{element}_config"] = launch.config if launch is not None else None
    results, tuning = [], {}
    for name in args.cases.split(","):
        case = make_case(name.strip())
        streams = [stream_launch(profiling_queue(queue), case.bytes, s) for s in STREAM_KERNELS] \
            if name == "fused" else []
        before = set(cache.entries())
        start = time.perf_counter()
        result = run_case(case, queue, config, peaks=peaks, streams=streams)
        results.append(result)
        tuning[case.name] = tuner_entries(before)
        print(f"{case.name:16s} {time.perf_counter() - start:6.1f} s  " + "  ".join(
            f"{f}={report._ms(result.best(f))}" for f in ("tinyc", "tinyc-raw", "tinyc-tuned-raw",
                                                          "opencl")), flush=True)
    meta["load_average_after_cases"] = list(os.getloadavg())
    meta["ceilings"] = ceilings
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {"meta": meta, "cases": [report.case_json(c) for c in results], "tuning": tuning}
    (args.out / "kernels.json").write_text(json.dumps(doc, indent=1) + "\n")
    (args.out / "kernels.md").write_text(markdown(results, tuning, meta))
    print(f"wrote {args.out / 'kernels.md'}")
    return 0


def fused_table(results: list, ceilings: dict) -> str:
    """The fused kernel: API and raw against OpenCL C, and its share of the memory bandwidth."""
    rows = ["| case | batch | tinyc API ms | tinyc raw ms | tuned raw ms | OpenCL C ms "
            "| API/OpenCL C | raw/OpenCL C | tuned raw/OpenCL C | GB/s (tuned raw) "
            "| % of memory bandwidth (tuned raw / OpenCL C) |", "|" + "---|" * 11]
    for c in results:
        if c.name != "fused":
            continue
        api, raw, tuned, cl = (c.best(f) for f in ("tinyc", "tinyc-raw", "tinyc-tuned-raw", "opencl"))
        streams = [r for r in c.impls if r.family == STREAM and r.ok]

        def share(r) -> str:
            found = bandwidth_share(r, streams, c.bytes) if (r is not None and r.ok and streams) \
                else None
            return "–" if found is None else f"{100 * found:.0f}%"

        def ratio(a, b) -> str:
            found = paired_ratio(a, b) if (a is not None and b is not None and a.ok and b.ok) else None
            return "–" if found is None else f"{found[0]:.2f} ({found[1]:.2f}-{found[2]:.2f})"

        rows.append(f"| {c.title} | {c.batch} | {report._ms(api)} | {report._ms(raw)} "
                    f"| {report._ms(tuned)} | {report._ms(cl)} | {ratio(api, cl)} | {ratio(raw, cl)} "
                    f"| {ratio(tuned, cl)} | {report._rate(tuned, c.bytes)} "
                    f"| {share(tuned)} / {share(cl)} |")
    return "\n".join(rows)


def tuning_table(tuning: dict[str, list[dict]]) -> str:
    """What the tuner reported for each kernel: best schedule, gain, search."""
    rows = ["| case | batch | default ms | tuned ms | gain | timed / ranked | search s | schedule |",
            "|" + "---|" * 8]
    for name, entries in tuning.items():
        for e in entries:
            gain = e["default_seconds"] / e["tuned_seconds"] if e["tuned_seconds"] else 1.0
            shown = f"`{json.dumps(e['schedule'], separators=(',', ':'))}`" if e["schedule"] \
                else "the default"
            rows.append(f"| {name} | {e['batch']} | {e['default_seconds'] * 1e3:.3f} "
                        f"| {e['tuned_seconds'] * 1e3:.3f} | {gain:.2f}x | {e['candidates']} / "
                        f"{e.get('space', '?')} | {e['tuning_seconds']:.1f} | {shown} |")
    return "\n".join(rows)


def markdown(results: list, tuning: dict, meta: dict) -> str:
    ceilings = meta["ceilings"]
    load = "/".join(f"{v:.1f}" for v in meta["load_average_at_start"])
    after = "/".join(f"{v:.1f}" for v in meta["load_average_after_cases"])
    return "\n".join([
        "# Kernel speed: tuned gemm and the fused kernel (issue 22)",
        "",
        f"Measured {meta['date']} on {meta['device']['name']} ({meta['device']['filter_string']}, "
        f"driver {meta['device']['driver_version']}), {meta['cpu_count']} CPUs; load average "
        f"{load} at the start, {after} at the end. `{meta['command']}`.",
        "",
        "Method: benchmarks/suite.py (interleaved rounds, each side the fastest of 3 launches per "
        "round, medians; ratios are medians of per-round ratios with the 10th-90th percentile). "
        "The FMA-peak kernel (`tinyc/cli/roofline.py`) runs in every round of every case, the copy "
        "kernels (copy, read, triad, update) over the fused kernel's footprint in every round of that case; its memory ceiling is the fastest of them in each round. Baseline: the "
        "fastest hand-written OpenCL C variant of `benchmarks/opencl/` in that run (listed in "
        "kernels.json), not the reference compiler's SPIR-V.",
        "",
        f"FMA peak at the start: {ceilings['peak_f32'] / 1e9:.1f} GFLOP/s f32 "
        f"({ceilings['peak_f32_config']}), {ceilings['peak_f64'] / 1e9:.1f} GFLOP/s f64 "
        f"({ceilings['peak_f64_config']}).",
        "",
        "## gemm: default and tuned (raw submission) against OpenCL C",
        "",
        report.gemm_table(results, ceilings),
        "",
        "## The fused kernel",
        "",
        fused_table(results, ceilings),
        "",
        "## What the tuner found",
        "",
        tuning_table(tuning),
        "",
    ])


if __name__ == "__main__":
    sys.exit(main())
