"""The search: rank candidates, build and time the best-ranked, keep the fastest.

1. **Enumerate and prune** (space.py, cost.py): every fitting combination of
   the free knobs, ranked by the cost model.
2. **Measure** in rank order (measure.py): build, check against the default
   schedule's results, time one round; until `BUILD_SHARE` of the budget is
   spent (the device's JIT, 0.1-0.5 s per candidate, is the main cost).
3. **Successive halving**: the measured candidates and the default are timed
   again round-robin (so a slow phase of a shared machine hits them all); after
   each round the slower half is dropped, never the default.
4. **Confirm**: the best and the default are timed in alternation; the best is
   kept only if it stays at least 3% faster than the default (`MARGIN`). The
   tuner never returns a schedule slower than the default, as measured.

Times are compared by their lower quartile (`robust`): each round launches a
candidate twice and keeps the faster, since other work on a shared machine
only ever adds time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tinyc.ir.core import Function
from tinyc.tune.cache import Entry
from tinyc.tune.measure import Bench, CandidateError
from tinyc.tune.space import Candidate, candidates

BUILD_SHARE = 0.6
CONFIRM_ROUNDS = 7
MARGIN = 0.97
"""A candidate replaces the default only if it is at least 3% faster: smaller
differences are within the noise of a shared machine."""
MIN_CANDIDATES = 4
LOGGED = 12          # measured candidates kept in the cache entry, fastest first

Progress = Callable[[float, str], None]
"""progress(fraction done, status text)"""


@dataclass
class Timed:
    """A built candidate and its round times."""

    candidate: Candidate
    kernel: Any
    times: list[float] = field(default_factory=list)

    @property
    def score(self) -> float:
        return robust(self.times)


def robust(times: list[float]) -> float:
    """The lower quartile of round times (each the best of two launches).

    On a shared machine other work only ever adds time, in bursts; the lower
    quartile follows the kernel's own cost and still needs several good
    rounds, where the minimum would reward one lucky round.
    """
    return float(np.percentile(times, 25)) if times else float("inf")


def tune_kernel(fn: Function, text: str, device: Any, info: Any, given: dict[str, Any],
                subgroup_size: int | None = None, budget: float = 30.0, batch: int | None = None,
                sizes: dict[str, str] | None = None,
                progress: Progress | None = None) -> Entry:
    """The fastest schedule of kernel `fn` (checked IR; `text` its source) found within `budget` s."""
    start = time.perf_counter()
    report = progress or (lambda fraction, status: None)
    spent = lambda: time.perf_counter() - start  # noqa: E731
    report(0.0, "building the default schedule")
    bench = Bench(text, fn.name, device, info, given, subgroup_size, batch, sizes)
    default = Timed(Candidate({}, 0.0, "default"), bench.default)
    bench.warm(bench.default)
    default.times.append(bench.time(bench.default))
    ranked = candidates(fn, given, info, subgroup_size)
    timed = _measure_in_rank_order(bench, ranked, default, budget, spent, report)
    measured = list(timed)
    _halve(bench, timed, default, budget, spent, report)
    best = min(timed, key=lambda t: t.score)
    chosen = _confirm(bench, best, default) if best is not default else default
    report(1.0, f"done: {default.score / chosen.score:.2f}x the default")
    return Entry(schedule=chosen.candidate.schedule, default_seconds=default.score,
                 tuned_seconds=chosen.score if chosen is not default else default.score,
                 tuning_seconds=spent(), batch=bench.batch, candidates=len(measured) - 1,
                 ranking=[{"schedule": t.candidate.schedule, "seconds": t.score,
                           "rounds": len(t.times)}
                          for t in sorted(measured, key=lambda t: t.score)[:LOGGED]])


def _measure_in_rank_order(bench: Bench, ranked: list[Candidate], default: Timed, budget: float,
                           spent: Callable[[], float], report: Progress) -> list[Timed]:
    timed = [default]
    for i, cand in enumerate(ranked):
        if spent() > BUILD_SHARE * budget and len(timed) > MIN_CANDIDATES:
            break
        if spent() > budget:
            break
        report(min(spent() / budget, BUILD_SHARE),
               f"candidate {i + 1}/{len(ranked)}, best {_speedup(timed, default)}")
        try:
            kernel = bench.build(cand.schedule)
            bench.check(kernel, cand.schedule)
            bench.warm(kernel)
        except CandidateError:
            continue
        entry = Timed(cand, kernel)
        entry.times.append(bench.time(kernel))
        default.times.append(bench.time(default.kernel))
        timed.append(entry)
    return timed


def _halve(bench: Bench, timed: list[Timed], default: Timed, budget: float,
           spent: Callable[[], float], report: Progress) -> None:
    """Time the survivors round-robin, dropping the slower half after each round."""
    rnd = 0
    while len(timed) > 2 and spent() < budget:
        order = timed[rnd % len(timed):] + timed[: rnd % len(timed)]
        for entry in order:
            entry.times.append(bench.time(entry.kernel))
        rnd += 1
        timed.sort(key=lambda t: t.score)
        keep = max(2, (len(timed) + 1) // 2)
        survivors = timed[:keep]
        if default not in survivors:
            survivors.append(default)
        timed[:] = survivors
        report(min(0.99, BUILD_SHARE + (1 - BUILD_SHARE) * spent() / budget),
               f"{len(timed)} left, best {_speedup(timed, default)}")


def _confirm(bench: Bench, best: Timed, default: Timed) -> Timed:
    """Alternate the two; keep `best` only if it stays faster than the default."""
    a, b = [], []
    for _ in range(CONFIRM_ROUNDS):
        a.append(bench.time(best.kernel))
        b.append(bench.time(default.kernel))
    best.times += a
    default.times += b
    faster = robust(a) < MARGIN * robust(b) and best.score < MARGIN * default.score
    return best if faster else default


def _speedup(timed: list[Timed], default: Timed) -> str:
    best = min(timed, key=lambda t: t.score)
    return f"{default.score / best.score:.2f}x" if best.times and default.times else "-"
