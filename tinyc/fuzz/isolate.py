"""Programs run in worker processes, so a crash of the device's compiler is a finding, not the end.

The CPU runtime's JIT has crashed (a segfault in its work-group loop-bound
pass) on a module tinyc produced; in one process that ends the campaign with
no summary. The supervisor here runs the programs in a `--worker` child that
sends each module's tally and failure reports as one JSON line on its
standard output. When the child dies, the module it was on is rerun one
program per child: a program that crashes alone is a "crash" (an internal
error, reported with its source); a module that crashes only as a whole is
one internal error reported with all its programs. Then a new child goes on
with the next module.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
import time
from typing import Iterator, TextIO

from tinyc.fuzz.chunks import Tally, run_chunk, show_progress
from tinyc.fuzz.programs import program_kernel


def work(seed: int, indices: range, per_module: int, shrinking: bool) -> int:
    """The child's side: run the programs, one JSON line per module on standard output."""
    for at in range(indices.start, indices.stop, per_module):
        part = range(at, min(at + per_module, indices.stop))
        tally, reports = Tally(), io.StringIO()
        alive = run_chunk(seed, part, tally, reports, shrinking)
        print(json.dumps({"stop": part.stop, "alive": alive, "tally": tally.to_json(),
                          "reports": reports.getvalue()}), flush=True)
        if not alive:
            break
    return 0


class Worker:
    """A child process running programs `indices` of the seed."""

    def __init__(self, seed: int, indices: range, per_module: int, shrinking: bool):
        self.command = [sys.executable, "-m", "tinyc.fuzz", "--worker", "--seed", str(seed),
                        "--start", str(indices.start), "--programs", str(len(indices)),
                        "--per-module", str(per_module)] + ([] if shrinking else ["--no-shrink"])
        self.death = ""

    def modules(self) -> Iterator[dict]:
        """The child's module results as they come; `death` says how it ended if it died."""
        with tempfile.TemporaryFile("w+") as errors:
            child = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=errors, text=True)
            assert child.stdout is not None
            for line in child.stdout:
                yield json.loads(line)
            code = child.wait()
            if code != 0:
                errors.seek(0)
                tail = "\n".join(errors.read().strip().splitlines()[-12:])
                self.death = f"the worker process died (exit status {code})\n{tail}"


def _crashed_module(seed: int, part: range, death: str, tally: Tally, out: TextIO,
                    shrinking: bool) -> bool:
    """Rerun the module a worker died on, one program per worker; False if the device hung."""
    culprits = 0
    for i in part:
        alone = Worker(seed, range(i, i + 1), 1, shrinking)
        results = list(alone.modules())
        for result in results:
            tally.add(result["tally"])
            out.write(result["reports"])
            if not result["alive"]:
                return False
        if not results:
            culprits += 1
            tally.programs += 1
            tally.statuses["crash"] += 1
            tally.counts["internal-errors"] += 1
            kernel = program_kernel(seed, i)
            out.write(f"--- crash: seed {seed} program {i} ({kernel.name}), batch {kernel.batch}\n"
                      f"{alone.death}\n{kernel.text}\n")
    if not culprits:
        tally.counts["internal-errors"] += 1
        tally.statuses["module crash"] += 1
        texts = "\n".join(program_kernel(seed, i).text for i in part)
        out.write(f"--- crash: seed {seed} programs {part.start}..{part.stop - 1} as one module "
                  f"(each alone runs)\n{death}\n{texts}\n")
    out.flush()
    return True


def run_isolated(seed: int, indices: range, per_module: int, tally: Tally, out: TextIO,
                 shrinking: bool, progress: TextIO | None) -> bool:
    """Run programs `indices` of the seed in worker processes; False if the device hung."""
    started = time.time()
    at = indices.start
    while at < indices.stop:
        worker = Worker(seed, range(at, indices.stop), per_module, shrinking)
        for result in worker.modules():
            tally.add(result["tally"])
            out.write(result["reports"])
            out.flush()
            at = result["stop"]
            show_progress(progress, tally, len(indices), started)
            if not result["alive"]:
                return False
        if at < indices.stop:
            part = range(at, min(at + per_module, indices.stop))
            if not _crashed_module(seed, part, worker.death, tally, out, shrinking):
                return False
            at = part.stop
    return True
