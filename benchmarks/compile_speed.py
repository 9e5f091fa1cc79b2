"""Compile speed: source -> SPIR-V per stage in a warm interpreter, and cold `tinyc compile` processes.

    python -m benchmarks.compile_speed                  # measure, print, update README.md
    python -m benchmarks.compile_speed --baseline DIR   # also measure the tinyc of checkout DIR

Warm: in one interpreter, after one untimed compile of the sample (imports, tables and caches
loaded), `tinyc.compiler.compile_to_spirv(..., validate=False)` runs `repeat` times; each stage of
its `.timings` is the median over the runs, and source -> SPIR-V is the median of their sums
(parse + verify + passes + verify-lowered + codegen, which includes assembling the binary).
spirv-val is timed apart on the same binary: the first validation of a module in a process
(tinyc remembers modules that passed, so a second one costs microseconds; both are shown).
Cold: the wall time of a fresh `python -m tinyc.cli compile FILE -o OUT` process, interpreter
start-up, imports and spirv-val included, median of `cold_repeat` runs, from a copy of the
`tinyc` package in a temporary directory: once with bytecode compiled ahead (as after
`pip install`), once without any (a source checkout with PYTHONDONTWRITEBYTECODE=1, where every
module is compiled from source in every process). Neither includes the device's JIT build of
the SPIR-V (RUNTIME-NOTES §13: 100-400 ms, which tinyc caches per process).
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
STAGES = ("parse", "verify", "passes", "verify-lowered", "codegen")
"""The stages of source -> SPIR-V; spirv-val is reported apart."""
COLD_MODES = {"bytecode": "cold, bytecode cached", "source": "cold, no bytecode"}
IMPORT_SAMPLE = "samples/fused_kernel.ir"


def _short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


# ---------------------------------------------------------------- warm

def warm_timings(path: Path, repeat: int) -> dict[str, Any]:
    """Median seconds per stage of compile_to_spirv and of spirv-val, or the error."""
    try:
        from tinyc.compiler import compile_to_spirv
        from tinyc.spirv import tools

        source, name = path.read_text(), str(path)
        result = compile_to_spirv(source, name, validate=False)  # warm-up
        tools.validate(result.spirv)
        runs: list[dict[str, float]] = []
        validations: list[float] = []
        again: list[float] = []
        for _ in range(repeat):
            result = compile_to_spirv(source, name, validate=False)
            runs.append(dict(result.timings))
            if hasattr(tools, "forget_validated"):  # older tinyc validated every time anyway
                tools.forget_validated()
            start = time.perf_counter()
            tools.validate(result.spirv)
            validations.append(time.perf_counter() - start)
            start = time.perf_counter()
            tools.validate(result.spirv)
            again.append(time.perf_counter() - start)
    except Exception as exc:
        return {"status": f"not available ({_short(exc)})"}
    return {"status": "ok",
            "stages_s": {s: _median([r.get(s, 0.0) for r in runs]) for s in STAGES},
            "source_to_spirv_s": _median([sum(r.get(s, 0.0) for s in STAGES) for r in runs]),
            "spirv_val_s": _median(validations), "spirv_val_again_s": _median(again),
            "spirv_bytes": len(result.spirv)}


def _warm_in_subprocess(tree: Path, files: list[Path], repeat: int) -> list[dict[str, Any]]:
    """warm_timings of the tinyc in `tree` (this script, run with that tree first on sys.path)."""
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--tree", str(tree), "--warm-json",
                           "--repeat", str(repeat), *map(str, files)],
                          capture_output=True, text=True, cwd=tree)
    if proc.returncode != 0:
        message = _short(RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "?"))
        return [{"status": f"not available ({message})"} for _ in files]
    return json.loads(proc.stdout)


# ---------------------------------------------------------------- cold

def _package_copy(tree: Path, dest: Path, bytecode: bool) -> Path:
    """A copy of tree/tinyc in dest, compiled to bytecode or not; returns dest."""
    shutil.copytree(tree / "tinyc", dest / "tinyc", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if bytecode and not compileall.compile_dir(dest / "tinyc", quiet=1):
        raise RuntimeError(f"compileall failed in {dest}")
    return dest


def _env(package_dir: Path, bytecode: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(package_dir)
    env.pop("PYTHONPYCACHEPREFIX", None)  # read the copy's own __pycache__
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def cold_time(path: Path, repeat: int, package_dir: Path, bytecode: bool) -> dict[str, Any]:
    """Median wall time of a fresh `tinyc compile` process."""
    times = []
    out = package_dir / "k.spv"
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "tinyc.cli", "compile", str(path), "-o", str(out)],
                              cwd=package_dir, env=_env(package_dir, bytecode), capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            message = (proc.stderr.strip().splitlines() or ["?"])[-1]
            return {"status": f"failed (exit {proc.returncode}: {message[:200]})"}
    return {"status": "ok", "median_s": _median(times)}


def python_startup(repeat: int) -> float:
    """Median time of `python -c pass`: the floor under every cold compile."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return _median(times)


def import_profile(package_dir: Path, sample: Path, bytecode: bool, top: int = 10) -> list[tuple[str, float]]:
    """The largest imports of one cold compile (`python -X importtime`), cumulative ms."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "tinyc.cli", "compile", str(sample),
                           "-o", str(package_dir / "k.spv")], cwd=package_dir,
                          env=_env(package_dir, bytecode), capture_output=True, text=True)
    found: list[tuple[str, float]] = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(2)) == 1:  # imports of the process itself, not nested ones
            found.append((m.group(3).strip(), int(m.group(1)) / 1e3))
    found.sort(key=lambda item: -item[1])
    return found[:top]


# ---------------------------------------------------------------- the measurement

def measure(files: list[Path], repeat: int = 5, cold_repeat: int = 5, tree: Path = REPO,
            imports: bool = False) -> dict[str, Any]:
    """Warm per-stage and cold process timings of every file, for the tinyc in `tree`."""
    if tree.resolve() == REPO:
        warm = [warm_timings(path, repeat) for path in files]
    else:
        warm = _warm_in_subprocess(tree, files, repeat)
    rows = [{"file": str(path.relative_to(REPO) if path.is_relative_to(REPO) else path), "warm": w,
             "cold": {}} for path, w in zip(files, warm)]
    profile: dict[str, list[tuple[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in COLD_MODES:
            package_dir = _package_copy(tree, Path(tmp) / mode, bytecode=mode == "bytecode")
            for path, row in zip(files, rows):
                row["cold"][mode] = cold_time(path.resolve(), cold_repeat, package_dir, mode == "bytecode")
            if imports:
                profile[mode] = import_profile(package_dir, REPO / IMPORT_SAMPLE, mode == "bytecode")
    return {"method": " ".join(__doc__.split("\n\n")[2].split()),
            "tree": str(tree), "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "machine": f"{_cpu_name()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "load_average": list(os.getloadavg()),
            "python_startup_s": python_startup(cold_repeat), "files": rows, "imports": profile}


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# ---------------------------------------------------------------- reporting

def _ms(seconds: float | None, digits: int = 2) -> str:
    return "–" if seconds is None else f"{seconds * 1e3:.{digits}f}"


def _cold(row: dict[str, Any], mode: str) -> str:
    cold = row["cold"].get(mode, {"status": "–"})
    return _ms(cold["median_s"], 0) if cold["status"] == "ok" else cold["status"]


def markdown(doc: dict[str, Any], baseline: dict[str, Any] | None = None,
             baseline_label: str = "before") -> str:
    """The "Compile speed" section: method, one row per sample, imports, before/after."""
    head = (["sample"] + [f"{s} ms" for s in STAGES]
            + ["**source → SPIR-V ms**", "spirv-val ms", "spirv-val again ms", "SPIR-V bytes"]
            + [f"{label} ms" for label in COLD_MODES.values()])
    lines = ["## Compile speed", "", doc["method"], "",
             "Regenerate this section with `python -m benchmarks.compile_speed` (add `--baseline DIR` "
             "to compare with another checkout); `python -m benchmarks.run` puts the same table in "
             "results.md.", "",
             f"Measured {doc['date']} on {doc['machine']}; load average "
             f"{'/'.join(f'{x:.1f}' for x in doc['load_average'])} (a shared machine: single numbers "
             f"move by up to 2x between runs). `python -c pass` takes {_ms(doc['python_startup_s'], 0)} ms "
             "here.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in doc["files"]:
        warm = row["warm"]
        if warm["status"] == "ok":
            cells = [_ms(warm["stages_s"][s]) for s in STAGES]
            cells += [f"**{_ms(warm['source_to_spirv_s'])}**", _ms(warm["spirv_val_s"]),
                      _ms(warm["spirv_val_again_s"], 3), str(warm["spirv_bytes"])]
        else:
            cells = ["–"] * len(STAGES) + [warm["status"], "–", "–", "–"]
        cells += [_cold(row, mode) for mode in COLD_MODES]
        lines.append(f"| {row['file']} | " + " | ".join(cells) + " |")
    for mode, found in doc.get("imports", {}).items():
        if found:
            listed = ", ".join(f"{name} {ms:.0f}" for name, ms in found)
            lines += ["", f"Largest imports of a {COLD_MODES[mode]} `tinyc compile {IMPORT_SAMPLE}` "
                          f"(ms, cumulative, `python -X importtime`): {listed}."]
    if baseline is not None:
        lines += ["", "### Before and after", "",
                  f"The same measurement of {baseline_label}, in the same run:", "",
                  "| sample | source → SPIR-V ms before → now | spirv-val ms before → now | "
                  + " | ".join(f"{label} ms before → now" for label in COLD_MODES.values()) + " |",
                  "|---|---|---|" + "---|" * len(COLD_MODES)]
        old_rows = {row["file"]: row for row in baseline["files"]}
        for row in doc["files"]:
            old = old_rows.get(row["file"])
            if old is None:
                continue

            def pair(key: str, digits: int = 2) -> str:
                before = old["warm"].get(key) if old["warm"]["status"] == "ok" else None
                now = row["warm"].get(key) if row["warm"]["status"] == "ok" else None
                return f"{_ms(before, digits)} → {_ms(now, digits)}"

            cells = [pair("source_to_spirv_s"), pair("spirv_val_s")]
            cells += [f"{_cold(old, mode)} → {_cold(row, mode)}" for mode in COLD_MODES]
            lines.append(f"| {row['file']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def update_readme(readme: Path, section: str) -> None:
    """Replace the "## Compile speed" section of `readme` (up to the next `## `), or append it."""
    text = readme.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() == "## Compile speed"), None)
    if start is None:
        new = text.rstrip("\n") + "\n\n" + section
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        tail = "".join(lines[end:])
        new = "".join(lines[:start]) + section + ("\n" + tail if tail else "")
    readme.write_text(new, encoding="utf-8")


def _samples() -> list[Path]:
    return sorted((REPO / "samples").glob("*.ir"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.compile_speed", description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="*", type=Path, help="sources to compile (default: samples/*.ir)")
    p.add_argument("--repeat", type=int, default=5, help="warm runs per file (median)")
    p.add_argument("--cold-repeat", type=int, default=5, help="cold processes per file and mode (median)")
    p.add_argument("--baseline", type=Path, help="another checkout to measure the same way (before/after)")
    p.add_argument("--baseline-label", default=None, help="what to call the baseline (default: its path)")
    p.add_argument("--readme", type=Path, default=HERE / "README.md", help="README whose section to replace")
    p.add_argument("--no-readme", action="store_true", help="print only")
    p.add_argument("--json", type=Path, help="also write every measurement as JSON")
    p.add_argument("--tree", type=Path, default=REPO, help=argparse.SUPPRESS)
    p.add_argument("--warm-json", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    files = [f.resolve() for f in args.files] or _samples()
    sys.path.insert(0, str(args.tree.resolve()))  # measure that tree's tinyc, not an installed one
    if args.warm_json:
        print(json.dumps([warm_timings(path, args.repeat) for path in files]))
        return 0
    doc = measure(files, args.repeat, args.cold_repeat, imports=True)
    baseline = None
    if args.baseline is not None:
        baseline = measure(files, args.repeat, args.cold_repeat, tree=args.baseline.resolve())
    section = markdown(doc, baseline, args.baseline_label or str(args.baseline))
    print(section)
    if args.json is not None:
        args.json.write_text(json.dumps({"now": doc, "baseline": baseline}, indent=1) + "\n")
    if not args.no_readme:
        update_readme(args.readme, section)
        print(f"updated {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
