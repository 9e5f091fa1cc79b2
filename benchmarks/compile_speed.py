"""Compile speed: source -> SPIR-V per stage (warm), and a cold `tinyc compile` process.

Warm: in this interpreter, after one untimed compile (imports, grammar and
table loading done), `tinyc.compiler.compile_to_spirv(...)` runs `repeat`
times and the median of each stage in its `.timings` is reported. Cold: the
wall time of `python -m tinyc.cli compile FILE -o OUT` in a fresh process
(what the `tinyc` script runs), median of `cold_repeat` runs; this includes
interpreter start-up and imports. Neither includes the device's JIT build of
the SPIR-V (RUNTIME-NOTES §13: 100-400 ms, which tinyc caches per process).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent


def _short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]


def warm_timings(path: Path, repeat: int) -> dict[str, Any]:
    """Median seconds per stage of compile_to_spirv, or the error."""
    try:
        from tinyc.compiler import compile_to_spirv

        source = path.read_text()
        result = compile_to_spirv(source, str(path))  # warm-up
        runs: list[dict[str, float]] = []
        totals: list[float] = []
        for _ in range(repeat):
            start = time.perf_counter()
            result = compile_to_spirv(source, str(path))
            totals.append(time.perf_counter() - start)
            runs.append(dict(result.timings))
    except Exception as exc:
        return {"status": f"not available ({_short(exc)})"}
    stages = {stage: float(np.median([r.get(stage, 0.0) for r in runs])) for stage in runs[0]}
    return {"status": "ok", "stages_s": stages, "total_s": float(np.median(totals)),
            "spirv_bytes": len(result.spirv)}


def cold_time(path: Path, repeat: int) -> dict[str, Any]:
    """Median wall time of a fresh `tinyc compile` process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "k.spv"
        for _ in range(repeat):
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "tinyc.cli", "compile", str(path), "-o", str(out)],
                                  cwd=REPO, env=env, capture_output=True, text=True)
            times.append(time.perf_counter() - start)
            if proc.returncode != 0:
                message = (proc.stderr.strip().splitlines() or ["?"])[-1]
                return {"status": f"failed (exit {proc.returncode}: {message[:200]})"}
    return {"status": "ok", "median_s": float(np.median(times))}


def python_startup(repeat: int) -> float:
    """Median time of `python -c pass`: the floor under every cold compile."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def measure(files: list[Path], repeat: int = 5, cold_repeat: int = 5) -> dict[str, Any]:
    """Warm per-stage and cold process timings of every file."""
    rows = []
    for path in files:
        rel = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        rows.append({"file": str(rel), "warm": warm_timings(path, repeat), "cold": cold_time(path, cold_repeat)})
    return {"method": __doc__.strip().split("\n\n")[1].replace("\n", " "),
            "python_startup_s": python_startup(cold_repeat), "files": rows}


def markdown(doc: dict[str, Any]) -> str:
    """A table: one row per file, warm stage medians in ms, cold process ms."""
    stages: list[str] = []
    for row in doc["files"]:
        for stage in row["warm"].get("stages_s", {}):
            if stage not in stages:
                stages.append(stage)
    head = "| file | " + " | ".join(f"{s} ms" for s in stages) + " | warm total ms | SPIR-V bytes | cold `tinyc compile` ms |"
    lines = ["## Compile speed", "", doc["method"], "",
             f"`python -c pass` alone takes {doc['python_startup_s'] * 1e3:.0f} ms here.", "",
             head, "|" + "---|" * (len(stages) + 4)]
    for row in doc["files"]:
        warm, cold = row["warm"], row["cold"]
        if warm["status"] == "ok":
            cells = [f"{warm['stages_s'].get(s, 0.0) * 1e3:.2f}" for s in stages]
            cells += [f"{warm['total_s'] * 1e3:.2f}", str(warm["spirv_bytes"])]
        else:
            cells = ["–"] * len(stages) + [warm["status"], "–"]
        cells.append(f"{cold['median_s'] * 1e3:.0f}" if cold["status"] == "ok" else cold["status"])
        lines.append(f"| {row['file']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
