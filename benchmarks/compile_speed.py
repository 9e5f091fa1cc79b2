"""Compile speed: source -> SPIR-V per stage in a warm interpreter, and cold `tinyc compile` processes.

    python -m benchmarks.compile_speed                  # measure, print, update README.md
    python -m benchmarks.compile_speed --baseline DIR   # also measure the tinyc of checkout DIR

Warm: in one interpreter, after one untimed compile of the sample (imports, tables and caches
loaded), `tinyc.compiler.compile_to_spirv(..., validate=False)` runs `repeat` times and the
fastest run is shown, stage by stage (as `timeit` does: on this shared machine medians move 2x
with the load, the fastest run is what the code costs; the median of source -> SPIR-V is given
too). Source -> SPIR-V is parse + verify + passes + verify-lowered + codegen (which includes
assembling the binary). spirv-val is timed apart on the same binary: the first validation of a
module in a process (tinyc remembers modules that passed, so a second one costs microseconds;
both are shown).
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

def warm_run(path: Path) -> dict[str, Any]:
    """One compile of `path` in this interpreter: its stage times, then spirv-val on the binary."""
    from tinyc.compiler import compile_to_spirv
    from tinyc.spirv import tools

    result = compile_to_spirv(path.read_text(), str(path), validate=False)
    if hasattr(tools, "forget_validated"):  # older tinyc validated every time anyway
        tools.forget_validated()
    start = time.perf_counter()
    tools.validate(result.spirv)
    first = time.perf_counter() - start
    start = time.perf_counter()
    tools.validate(result.spirv)
    again = time.perf_counter() - start
    return {"stages": dict(result.timings), "spirv_val": first, "spirv_val_again": again,
            "bytes": len(result.spirv)}


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest of the timed runs of one file (its stages), and the fastest validations."""
    best = min(runs, key=lambda run: sum(run["stages"].get(s, 0.0) for s in STAGES))
    return {"status": "ok",
            "stages_s": {s: best["stages"].get(s, 0.0) for s in STAGES},
            "source_to_spirv_s": sum(best["stages"].get(s, 0.0) for s in STAGES),
            "source_to_spirv_median_s": _median([sum(run["stages"].get(s, 0.0) for s in STAGES) for run in runs]),
            "spirv_val_s": min(run["spirv_val"] for run in runs),
            "spirv_val_again_s": min(run["spirv_val_again"] for run in runs),
            "spirv_bytes": runs[-1]["bytes"]}


def warm_timings(path: Path, repeat: int) -> dict[str, Any]:
    """Median seconds per stage of compile_to_spirv and of spirv-val, or the error."""
    try:
        warm_run(path)  # imports, tables, first-use caches
        return _summary([warm_run(path) for _ in range(repeat)])
    except Exception as exc:
        return {"status": f"not available ({_short(exc)})"}


def cpu_runs(path: Path, batch: int) -> list[dict[str, float]]:
    """`batch` compiles of `path` in a row (the first compile of a path is an untimed warm-up):
    each compile's stage times and its whole call, in CPU time. The pipeline's stage clock
    becomes `time.process_time` in this interpreter (a server's own: WarmServer), since on a
    machine shared with other work wall time counts the others' turns too."""
    time.perf_counter = time.process_time
    from tinyc.pipeline import compile_to_spirv

    source = _SOURCES.get(path)
    if source is None:
        source = _SOURCES[path] = path.read_text()
        compile_to_spirv(source, str(path), validate=False)
    runs = []
    for _ in range(batch):
        start = time.process_time()
        timings = compile_to_spirv(source, str(path), validate=False).timings
        runs.append({**timings, "call": time.process_time() - start})
    return runs


_SOURCES: dict[Path, str] = {}


class WarmServer:
    """A warm interpreter running a checkout's tinyc: one `warm_run`, or one `cpu_runs` batch,
    per request."""

    def __init__(self, tree: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--tree", str(tree), "--serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tree)

    def _ask(self, request: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        return json.loads(line) if line else {"error": "the server died"}

    def run(self, path: Path) -> dict[str, Any]:
        """One warm run, or {"error": ...}."""
        return self._ask({"path": str(path)})

    def cpu_runs(self, path: Path, batch: int) -> list[dict[str, float]]:
        """`cpu_runs(path, batch)` in the server (which keeps CPU time as its clock after)."""
        answer = self._ask({"path": str(path), "batch": batch})
        if isinstance(answer, dict):
            raise RuntimeError(answer["error"])
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def serve() -> None:
    """`--serve`: answer each JSON request read from stdin ({"path"}: a warm run; {"path",
    "batch"}: cpu_runs) with a JSON line."""
    for line in sys.stdin:
        request = json.loads(line)
        path = Path(request["path"])
        try:
            answer: Any = cpu_runs(path, request["batch"]) if "batch" in request else warm_run(path)
        except Exception as exc:
            answer = {"error": _short(exc)}
        print(json.dumps(answer), flush=True)


# ---------------------------------------------------------------- cold

def _package_copy(tree: Path, dest: Path, bytecode: bool) -> Path:
    """A copy of tree/tinyc in dest, compiled to bytecode or not; returns dest."""
    dest.mkdir(parents=True)
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


def _cold_once(path: Path, package_dir: Path, bytecode: bool) -> float | str:
    """Wall time of one fresh `tinyc compile` process, or why it failed."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "tinyc.cli", "compile", str(path), "-o", str(package_dir / "k.spv")],
                          cwd=package_dir, env=_env(package_dir, bytecode), capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        message = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return f"failed (exit {proc.returncode}: {message[:200]})"
    return elapsed


def cold_times(path: Path, repeat: int, package_dirs: list[Path], bytecode: bool) -> list[dict[str, Any]]:
    """Median wall time of fresh `tinyc compile` processes for each package copy.

    The copies take turns (the order rotating every round), so a busy phase
    of the machine hits them alike, as in the device benchmarks.
    """
    times: list[list[float]] = [[] for _ in package_dirs]
    failed: dict[int, str] = {}
    for round_ in range(repeat):
        for k in [(round_ + i) % len(package_dirs) for i in range(len(package_dirs))]:
            if k in failed:
                continue
            result = _cold_once(path, package_dirs[k], bytecode)
            if isinstance(result, str):
                failed[k] = result
            else:
                times[k].append(result)
    return [{"status": failed[k]} if k in failed else {"status": "ok", "median_s": _median(times[k])}
            for k in range(len(package_dirs))]


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

def measure(files: list[Path], repeat: int = 5, cold_repeat: int = 5, imports: bool = False) -> dict[str, Any]:
    """Warm per-stage and cold process timings of every file, for this repository's tinyc."""
    return measure_trees([REPO], files, repeat, cold_repeat, imports)[0]


def measure_trees(trees: list[Path], files: list[Path], repeat: int = 5, cold_repeat: int = 5,
                  imports: bool = False) -> list[dict[str, Any]]:
    """`measure` for the tinyc of each checkout in `trees`, interleaved file by file and run by run."""
    trees = [tree.resolve() for tree in trees]
    names = [str(path.relative_to(REPO) if path.is_relative_to(REPO) else path) for path in files]
    docs = [{"method": " ".join(__doc__.split("\n\n")[2].split()), "tree": str(tree),
             "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
             "machine": f"{_cpu_name()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
             "load_average": list(os.getloadavg()), "imports": {},
             "files": [{"file": name, "warm": {}, "cold": {}} for name in names]} for tree in trees]
    servers = {k: WarmServer(tree) for k, tree in enumerate(trees) if tree != REPO}
    try:
        for i, path in enumerate(files):
            for k, warm in enumerate(_warm_interleaved(path, repeat, len(trees), servers)):
                docs[k]["files"][i]["warm"] = warm
    finally:
        for server in servers.values():
            server.close()
    with tempfile.TemporaryDirectory() as tmp:
        for mode in COLD_MODES:
            bytecode = mode == "bytecode"
            copies = [_package_copy(tree, Path(tmp) / mode / str(k), bytecode) for k, tree in enumerate(trees)]
            for i, path in enumerate(files):
                for doc, cold in zip(docs, cold_times(path.resolve(), cold_repeat, copies, bytecode)):
                    doc["files"][i]["cold"][mode] = cold
            if imports:
                for doc, copy in zip(docs, copies):
                    doc["imports"][mode] = import_profile(copy, REPO / IMPORT_SAMPLE, bytecode)
    startup = python_startup(cold_repeat)
    for doc in docs:
        doc["python_startup_s"] = startup
    return docs


def _warm_interleaved(path: Path, repeat: int, count: int, servers: dict[int, WarmServer]) -> list[dict[str, Any]]:
    """Warm timings of `path` for `count` trees (k in `servers`: another interpreter, else this one).

    After a warm-up each, the trees take turns run by run, the order rotating.
    """
    def one(k: int) -> dict[str, Any]:
        if k in servers:
            return servers[k].run(path)
        try:
            return warm_run(path)
        except Exception as exc:
            return {"error": _short(exc)}

    runs: list[list[dict[str, Any]]] = [[] for _ in range(count)]
    errors: dict[int, str] = {}
    for k in range(count):  # warm-up
        first = one(k)
        if "error" in first:
            errors[k] = first["error"]
    for round_ in range(repeat):
        for k in [(round_ + i) % count for i in range(count)]:
            if k not in errors:
                run = one(k)
                if "error" in run:
                    errors[k] = run["error"]
                else:
                    runs[k].append(run)
    return [{"status": f"not available ({errors[k]})"} if k in errors else _summary(runs[k])
            for k in range(count)]


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
            + ["**source → SPIR-V ms**", "(median)", "spirv-val ms", "spirv-val again ms", "SPIR-V bytes"]
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
            cells += [f"**{_ms(warm['source_to_spirv_s'])}**", _ms(warm.get("source_to_spirv_median_s")),
                      _ms(warm["spirv_val_s"]), _ms(warm["spirv_val_again_s"], 3), str(warm["spirv_bytes"])]
        else:
            cells = ["–"] * len(STAGES) + [warm["status"], "–", "–", "–", "–"]
        cells += [_cold(row, mode) for mode in COLD_MODES]
        lines.append(f"| {row['file']} | " + " | ".join(cells) + " |")
    for mode, found in doc.get("imports", {}).items():
        if found:
            listed = ", ".join(f"{name} {ms:.0f}" for name, ms in found)
            lines += ["", f"Largest imports of a {COLD_MODES[mode]} `tinyc compile {IMPORT_SAMPLE}` "
                          f"(ms, cumulative, `python -X importtime`): {listed}."]
    if baseline is not None:
        lines += ["", "### Before and after", "",
                  f"{baseline_label} measured the same way, interleaved with the numbers above (sample by "
                  "sample; cold processes of both take turns):", "",
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
    p.add_argument("--repeat", type=int, default=15, help="warm runs per file (the fastest is shown)")
    p.add_argument("--cold-repeat", type=int, default=5, help="cold processes per file and mode (median)")
    p.add_argument("--baseline", type=Path, help="another checkout to measure the same way (before/after)")
    p.add_argument("--baseline-label", default=None, help="what to call the baseline (default: its path)")
    p.add_argument("--readme", type=Path, default=HERE / "README.md", help="README whose section to replace")
    p.add_argument("--no-readme", action="store_true", help="print only")
    p.add_argument("--json", type=Path, help="also write every measurement as JSON")
    p.add_argument("--tree", type=Path, default=REPO, help=argparse.SUPPRESS)
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    files = [f.resolve() for f in args.files] or _samples()
    sys.path.insert(0, str(args.tree.resolve()))  # measure that tree's tinyc, not an installed one
    if args.serve:
        serve()
        return 0
    trees = [REPO] if args.baseline is None else [REPO, args.baseline]
    doc, *others = measure_trees(trees, files, args.repeat, args.cold_repeat, imports=True)
    baseline = others[0] if others else None
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
