"""A campaign's programs, a module at a time: run, tally, shrink and report failures.

The part of the campaign (campaign.py) that worker processes (isolate.py)
run as well.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence, TextIO

from tinyc.fuzz.programs import program_kernel
from tinyc.fuzz.program import Kernel
from tinyc.fuzz.runner import Outcome, compile_one, run_module
from tinyc.fuzz.shrink import shrink

PROGRAM_FAILURES = {"mismatch": "mismatches", "rejected": "mismatches", "undefined": "mismatches",
                    "unsupported": "mismatches", "internal": "internal-errors", "crash": "internal-errors",
                    "hang": "hangs"}


@dataclass
class Tally:
    programs: int = 0
    mutants: int = 0
    counts: Counter = field(default_factory=Counter)  # "mismatches", "internal-errors", "hangs"
    statuses: Counter = field(default_factory=Counter)
    mutant_statuses: Counter = field(default_factory=Counter)
    features: Counter = field(default_factory=Counter)
    collectives_checked: int = 0

    def summary(self) -> str:
        return (f"programs {self.programs} mismatches {self.counts['mismatches']} "
                f"internal-errors {self.counts['internal-errors']} hangs {self.counts['hangs']}")

    def to_json(self) -> dict:
        return {"programs": self.programs, "mutants": self.mutants, "counts": self.counts,
                "statuses": self.statuses, "mutant_statuses": self.mutant_statuses,
                "features": self.features, "collectives_checked": self.collectives_checked}

    def add(self, data: dict) -> None:
        """Add a tally sent as `to_json()` (by a worker process)."""
        self.programs += data["programs"]
        self.mutants += data["mutants"]
        self.collectives_checked += data["collectives_checked"]
        for name in ("counts", "statuses", "mutant_statuses", "features"):
            getattr(self, name).update(data[name])

    @property
    def failed(self) -> bool:
        return any(self.counts[k] for k in ("mismatches", "internal-errors", "hangs"))


def program_kernels(seed: int, start: int, stop: int) -> list[Kernel]:
    return [program_kernel(seed, i) for i in range(start, stop)]


def _still_fails(outcome: Outcome, seed: int):
    """The shrinking predicate: the trial kernel fails with the same status."""

    def check(trial: Kernel) -> bool:
        if outcome.status in ("rejected", "internal") and "compiling" in outcome.detail or \
                outcome.status == "rejected":
            found = compile_one(trial)
            return found is not None and found.status == outcome.status
        if compile_one(trial) is not None:
            return False
        [again] = run_module([trial], seed)
        return again.status == outcome.status

    return check


def report_failure(out: TextIO, seed: int, index: int, outcome: Outcome, shrunk: Kernel | None) -> None:
    kernel = shrunk or outcome.kernel
    out.write(f"--- {outcome.status}: seed {seed} program {index} ({kernel.name}), batch {kernel.batch}"
              f"{' (shrunk)' if shrunk else ''}\n{outcome.detail.rstrip()}\n{kernel.text}\n")
    out.flush()


def run_chunk(seed: int, part: Sequence[int], tally: Tally, out: TextIO, shrinking: bool) -> bool:
    """Run programs `part` of the seed as one module; False if the device hung (stop everything)."""
    kernels = [program_kernel(seed, i) for i in part]
    outcomes = run_module(kernels, seed)
    index = {kernel.name: i for i, kernel in zip(part, kernels)}
    for outcome in outcomes:
        i = index[outcome.kernel.name]
        tally.programs += 1
        tally.statuses[outcome.status] += 1
        tally.features.update(outcome.kernel.features)
        tally.collectives_checked += outcome.checked_collectives
        if outcome.failed:
            tally.counts[PROGRAM_FAILURES[outcome.status]] += 1
            shrunk = None
            if shrinking and outcome.status != "hang":
                shrunk = shrink(outcome.kernel, _still_fails(outcome, seed))
            report_failure(out, seed, i, outcome, shrunk)
            if outcome.status == "hang":
                return False
    return True


def show_progress(progress: TextIO | None, tally: Tally, total: int, started: float) -> None:
    if progress is not None:
        progress.write(f"[{tally.programs}/{total} programs, {time.time() - started:.0f} s] "
                       f"{dict(tally.statuses)}\n")
        progress.flush()


