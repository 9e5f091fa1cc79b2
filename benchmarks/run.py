"""Run the benchmark suite: `python -m benchmarks.run` (or `python benchmarks/run.py`).

Every case is checked against NumPy, then timed side by side in this one
process on one device: tinyc (public API and raw submission), the
hand-written OpenCL C and NumPy. Writes results.md, results.json and
results.png next to this file (or to --out). A case the compiler cannot
build yet is reported as "tinyc: not available (<error>)" and the baselines
still run.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import compile_speed, report  # noqa: E402
from benchmarks.cases import all_cases, make_case  # noqa: E402
from benchmarks.device import blas_info, describe_device, make_queue  # noqa: E402
from benchmarks.suite import Config, run_case  # noqa: E402
from benchmarks.suite import __doc__ as METHOD_DOC  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="all", help="comma-separated case names, or 'all' (see --list)")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--batch", type=int, default=None, help="override every case's batch size")
    p.add_argument("--repeat", type=int, default=15, help="timed runs per implementation (median)")
    p.add_argument("--warmup", type=int, default=2, help="untimed runs first")
    p.add_argument("--variants", choices=("all", "first"), default="all",
                   help="time every OpenCL C / NumPy variant (default) or only the first")
    p.add_argument("--device", default=None, help="SYCL filter string (default $TINYC_DEVICE or opencl:cpu:0)")
    p.add_argument("--out", type=Path, default=HERE, help="directory for results.{md,json,png}")
    p.add_argument("--no-compile-speed", action="store_true", help="skip the compile-speed part")
    p.add_argument("--compile-repeat", type=int, default=5, help="runs per file for compile speed")
    p.add_argument("--tune-budget", type=float, default=30.0,
                   help="seconds of autotuning per kernel for the tuned side (default 30)")
    p.add_argument("--no-tune", action="store_true", help="leave out the tuned side")
    p.add_argument("--keep-tuned", action="store_true",
                   help="use schedules already in the tuning cache instead of tuning afresh")
    return p.parse_args(argv)


def compile_files() -> list[Path]:
    """Every sample in samples/."""
    return sorted((REPO / "samples").glob("*.ir"))


def measure_ceilings(queue, peaks: dict) -> dict:
    """Both roofline ceilings, measured now (tinyc/cli/roofline.py) at the gemm footprint.

    `peaks` receives the fastest FMA-peak launch per precision: the cases time
    it in every round, so their share of the peak is measured alongside them.
    """
    from benchmarks.cases import GEMM_FOOTPRINT
    from tinyc.cli.roofline import best_peak, measure_bandwidth
    from tinyc.runtime.device import profiling_queue

    bandwidth, streams, footprint = measure_bandwidth(profiling_queue(queue), GEMM_FOOTPRINT)
    out = {"bandwidth": bandwidth, "streams": streams, "footprint": footprint}
    for element in ("f32", "f64"):
        rate, launch = best_peak(profiling_queue(queue), element)
        peaks[element] = launch
        out[f"peak_{element}"] = rate
        out[f"peak_{element}_config"] = launch.config if launch is not None else None
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for case in all_cases():
            print(f"{case.name:20s} batch {case.batch:>7d}  {case.title}")
        return 0
    names = [c.name for c in all_cases()] if args.cases == "all" else args.cases.split(",")
    cases = [make_case(n.strip(), args.batch) for n in names]
    config = Config(warmup=args.warmup, repeat=args.repeat, variants=args.variants,
                    tune_budget=None if args.no_tune else args.tune_budget)
    if not args.keep_tuned:  # tune in this run (the tuning time is part of the report)
        import tempfile

        os.environ["TINYC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tinyc-bench-cache-")
    queue = make_queue(args.device)
    meta = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "device": describe_device(queue),
        "cpu_count": os.cpu_count(),
        "load_average_at_start": list(os.getloadavg()),
        "python": platform.python_version(),
        "blas": blas_info(),
        "method": " ".join(METHOD_DOC.split("\n\n")[1].split()),
        "config": vars(config),
        "command": " ".join([os.path.basename(sys.executable), "-m", "benchmarks.run", *(argv or sys.argv[1:])]),
    }
    print(f"device: {meta['device']['name']} ({meta['device']['filter_string']}); "
          f"{len(cases)} cases, repeat {config.repeat}")
    peaks: dict = {}
    meta["ceilings"] = measure_ceilings(queue, peaks)
    print(report.ceilings_text(meta["ceilings"]))
    results = []
    for case in cases:
        start = time.perf_counter()
        result = run_case(case, queue, config, peaks=peaks)
        results.append(result)
        best = {f: result.best(f) for f in ("tinyc", "tinyc-raw", "tinyc-tuned-raw", "opencl", "numpy")}
        cells = "  ".join(f"{f}={report._ms(r)}" for f, r in best.items())
        print(f"{case.name:18s} batch {case.batch:>7d}  ms: {cells}  ({time.perf_counter() - start:.1f} s)",
              flush=True)
    meta["load_average_after_cases"] = list(os.getloadavg())
    compile_doc = None
    if not args.no_compile_speed:
        compile_doc = compile_speed.measure(compile_files(), args.compile_repeat, args.compile_repeat)
        meta["compile_speed"] = compile_doc
    args.out.mkdir(parents=True, exist_ok=True)
    report.write_json(args.out / "results.json", results, meta)
    report.write_markdown(args.out / "results.md", results, meta,
                          compile_speed.markdown(compile_doc) if compile_doc else "")
    plotted = report.write_plot(args.out / "results.png", results)
    report.write_roofline(args.out / "roofline.png", results, meta["ceilings"])
    print()
    print(report.markdown_table(results))
    print(f"\nwrote {args.out / 'results.md'}, results.json" + (", results.png" if plotted else
                                                                  " (no plot: pip install matplotlib)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
