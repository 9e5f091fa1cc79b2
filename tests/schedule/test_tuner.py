"""The autotuner and its cache, on the device, with a short budget and a private cache dir."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import tinyc
from tinyc.cli import cli
from tinyc.compiler import compile_to_spirv
from tinyc.compiler import check_source
from tinyc.tune import cache, cache_key
from tinyc.tune.cache import Entry, TuningWarning
from tinyc.tune.space import candidates

SOURCE = """func @k(%A: memref<f32x32x24x?>, %B: memref<f32x24x16x?>, %C: memref<f32x32x16x?>) {
  %g = builtin.group_id : index
  %a = subview %A[:, :, %g] : memref<f32x32x24>
  %b = subview %B[:, :, %g] : memref<f32x24x16>
  %c = subview %C[:, :, %g] : memref<f32x32x16>
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  gemm.n.n %one, %a, %b, %zero, %c
}
"""
PLANTED = {"subgroup_size": 8, "gemm#0": {"tile": [2, 3], "k_unroll": 3, "stage": False,
                                          "vector_width": 2}}


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("TINYC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TINYC_TUNE_BUDGET", "3")
    return tmp_path / "cache"


def key_of(device, source: str = SOURCE):
    (fn,) = check_source(source).functions
    return cache_key(fn, device, {}, None)


def arguments(batch: int = 5) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    shapes = [(32, 24, batch), (24, 16, batch), (32, 16, batch)]
    return [np.asfortranarray(rng.uniform(-1, 1, s).astype(np.float32)) for s in shapes]


def run(program: tinyc.Program) -> np.ndarray:
    args = arguments()
    program["k"](*args, batch=5)
    return args[2]


def test_the_cache_lives_where_the_environment_says(cache_dir, monkeypatch):
    assert cache.cache_dir() == cache_dir
    monkeypatch.delenv("TINYC_CACHE_DIR")
    assert cache.cache_dir().name == "tinyc"   # platformdirs' user cache dir for tinyc


def test_a_cached_schedule_is_used_by_the_next_compile(cache_dir, device):
    cache.store(key_of(device), Entry(PLANTED, 2.0, 1.0, 0.5, 100, 3))
    program = tinyc.compile(SOURCE, device=device)
    expected = {**PLANTED, "work_group_size": [8, 1]}
    expected["gemm#0"] = {**PLANTED["gemm#0"], "transpose": "loads", "swap": False}
    assert program.schedules["k"] == expected
    assert program.ir("lowered").startswith("; schedule (tuned: tinyc tune): ")
    untuned = compile_to_spirv(SOURCE, device_info=None)
    assert untuned.schedules["k"] != program.schedules["k"]
    want = np.einsum("ikb,kjb->ijb", *[a.astype(np.float64) for a in arguments()[:2]])
    np.testing.assert_allclose(run(program), want, rtol=1e-5, atol=1e-5)


def test_explicit_knobs_win_over_the_cache_and_change_its_key(cache_dir, device):
    cache.store(key_of(device), Entry(PLANTED, 2.0, 1.0, 0.5, 100, 3))
    given = {"k": {"gemm": {"k_unroll": 5}}}
    program = tinyc.compile(SOURCE, device=device, schedule=given)
    assert program.schedules["k"]["gemm#0"]["k_unroll"] == 5
    assert program.schedules["k"]["subgroup_size"] == 16, "tuned for other fixed knobs: not used"


@pytest.mark.parametrize("content", [
    "{not json",
    json.dumps({"schedule": {"gemm#0": {"tile": [99, 1]}}, "default_seconds": 1,
                "tuned_seconds": 1, "tuning_seconds": 1, "batch": 1, "candidates": 1,
                "key": {"kernel": "k"}}),
    json.dumps({"schedule": [], "key": {"kernel": "k"}}),
], ids=["not-json", "knob-out-of-range", "wrong-shape"])
def test_a_corrupt_cache_entry_is_ignored_with_a_warning(cache_dir, device, content):
    path = cache.path_of(key_of(device))
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.warns(TuningWarning, match="ignoring the corrupt tuned-schedule cache entry"):
        program = tinyc.compile(SOURCE, device=device)
    assert program.schedules["k"] == compile_to_spirv(
        SOURCE, device_info=_info(device)).schedules["k"], "the default schedule"
    assert not program.ir("lowered").startswith("; schedule (tuned")


def _info(device):
    from tinyc.target.device_info import DeviceInfo

    return DeviceInfo.from_sycl_device(device)


def test_tune_true_measures_caches_and_keeps_results_bit_for_bit(cache_dir, device):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tuned = tinyc.compile(SOURCE, device=device, tune=True)
    (path,) = cache.entries()
    entry = json.loads(path.read_text())
    assert entry["key"]["device"] == device.name and entry["key"]["driver"] == device.driver_version
    assert entry["candidates"] >= 1 and entry["tuning_seconds"] > 0
    assert entry["tuned_seconds"] <= entry["default_seconds"], "never slower than the default"
    relative = [r["relative"] for r in entry["ranking"]]
    assert relative == sorted(relative) and relative[0] <= 1.0, "ranked by ratio to the default"
    untuned = tinyc.compile(SOURCE, device=device, schedule={"k": {}})
    assert run(tuned).tobytes() == run(untuned).tobytes()
    again = tinyc.compile(SOURCE, device=device, tune=True)   # a cache hit: nothing to measure
    assert again.schedules == tuned.schedules
    assert len(cache.entries()) == 1


def test_the_cost_model_ranks_fitting_candidates_over_free_knobs_only(device):
    (fn,) = check_source(SOURCE.replace("gemm.n.n %one, %a, %b, %zero, %c",
                                        'gemm.n.n %one, %a, %b, %zero, %c attributes {"k_unroll"=2}')
                         ).functions
    found = candidates(fn, {"subgroup_size": 8}, _info(device))
    assert found and [c.cost for c in found] == sorted(c.cost for c in found)
    for cand in found:
        assert "subgroup_size" not in cand.schedule, "fixed by the caller"
        assert cand.schedule["gemm#0"]["k_unroll"] == 2, "fixed by the source"


def test_tinyc_tune_cli_tunes_reports_and_clears(cache_dir, device, tmp_path):
    source = tmp_path / "k.ir"
    source.write_text(SOURCE)
    runner = CliRunner()
    result = runner.invoke(cli, ["tune", str(source), "--budget", "2", "--batch", "64",
                                 "--device", device.filter_string])
    assert result.exit_code == 0, result.output
    assert "k: " in result.output and "(tuned)" in result.output and "at batch 64" in result.output
    line = next(x for x in result.output.splitlines() if x.startswith("k: "))
    assert re.search(r"ms \(default\) -> [0-9.]+ ms \(tuned\), [0-9.]+x; \d+ of \d+ candidates timed "
                     r"at batch 64 in [0-9.]+ s", line), line
    assert "  schedule: " in result.output
    assert len(cache.entries()) == 1
    cleared = runner.invoke(cli, ["tune", "--clear"])
    assert cleared.exit_code == 0 and "removed 1 cached schedule(s) and" in cleared.output
    assert cache.entries() == []
    usage = runner.invoke(cli, ["tune"])
    assert usage.exit_code == 2
    missing = runner.invoke(cli, ["tune", str(source), "--kernel", "nope"])
    assert missing.exit_code == 2 and "no kernel 'nope'" in missing.output


STATIC_BATCH = SOURCE.replace("x?>", "x700>")


def test_a_program_that_fixes_its_batch_is_timed_at_it():
    from tinyc.tune.measure import own_batch

    assert own_batch(compile_to_spirv(STATIC_BATCH, validate=False).kernels["k"]) == 700
    assert own_batch(compile_to_spirv(SOURCE, validate=False).kernels["k"]) is None


def test_the_representative_batch_has_at_least_ten_thousand_work_groups(device):
    from tinyc.tune.measure import MIN_WORK_GROUPS, Bench

    info = _info(device)
    assert Bench(SOURCE, "k", device, info).batch >= MIN_WORK_GROUPS == 10_000
    assert Bench(STATIC_BATCH, "k", device, info).batch == 700, "the program's own batch"
    assert Bench(SOURCE, "k", device, info, batch=64).batch == 64, "the caller's batch"


def test_tune_true_times_at_the_batch_of_the_environment(cache_dir, device, monkeypatch):
    monkeypatch.setenv("TINYC_TUNE_BATCH", "321")
    monkeypatch.setenv("TINYC_TUNE_BUDGET", "1")
    tinyc.compile(SOURCE, device=device, tune=True)
    (path,) = cache.entries()
    entry = json.loads(path.read_text())
    assert entry["batch"] == 321
    assert entry["space"] >= entry["candidates"] >= 1
