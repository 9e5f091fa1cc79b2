"""tune=True on einsum, contract and the recipes: tuned on the device, cached per device, one
tuned result for every variant a call compiles (alpha/beta constants or arguments, any batch).

The search itself is timing on a shared machine, so these tests check what it leaves behind
(the cache entry, the knobs and schedule the kernels then use), never which knob wins.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import tinyc
from tinyc.contractions import api, tuning
from tinyc.contractions.compiled import Signature, analyse
from tinyc.contractions.knobs import Knobs

rng = np.random.default_rng(5)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh tuning cache, a small budget, and no kernels cached in the process."""
    monkeypatch.setenv("TINYC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TINYC_TUNE_BUDGET", "1")
    api.clear_cache()
    yield tmp_path
    api.clear_cache()


def analysis_of(subscripts, *arrays):
    return analyse(subscripts, [Signature("numpy", a.dtype, a.shape, a.strides) for a in arrays], None, None,
                   None)


def test_einsum_tunes_once_and_caches_per_device(device, cache, monkeypatch):
    a, b = rng.random((8, 4, 300), np.float32), rng.random((4, 6, 300), np.float32)
    want = np.einsum("ikb,kjb->ijb", a, b)
    np.testing.assert_allclose(tinyc.einsum("ikb,kjb->ijb", a, b, tune=True), want, rtol=1e-5)
    entries = list((cache / "contractions").glob("*.json"))
    assert len(entries) == 1
    stored = json.loads(entries[0].read_text())
    assert "knobs" in stored and stored["report"]["entries"] == tuning.TUNE_ENTRIES
    api.clear_cache()
    monkeypatch.setattr(tuning, "search", lambda *args: pytest.fail("tuned again"))
    for n in (300, 1000):      # cached: no search, for another batch size too
        a, b = rng.random((8, 4, n), np.float32), rng.random((4, 6, n), np.float32)
        np.testing.assert_allclose(tinyc.einsum("ikb,kjb->ijb", a, b, tune=True),
                                   np.einsum("ikb,kjb->ijb", a, b), rtol=1e-5)


def test_tuned_knobs_apply_to_every_variant(device, cache):
    """A cached result (here written by hand) is used by the plain kernel (alpha = 1,
    beta = 0 as constants) and by the general one, at every batch size, without tune=True."""
    a, b = rng.random((300, 4, 4), np.float32), rng.random((300, 4, 4), np.float32)
    analysis = analysis_of("bij,bjk->bik", a, b)
    knobs = Knobs("groups", block=4, schedule={"gemm#0": {"k_unroll": 2}})
    tuning._store(tuning._path(analysis, None, None), knobs, {})
    out = np.zeros((300, 4, 4), np.float32)
    tinyc.einsum("bij,bjk->bik", a, b)
    tinyc.einsum("bij,bjk->bik", a, b, out=out, alpha=2.0, beta=1.0)
    c = tinyc.contract("bij,bjk->bik", rng.random((700, 4, 4), np.float32), rng.random((700, 4, 4), np.float32))
    kernels = list(api._kernels.values())
    assert len(kernels) == 2                       # plain and general; the contract shares the general
    for compiled in kernels:
        assert compiled.knobs == knobs and compiled.spec.plan.block == 4
        assert '"k_unroll": 2' in compiled.program.ir("lowered").splitlines()[0]
    np.testing.assert_allclose(out, 2 * np.einsum("bij,bjk->bik", a, b), rtol=1e-5)
    assert c.program is kernels[1].program or c.program is kernels[0].program


def test_a_corrupt_entry_is_ignored_with_a_warning(cache):
    a, b = rng.random((300, 4, 4), np.float32), rng.random((300, 4, 4), np.float32)
    path = tuning._path(analysis_of("bij,bjk->bik", a, b), None, None)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.warns(tinyc.TuningWarning, match="corrupt contraction tuning entry"):
        assert tuning.cached_knobs(analysis_of("bij,bjk->bik", a, b), None, None) is None


def test_recipe_variants_share_the_tuned_schedule(device, cache):
    """`tune=True` tunes the recipe's `gemm`; `gemm_beta0` gets the same schedule."""
    r = tinyc.recipes.small_gemm_batched("f32", True, False, 4, 4, 4, 4, 16, 4, 16, 4, 16, tune=True)
    lowered = r.program.ir("lowered")
    schedule = {}
    for line in lowered.splitlines():
        if line.startswith("; schedule"):
            schedule.update(json.loads(line.split(":", 1)[1]))
    assert set(schedule) == {"gemm", "gemm_beta0"} and schedule["gemm"] == schedule["gemm_beta0"]
    assert list((cache / "schedules").glob("*.json"))
    A, B = rng.random(16 * 50, np.float32), rng.random(16 * 50, np.float32)
    C = np.zeros(16 * 50, np.float32)
    r(50, 1.0, A, B, 0.0, C)
    want = np.einsum("bmk,bnk->bnm", A.reshape(50, 4, 4), B.reshape(50, 4, 4))   # column-major: [b, col, row]
    np.testing.assert_allclose(C.reshape(50, 4, 4), want, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int32", "uint16"])
def test_integer_contractions_tune(device, cache, dtype):
    """The tuner's synthetic operands and scalars suit integer kernels (signless: unsigned
    dtypes run as the signed type of their width)."""
    a = rng.integers(0, 1000, (6, 5, 300)).astype(dtype)
    b = rng.integers(0, 1000, (5, 4, 300)).astype(dtype)
    with np.errstate(over="ignore"):
        want = np.einsum("ikb,kjb->ijb", a, b)
    np.testing.assert_array_equal(tinyc.einsum("ikb,kjb->ijb", a, b, tune=True), want)


def test_timing_operands_of_large_entries_stay_within_a_bound(device):
    """Entries of 60,000 elements (the partial sums of a long weight gradient) at the usual
    20,000 entries would be 1.2 G elements: the bench takes fewer entries instead, and runs."""
    x, y = rng.random((10, 512, 64), np.float32), rng.random((10, 512, 48), np.float32)
    a = analysis_of("bij,bik->bjk", x, y)
    bench = tuning._Bench(a)
    assert sum(v.size for v in bench.views) <= tuning.MAX_ELEMENTS
    assert 1 <= bench.sizes["b"] < tuning.TUNE_ENTRIES
    from tinyc.contractions.compiled import compile_contraction

    assert bench.run(compile_contraction(a, None, None, False)) > 0
