"""What the tuner keeps, with the device replaced by a bench of known times (no device needed).

The default schedule is always measured and wins ties: a candidate replaces
it only when it is measured at least MARGIN faster, so the tuner never
returns a schedule slower than the default at the batch it timed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tinyc.compiler import check_source
from tinyc.target.device_info import CPU_DEVICE
from tinyc.tune import tuner
from tinyc.tune.measure import CandidateError
from tinyc.tune.space import Candidate

SOURCE = """func @k(%A: memref<f32x8x8>, %B: memref<f32x8x8>, %C: memref<f32x8x8>) {
  %one = constant 1.0 : f32
  gemm.n.n %one, %A, %B, %one, %C
}
"""


def schedule(i: int) -> dict[str, Any]:
    return {"gemm#0": {"tile": [1, i + 1]}}


class FakeBench:
    """Kernels are schedules; each takes the seconds `times` gives it (the default: 1 ms)."""

    built: list[str] = []

    def __init__(self, times: dict[str, float], batch: int) -> None:
        self.times, self.batch = times, batch
        self.default = "{}"
        FakeBench.built = []

    def build(self, sched: dict[str, Any]) -> str:
        key = json.dumps(sched, sort_keys=True)
        if key not in self.times:
            raise CandidateError("does not compile")
        FakeBench.built.append(key)
        return key

    def check(self, kernel: str, sched: dict[str, Any]) -> None:
        pass

    def warm(self, kernel: str) -> None:
        pass

    def time(self, kernel: str) -> float:
        t = self.times.get(kernel, 1e-3)
        if isinstance(t, list):  # a cycle of times, one per launch
            self.calls = getattr(self, "calls", {})
            n = self.calls[kernel] = self.calls.get(kernel, -1) + 1
            return t[n % len(t)]
        return t


def tune_with(monkeypatch, seconds: list[float], batch: int = 12345, budget: float = 2.0):
    """Tune kernel k over len(seconds) candidates whose launches take `seconds`."""
    times = {"{}": 1e-3}
    ranked = []
    for i, t in enumerate(seconds):
        times[json.dumps(schedule(i), sort_keys=True)] = t
        ranked.append(Candidate(schedule(i), float(i)))
    monkeypatch.setattr(tuner, "Bench", lambda *args, **kwargs: FakeBench(times, batch))
    monkeypatch.setattr(tuner, "candidates", lambda *args, **kwargs: ranked)
    (fn,) = check_source(SOURCE).functions
    return tuner.tune_kernel(fn, SOURCE, None, CPU_DEVICE, {}, budget=budget)


def test_ties_keep_the_default(monkeypatch):
    entry = tune_with(monkeypatch, [1e-3] * 6)
    assert entry.schedule == {}, "equal times: the default wins"
    assert entry.tuned_seconds == entry.default_seconds == pytest.approx(1e-3)
    assert entry.candidates == 6 and entry.space == 6
    assert any(r["schedule"] == {} and r["relative"] == 1.0 for r in entry.ranking), \
        "the default is among the measured"


def test_the_default_is_measured_alongside_every_candidate(monkeypatch):
    entry = tune_with(monkeypatch, [1.2e-3, 0.7e-3, 1.1e-3])
    default = next(r for r in entry.ranking if r["schedule"] == {})
    assert default["relative"] == 1.0 and default["rounds"] >= entry.candidates


def test_a_clearly_faster_candidate_is_chosen_with_its_gain(monkeypatch):
    entry = tune_with(monkeypatch, [1.2e-3, 0.7e-3, 1.1e-3, 0.9e-3])
    assert entry.schedule == schedule(1)
    assert entry.default_seconds / entry.tuned_seconds == pytest.approx(1 / 0.7)
    assert entry.ranking[0]["schedule"] == schedule(1)
    assert entry.batch == 12345 and entry.tuning_seconds > 0


def test_a_gain_within_the_margin_keeps_the_default(monkeypatch):
    entry = tune_with(monkeypatch, [0.97e-3, 1.3e-3])
    assert entry.schedule == {}, "3% is within the noise of a shared machine: keep the default"


def test_a_gain_in_the_median_but_not_in_most_pairs_keeps_the_default(monkeypatch):
    """Faster in two launches of three, 30% slower in the third: the median says 0.85x,
    but a quarter of the confirming pairs say slower (noise a shared machine makes)."""
    entry = tune_with(monkeypatch, [[0.85e-3, 0.85e-3, 1.3e-3]])
    assert entry.schedule == {}


def test_slower_candidates_never_replace_the_default(monkeypatch):
    entry = tune_with(monkeypatch, [1.5e-3, 1.06e-3, 2e-3])
    assert entry.schedule == {} and entry.tuned_seconds == entry.default_seconds


def test_candidates_that_fail_are_skipped(monkeypatch):
    times = {"{}": 1e-3, json.dumps(schedule(1), sort_keys=True): 0.5e-3}
    ranked = [Candidate(schedule(0), 0.0), Candidate(schedule(1), 1.0)]
    monkeypatch.setattr(tuner, "Bench", lambda *args, **kwargs: FakeBench(times, 7))
    monkeypatch.setattr(tuner, "candidates", lambda *args, **kwargs: ranked)
    (fn,) = check_source(SOURCE).functions
    entry = tuner.tune_kernel(fn, SOURCE, None, CPU_DEVICE, {}, budget=2.0)
    assert entry.schedule == schedule(1) and entry.candidates == 1 and entry.space == 2


def test_every_strategy_is_measured_before_more_tiles_of_one():
    """gemm.t.t can stage Aᵀ, swap the product or read Aᵀ directly, each by loads or
    shuffles: the best candidate of each (within the slack of the best estimate) comes first."""
    from tinyc.tune.space import STRATEGY_SLACK, candidates, strategy

    source = SOURCE.replace("gemm.n.n", "gemm.t.t").replace("8x8", "64x64")
    (fn,) = check_source(source).functions
    found = candidates(fn, {"subgroup_size": 16}, CPU_DEVICE)
    kinds = [strategy(c.schedule["gemm#0"]) for c in found]
    leaders = [k for i, k in enumerate(kinds) if k not in kinds[:i]
               and found[i].cost <= found[0].cost * STRATEGY_SLACK]
    assert kinds[:len(leaders)] == leaders, "one candidate per strategy first"
    assert {k[:2] for k in leaders} >= {(True, False), (False, True)}, "staged and swapped"
    assert sorted(c.cost for c in found[len(leaders):]) == [c.cost for c in found[len(leaders):]]
