"""2-D output tiles of a static GEMM (plan.py: a tile of the first group label and a cut of
one more output label): the plan takes them where the shared operand is large, never on a
`?` label; every transpose, order, dtype, short tile and the tuner's (tile, cut) pairs give
NumPy's values within the summation bound (tests/tolerances.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.contractions import api, knobs as knob_space, plan as plans, tuning
from tinyc.contractions.compiled import Signature, analyse, kernel_spec
from tinyc.contractions.knobs import Knobs
from tolerances import assert_within, sum_error_bound

rng = np.random.default_rng(29)
TYPE = {np.dtype("float32"): "f32", np.dtype("float64"): "f64", np.dtype("complex64"): "c32"}


def rand(shape, dtype="float32", order="C"):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return np.asarray(values.astype(dtype), order=order)


def plan_of(subscripts, *arrays, knobs=None):
    sigs = [Signature("numpy", x.dtype, x.shape, x.strides) for x in arrays]
    return kernel_spec(analyse(subscripts, sigs, None, None, None), None, knobs=knobs).plan


def check(got, subscripts, arrays):
    wide = [x.astype(np.complex128 if x.dtype.kind == "c" else np.float64) for x in arrays]
    want = np.einsum(subscripts, *wide)
    magnitude = np.einsum(subscripts, *[np.abs(x) for x in wide])
    inputs, output = subscripts.split("->")
    sizes = {label: n for term, x in zip(inputs.split(","), arrays) for label, n in zip(term, x.shape)}
    terms = int(np.prod([sizes[label] for label in sizes if label not in output]))   # the summed labels
    assert_within(got, want, sum_error_bound(terms, TYPE[arrays[0].dtype], magnitude), subscripts)


@pytest.fixture(autouse=True)
def fresh_kernels():
    """Each test plans its own kernels (the knobs differ between tests)."""
    for cache in (api._kernels, api._calls, api._plain):
        cache.clear()
    yield
    for cache in (api._kernels, api._calls, api._plain):
        cache.clear()


def test_a_large_static_gemm_takes_square_tiles_of_the_output():
    a, b = rand((512, 512)), rand((512, 512))
    plan = plan_of("ij,jk->ik", a, b)
    assert not plan.dynamic
    assert (plan.tile, plan.cut, plan.n_groups) == (64, 64, 64)
    assert plan.cut_label not in plan.groups and plan.cut_label in "ik"


def test_a_small_output_with_a_long_sum_takes_fewer_larger_pieces():
    """64 x 2048 x 64: 16 tiles of 16 x 16 rather than 64 work-groups that each read all
    of B for one column of the output (a gemv each)."""
    a, b = rand((64, 2048)), rand((2048, 64))
    plan = plan_of("ij,jk->ik", a, b)
    assert (plan.tile, plan.cut, plan.n_groups) == (16, 16, 16)
    check(tinyc.einsum("ij,jk->ik", a, b), "ij,jk->ik", [a, b])


@pytest.mark.parametrize("subscripts, shapes", [
    ("ij,jk->ik", [(128, 128), (128, 128)]),          # the shared operand fits: one tile
    ("ij,jk->ik", [(1000, 300), (300, 520)]),         # i is a `?` label: never cut
    ("bij,bjk->bik", [(64, 32, 32), (64, 32, 32)]),   # a batch keeps the groups busy
])
def test_no_cut(subscripts, shapes):
    plan = plan_of(subscripts, *[rand(s) for s in shapes])
    assert not plan.cut


@pytest.mark.parametrize("subscripts, shapes, order", [
    ("ij,jk->ik", [(512, 512), (512, 512)], "C"),
    ("ij,kj->ik", [(512, 256), (512, 256)], "C"),
    ("ji,jk->ik", [(256, 512), (256, 512)], "C"),
    ("ij,jk->ki", [(512, 384), (384, 512)], "F"),
    ("ij,jk->ik", [(384, 300), (300, 384)], "C"),     # tiles of 48 by 48
])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_values_against_numpy(subscripts, shapes, order, dtype):
    arrays = [rand(s, dtype, order) for s in shapes]
    assert plan_of(subscripts, *arrays).cut, "the case must take 2-D tiles"
    check(tinyc.einsum(subscripts, *arrays), subscripts, arrays)


@pytest.mark.parametrize("tile, cut, taken", [(48, 32, 32), (64, 128, 128), (16, 16, 16), (64, 0, 0),
                                              (64, 48, 0)])
def test_the_tuners_pairs_short_tiles_included(tile, cut, taken, monkeypatch):
    """Knobs the tuner may choose: big and small pieces, no cut, a tile that does not divide
    its label (a short last tile: its own copy of the body, guarded by the tile's end, which
    the launch-bounds analysis follows through the quotient); a cut that does not divide
    its label gives no cut."""
    monkeypatch.setattr(tuning, "knobs_for", lambda *args: Knobs("groups", tile=tile, cut=cut))
    a, b = rand((512, 256)), rand((256, 512))
    plan = plan_of("ij,jk->ik", a, b, knobs=Knobs("groups", tile=tile, cut=cut))
    assert (plan.tile, plan.cut) == (tile, taken)
    cut = taken
    assert plan.n_groups == -(-512 // tile) * (512 // cut if cut else 1)
    check(tinyc.einsum("ij,jk->ik", a, b), "ij,jk->ik", [a, b])
    out = rand((512, 512))
    old = out.copy()
    tinyc.einsum("ij,jk->ik", a, b, out=out, alpha=0.5, beta=2.0)
    want = 0.5 * np.einsum("ij,jk->ik", a.astype(np.float64), b.astype(np.float64)) + 2.0 * old
    magnitude = 0.5 * np.abs(a).astype(np.float64) @ np.abs(b) + 2.0 * np.abs(old)
    assert_within(out, want, sum_error_bound(258, "f32", magnitude), "alpha, beta")


def test_the_tuner_tries_pairs_and_no_cut():
    plan = plan_of("ij,jk->ik", rand((512, 512)), rand((512, 512)))
    found = knob_space.candidates(plan)
    assert found[0] == Knobs("groups", tile=64, cut=64)
    assert Knobs("groups", tile=64, cut=0) in found
    assert all(512 % k.cut == 0 for k in found if k.cut)


def test_printed_program_says_how_many_work_groups(tmp_path):
    from click.testing import CliRunner

    from tinyc.cli import cli

    printed = CliRunner().invoke(cli, ["einsum", "ij,jk->ik", "--shape", "A=512x512", "--shape", "B=512x512"])
    assert printed.exit_code == 0, printed.output
    assert "; static shapes (no batch label); launch 64 work-groups" in printed.output
    path = tmp_path / "gemm.ir"
    path.write_text(printed.output)
    ran = CliRunner().invoke(cli, ["run", str(path), "--batch", "64", "--check", "--repeat", "1"])
    assert ran.exit_code == 0, ran.output
    assert "results match the NumPy reference" in ran.output
    refused = CliRunner().invoke(cli, ["run", str(path), "--batch", "65"])
    assert refused.exit_code != 0 and "the largest batch these arguments take is 64" in refused.output


def test_cut_elements_is_the_threshold(monkeypatch):
    a, b = rand((512, 512)), rand((512, 512))
    monkeypatch.setattr(plans, "CUT_ELEMENTS", 512 * 512 + 1)
    assert not plan_of("ij,jk->ik", a, b).cut
    monkeypatch.setattr(plans, "CUT_ELEMENTS", 512 * 512)
    assert plan_of("ij,jk->ik", a, b).cut == 64


@pytest.mark.parametrize("n", [4099, 1031])
def test_a_short_last_tile_of_a_static_label_launches(n):
    """A static label no tile divides (a prime): the last tile is short. Its branch is
    guarded by the tile's end, which the launch-bounds analysis follows; it once refused
    the launch einsum itself made (LaunchError: the largest batch these arguments take)."""
    a, b = rand((n, 8)), rand((8, n))
    plan = plan_of("ij,jk->ik", a, b)
    assert not plan.dynamic and plan.tile and n % plan.tile
    check(tinyc.einsum("ij,jk->ik", a, b), "ij,jk->ik", [a, b])
