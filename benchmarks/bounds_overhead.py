"""Cost of bounds-checked launches: `kernel(*args, batch=N, check_bounds=True)` vs the plain call.

    python -m benchmarks.bounds_overhead [--cases a,b] [--repeat 15] [--batch N]

For every case of the suite (benchmarks/cases.py), on the suite's USM
arrays, the public API path is timed both ways, interleaved round-robin in
one process after warm-up (the method of suite.py), and the ratio of the
medians is reported (checked / plain; the issue's target is at most 2).
Both results are first checked against the case's float64 reference. The
checked call includes everything a user pays: the report buffer, its
zeroing and read-back, and the snapshots of the written USM outputs.
Writes bounds_overhead.md next to this file (or to --out).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.cases import all_cases, make_case  # noqa: E402
from benchmarks.device import make_queue  # noqa: E402
from benchmarks.suite import _check, _device_outputs, _reset_device  # noqa: E402

HERE = Path(__file__).resolve().parent


def measure(case, queue, repeat: int, warmup: int = 2) -> dict:
    import tinyc

    rng = np.random.default_rng(0)
    init = case.inputs(rng)
    ref = case.reference(init)
    d = case.to_device(queue, init)
    kernel = tinyc.compile(case.source, name=case.ir_file, device=queue)[case.kernel]
    args = case.tinyc_args(d)
    runs = {"plain": lambda: kernel(*args, batch=case.batch),
            "checked": lambda: kernel(*args, batch=case.batch, check_bounds=True)}
    status = {}
    for name, run in runs.items():
        _reset_device(case, d, init)
        run()
        ok, err = _check(case, _device_outputs(case, d), ref)
        status[name] = "ok" if ok else f"wrong result ({err:.3g})"
    times = {name: [] for name in runs}
    for run in runs.values():
        for _ in range(warmup):
            run()
    order = list(runs)
    for rnd in range(repeat):
        for name in order[rnd % 2:] + order[:rnd % 2]:
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    plain, checked = (float(np.median(times[n])) for n in ("plain", "checked"))
    return {"case": case.name, "batch": case.batch, "plain_ms": plain * 1e3, "checked_ms": checked * 1e3,
            "ratio": checked / plain, "status": status}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bounds_overhead", description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="all")
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--batch", type=int, default=None)
    p.add_argument("--device", default=None)
    p.add_argument("--out", type=Path, default=HERE)
    args = p.parse_args(argv)
    queue = make_queue(args.device)
    cases = all_cases() if args.cases == "all" else [make_case(n) for n in args.cases.split(",")]
    rows = []
    for case in cases:
        if args.batch is not None:
            case.batch = args.batch
        row = measure(case, queue, args.repeat)
        rows.append(row)
        print(f"{row['case']:20s} plain {row['plain_ms']:8.3f} ms  checked {row['checked_ms']:8.3f} ms  "
              f"x{row['ratio']:.2f}  {row['status']}", flush=True)
    ratios = [r["ratio"] for r in rows]
    lines = ["# Bounds-checked launches: overhead", "",
             "`python -m benchmarks.bounds_overhead`: the public API call with `check_bounds=True` "
             "against the plain call, interleaved, median of "
             f"{args.repeat} runs each (batch as in the suite).", "",
             "| case | batch | plain (ms) | checked (ms) | checked / plain |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {r['case']} | {r['batch']} | {r['plain_ms']:.3f} | {r['checked_ms']:.3f} | "
              f"{r['ratio']:.2f} |" for r in rows]
    lines += ["", f"Geometric mean {float(np.exp(np.mean(np.log(ratios)))):.2f}, "
                  f"worst {max(ratios):.2f} (target: at most 2)."]
    (args.out / "bounds_overhead.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
