"""Smoke test of benchmarks/: the suite runs end to end in a tiny configuration.

It asserts correctness against NumPy (every OpenCL C variant, NumPy itself,
and both tinyc sides, which must build, run and be timed), never speed:
timings on a shared 2-core machine say nothing in a test.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.cases import all_cases, make_case
from benchmarks.report import write_json, write_markdown
from benchmarks.suite import Config, run_case

SMOKE_CASES = ("gemm_tn_f32_8", "fused")


@pytest.fixture(scope="module")
def queue(device):
    from benchmarks.device import make_queue

    return make_queue(device.filter_string)


@pytest.fixture(scope="module")
def results(queue):
    config = Config(warmup=0, repeat=1, variants="first", tune_budget=2.0)
    return [run_case(make_case(name, batch=40), queue, config, log=lambda _: None) for name in SMOKE_CASES]


def test_every_case_has_its_sources():
    for case in all_cases():
        assert case.source.strip(), case.name
        for variant in case.opencl_variants():
            assert (Path(__file__).parent.parent / "benchmarks" / "opencl" / variant.file).exists()


@pytest.mark.parametrize("index", range(len(SMOKE_CASES)))
def test_baselines_are_correct(results, index):
    result = results[index]
    for family in ("opencl", "numpy"):
        impls = [r for r in result.impls if r.family == family]
        assert impls, family
        for r in impls:
            assert r.status == "ok", (result.name, family, r.variant, r.status)
            assert r.times and r.times[0] > 0


@pytest.mark.parametrize("index", range(len(SMOKE_CASES)))
def test_tinyc_builds_and_is_correct(results, index):
    result = results[index]
    sides = [r for r in result.impls if r.family in ("tinyc", "tinyc-raw")]
    assert [r.family for r in sides] == ["tinyc", "tinyc-raw"]
    for r in sides:
        assert r.status == "ok", (result.name, r.family, r.status)
        assert r.times and r.times[0] > 0


@pytest.mark.parametrize("index", range(len(SMOKE_CASES)))
def test_the_tuned_side_is_correct_or_the_default_kernel(results, index):
    """Tuned kernels are checked against the reference like every side; a tuned
    kernel whose SPIR-V is the default's reports the default's measurements."""
    result = results[index]
    tuned = [r for r in result.impls if r.family in ("tinyc-tuned", "tinyc-tuned-raw")]
    assert [r.family for r in tuned] == ["tinyc-tuned", "tinyc-tuned-raw"]
    for r in tuned:
        assert r.status in ("ok", "same kernel"), (result.name, r.family, r.status)
        assert r.ok and r.median > 0
        assert r.setup_s is not None and r.setup_s > 0, "compile and tuning time"


def test_a_tinyc_compile_error_is_reported_as_a_failure(queue, monkeypatch):
    """The suite keeps its baselines when tinyc fails, but says so (and the test above fails)."""
    from benchmarks.cases import Case
    from benchmarks.suite import Config, _tinyc_runners

    case = make_case("axpby_f32_64", batch=2)
    monkeypatch.setattr(Case, "source", property(lambda self: "func @axpby("))
    init = case.inputs(np.random.default_rng(0))
    runners = _tinyc_runners(case, queue, case.to_device(queue, init), init, case.reference(init),
                             Config(tune_budget=1.0))
    assert [r.result.status.split(" (")[0] for r in runners] == ["failed to compile"] * 4


def test_reports_are_written(results, tmp_path):
    meta = {"device": {"name": "d", "filter_string": "f", "driver_version": "v"},
            "blas": {"numpy": "x", "threadpools": []}, "method": "wall clock"}
    write_json(tmp_path / "results.json", results, meta)
    write_markdown(tmp_path / "results.md", results, meta)
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [c["case"] for c in doc["cases"]] == list(SMOKE_CASES)
    assert doc["cases"][0]["best"]["opencl"]["gflops"] > 0
    assert "| gemm.t.n f32 8×8 | 40 |" in (tmp_path / "results.md").read_text()


def test_the_launch_path_benchmark_runs_and_checks_its_results(device, tmp_path, monkeypatch):
    """benchmarks/launch_path.py at a tiny batch: every variant's result is checked against
    NumPy before it is timed (check_fused raises otherwise), and the report has its three tables."""
    pytest.importorskip("dpnp")
    import sys

    from benchmarks import launch_path

    out = tmp_path / "launch_path.md"
    monkeypatch.setattr(sys, "argv", ["launch_path", "--batch", "64", "--rounds", "1", "--out", str(out)])
    launch_path.main()
    text = out.read_text()
    for row in ("dpnp, A stacked", "raw dpctl submit and wait (USM)", "two sub-devices, A a list",
                "two sub-devices, A a list: Python only (CPU)"):
        assert f"| {row} |" in text


def test_the_launch_floor_benchmark_runs_and_checks_its_results(device, tmp_path):
    """benchmarks/launch_floor.py with few calls: each tinyc call it times is first checked
    against NumPy (it raises otherwise), and its table is written."""
    from benchmarks import launch_floor

    assert launch_floor.main(["--repeat", "8", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "launch_floor.md").read_text()
    assert "the floor, hot" in text and "`x.T @ y` (`bi,bj->ij`)" in text and "after a NumPy BLAS call" in text


def test_the_einsum_suites_static_set_runs_and_checks_its_results(device, tmp_path):
    """benchmarks/einsum_suite.py --set static with two cases and few rounds: every result is
    checked against np.einsum in float64 before it is timed (main returns 1 on a wrong one),
    and the table says "Static shapes" instead of a batch size."""
    from benchmarks import einsum_suite

    cases = "gemm_256,transpose"
    assert einsum_suite.main(["--set", "static", "--cases", cases, "--repeat", "2", "--warmup", "1",
                              "--out", str(tmp_path)]) == 0
    text = (tmp_path / "einsum_static.md").read_text()
    assert "**Static shapes: geomean" in text and "(2 cases)" in text
    assert "| gemm_256 | static GEMM | `ij,jk->ik` |" in text and "(view)" in text
    rows = json.loads((tmp_path / "einsum_static.json").read_text())["rows"]
    assert [r["case"] for r in rows] == ["gemm_256", "transpose"] and all("wrong" not in r for r in rows)
