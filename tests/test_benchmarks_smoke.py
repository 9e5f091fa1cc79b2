"""Smoke test of benchmarks/: the suite runs end to end in a tiny configuration.

It asserts correctness against NumPy (every OpenCL C variant, NumPy itself,
and tinyc wherever tinyc can build the case), never speed: timings on a
shared 2-core machine say nothing in a test. A tinyc side that is "not
available" (compiler feature still missing) is allowed; a wrong result is not.
"""

from __future__ import annotations

import json
from pathlib import Path

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
    config = Config(warmup=0, repeat=1, variants="first")
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
def test_tinyc_is_correct_or_reported_unavailable(results, index):
    result = results[index]
    for r in (r for r in result.impls if r.family in ("tinyc", "tinyc-raw")):
        assert r.status == "ok" or r.status.startswith("not available"), (result.name, r.family, r.status)


def test_reports_are_written(results, tmp_path):
    meta = {"device": {"name": "d", "filter_string": "f", "driver_version": "v"},
            "blas": {"numpy": "x", "threadpools": []}, "method": "wall clock"}
    write_json(tmp_path / "results.json", results, meta)
    write_markdown(tmp_path / "results.md", results, meta)
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [c["case"] for c in doc["cases"]] == list(SMOKE_CASES)
    assert doc["cases"][0]["best"]["opencl"]["gflops"] > 0
    assert "| gemm.t.n f32 8×8 | 40 |" in (tmp_path / "results.md").read_text()
