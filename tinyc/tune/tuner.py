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
   kept only if it stays at least 5% faster than the default (`MARGIN`) and is
   faster in three quarters of those pairs. The tuner never returns a schedule
   slower than the default, as measured.

Candidates are compared by their time relative to the default measured just
before them (`paired`): a round launches each twice and keeps the faster, and
a slow phase of a shared machine, which can last seconds, then slows both.
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
CONFIRM_ROUNDS = 15
CONFIRM_QUANTILE = 75
"""The best candidate must also be faster than the default in this share of the
confirming pairs (their 75th percentile below 1): with 7 pairs and the median alone,
a shared machine's noise let a 1.07x "gain" through that 41 pairs of the benchmark
suite measured as 1.12x slower (gemm.t.t f32 32³)."""
MARGIN = 0.95
"""A candidate replaces the default only if it is at least 5% faster: smaller
differences are within the noise of a shared machine, and need not carry
over to another batch size."""
MIN_CANDIDATES = 4
LOGGED = 12          # measured candidates kept in the cache entry, fastest first

Progress = Callable[[float, str], None]
"""progress(fraction done, status text)"""


@dataclass
class Timed:
    """A built candidate, its times and its times relative to the default's."""

    candidate: Candidate
    kernel: Any
    times: list[float] = field(default_factory=list)    # seconds per launch
    ratios: list[float] = field(default_factory=list)   # over the default timed just before

    @property
    def score(self) -> float:
        """The median ratio to the default: < 1 is faster (the default itself scores 1)."""
        return float(np.median(self.ratios)) if self.ratios else float("inf")

    @property
    def seconds(self) -> float:
        return float(np.median(self.times)) if self.times else float("inf")


def paired(bench: Bench, entry: Timed, default: Timed) -> None:
    """Time the default and then `entry` back to back; record both and their ratio.

    Other work on a shared machine slows everything down for seconds at a
    time; a candidate measured right after the default meets the same load,
    so their ratio stays steady where the times themselves swing by 2-5x.
    """
    base = bench.time(default.kernel)
    mine = bench.time(entry.kernel) if entry is not default else base
    default.times.append(base)
    default.ratios.append(1.0)
    if entry is not default:
        entry.times.append(mine)
        entry.ratios.append(mine / base)


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
    ranked = candidates(fn, given, info, subgroup_size)
    timed = _measure_in_rank_order(bench, ranked, default, budget, spent, report)
    if not default.times:  # no candidate was timed against it (none, or none built): its own time
        default.times.append(bench.time(bench.default))
    measured = list(timed)
    _halve(bench, timed, default, budget, spent, report)
    best = min(timed, key=lambda t: t.score)
    chosen = _confirm(bench, best, default) if best is not default else default
    speedup = 1.0 / chosen.score if chosen is not default else 1.0
    report(1.0, f"done: {speedup:.2f}x the default")
    return Entry(schedule=chosen.candidate.schedule, default_seconds=default.seconds,
                 tuned_seconds=default.seconds / speedup,
                 tuning_seconds=spent(), batch=bench.batch, candidates=len(measured) - 1,
                 space=len(ranked),
                 ranking=[{"schedule": t.candidate.schedule, "seconds": t.seconds,
                           "relative": t.score if t is not default else 1.0,
                           "rounds": len(t.ratios)}
                          for t in sorted(measured, key=lambda t: t.score)[:LOGGED]])


def _measure_in_rank_order(bench: Bench, ranked: list[Candidate], default: Timed, budget: float,
                           spent: Callable[[], float], report: Progress) -> list[Timed]:
    timed = [default]
    for i, cand in enumerate(ranked):
        if spent() > BUILD_SHARE * budget and len(timed) > MIN_CANDIDATES:
            break
        if spent() > budget and len(timed) > 1:  # at least one candidate, even when slow
            break
        report(min(spent() / budget, BUILD_SHARE),
               f"candidate {i + 1}/{len(ranked)}, best {_speedup(timed)}")
        try:
            kernel = bench.build(cand.schedule)
            bench.check(kernel, cand.schedule)
            bench.warm(kernel)
        except CandidateError:
            continue
        entry = Timed(cand, kernel)
        paired(bench, entry, default)
        timed.append(entry)
    return timed


def _halve(bench: Bench, timed: list[Timed], default: Timed, budget: float,
           spent: Callable[[], float], report: Progress) -> None:
    """Time the survivors again, each paired with the default; drop the slower half per round."""
    while len(timed) > 2 and spent() < budget:
        for entry in timed:
            if entry is not default:
                paired(bench, entry, default)
        timed.sort(key=lambda t: t.score)
        keep = max(2, (len(timed) + 1) // 2)
        survivors = timed[:keep]
        if default not in survivors:
            survivors.append(default)
        timed[:] = survivors
        report(min(0.99, BUILD_SHARE + (1 - BUILD_SHARE) * spent() / budget),
               f"{len(timed)} left, best {_speedup(timed)}")


def _confirm(bench: Bench, best: Timed, default: Timed) -> Timed:
    """More paired rounds; keep `best` only if it stays MARGIN faster than the default (the
    median of the fresh pairs and of all) and faster in most fresh pairs (CONFIRM_QUANTILE)."""
    before = len(best.ratios)
    for _ in range(CONFIRM_ROUNDS):
        paired(bench, best, default)
    fresh = best.ratios[before:]
    kept = (float(np.median(fresh)) < MARGIN and best.score < MARGIN
            and float(np.percentile(fresh, CONFIRM_QUANTILE)) < 1.0)
    return best if kept else default


def _speedup(timed: list[Timed]) -> str:
    best = min(timed, key=lambda t: t.score)
    return f"{1.0 / best.score:.2f}x" if best.ratios else "-"
