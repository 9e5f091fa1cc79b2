"""The JIT across processes: a second `tinyc run` of a sample with and without the binary cache.

    python -m benchmarks.jit_cache [--repeat 5] [samples/fused_kernel.ir ...]

For each sample, fresh processes run `python -m tinyc.cli run SAMPLE` (bytecode
compiled ahead, as after `pip install`): with `TINYC_BINARY_CACHE=0` (before:
dpctl builds the SPIR-V in every process) and with the cache on, after one
run that filled it (after: the program is loaded from its device binary).
Reported: the wall time of the whole process and the "JIT build" time that
`tinyc run` prints (Kernel construction: building the program and getting
its kernel), median and range over the repeats, taken in alternation.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ["samples/fused_kernel.ir", "samples/batched_gemm.ir", "samples/dg_volume.ir"]


def run_once(sample: str, env: dict[str, str]) -> tuple[float, float]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "tinyc.cli", "run", sample, "--batch", "100"],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - start
    jit = float(re.search(r"JIT build ([\d.]+) ms", out).group(1)) / 1e3
    return wall, jit


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("samples", nargs="*", default=SAMPLES)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    compileall.compile_dir(str(ROOT / "tinyc"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="tinyc-jit-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(TINYC_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        off = {**env, "TINYC_BINARY_CACHE": "0"}
        print("| sample | process wall s, cache off (before) | with cache (after) "
              "| JIT build ms, before | after |")
        print("|---|---|---|---|---|")
        for sample in args.samples:
            run_once(sample, env)  # fills the cache: the first run on the machine
            before, after = [], []
            for _ in range(args.repeat):
                before.append(run_once(sample, off))
                after.append(run_once(sample, env))

            def cell(values: list[float], scale: float, fmt: str) -> str:
                return (f"{format(statistics.median(values) * scale, fmt)} "
                        f"({format(min(values) * scale, fmt)}-{format(max(values) * scale, fmt)})")

            print(f"| {sample} | {cell([w for w, _ in before], 1, '.2f')} "
                  f"| {cell([w for w, _ in after], 1, '.2f')} "
                  f"| {cell([j for _, j in before], 1e3, '.0f')} "
                  f"| {cell([j for _, j in after], 1e3, '.0f')} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
