"""The batch label joined with its neighbour (joins.py): `ik,kjb->ijb` as `ik,kZ->iZ`.

A join is exact only for the strides of the call, so these tests check where it
happens and where it must not (a slice of the batch, Fortran order, a diagonal),
and that every joined contraction gives np.einsum's values: new results, `out=`
of every layout, alpha and beta, many batch sizes from one compile, the batch
split over sub-devices, the bounds-checked kernel, a `Contraction`, and the
printed program under `tinyc run`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinyc
from tinyc.contractions import api
from tinyc.contractions.compiled import Signature, analyse
from tinyc.fuzz import calls

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tolerances import UNIT_ROUNDOFF, assert_within  # noqa: E402

rng = np.random.default_rng(21)


def rand(*shape: int, dtype: str = "float32") -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def joined(subscripts: str, *arrays: np.ndarray) -> dict:
    sigs = [Signature("numpy", a.dtype, a.shape, a.strides) for a in arrays]
    return analyse(subscripts, sigs, None, None, None).joined


def close(got, subscripts: str, arrays: list, alpha: float = 1.0, beta: float = 0.0, previous=None) -> None:
    """`got` = alpha·einsum(arrays) + beta·previous within the rounding bound of its type:
    γ·Σ|terms| for the contraction (calls.rounding_bound holds two evaluations: half of it),
    and a rounding each for the scaling and the sum with beta·previous; against float64."""
    got = np.asarray(got)
    terms = subscripts.split("->")[0].split(",")
    sizes = {label: n for term, a in zip(terms, arrays) for label, n in zip(term, a.shape)}
    wide = [a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) for a in arrays]
    exact = alpha * np.einsum(subscripts, *wide)
    u = UNIT_ROUNDOFF["c32" if got.dtype == np.complex64 else "f32" if got.dtype == np.float32 else "f64"]
    bound = abs(alpha) * calls.rounding_bound(subscripts, arrays, sizes, got.dtype) / 2 + 2 * u * np.abs(exact)
    if previous is not None:
        exact = exact + beta * previous.astype(np.float64)
        bound = bound + 2 * u * (abs(beta) * np.abs(previous) + np.abs(exact))
    assert got.shape == exact.shape
    assert_within(got, exact, bound, subscripts)


@pytest.mark.parametrize("subscripts, shapes, parts", [
    ("ik,kjb->ijb", [(16, 8), (8, 12, 300)], {"jb": ("j", "b")}),
    ("ijkb,li->ljkb", [(4, 5, 6, 300), (7, 4)], {"jkb": ("j", "k", "b")}),
    ("ijab,jkab->ikab", [(3, 3, 20, 300), (3, 3, 20, 300)], {"ab": ("a", "b")}),
    ("ijb,ijb->ijb", [(5, 7, 300), (5, 7, 300)], {"ijb": ("i", "j", "b")}),
    ("ijb->jb", [(5, 7, 300)], {"jb": ("j", "b")}),
])
def test_where_the_batch_joins(subscripts, shapes, parts):
    arrays = [rand(*s) for s in shapes]
    assert joined(subscripts, *arrays) == parts


@pytest.mark.parametrize("subscripts, arrays", [
    ("ik,kjb->ijb", [rand(16, 8), rand(8, 12, 310)[:, :, 5:305]]),        # a slice of the batch
    ("ik,kjb->ijb", [rand(16, 8), np.asfortranarray(rand(8, 12, 300))]),  # the batch slowest
    ("ikb,kjb->ijb", [rand(6, 8, 300), rand(8, 5, 300)]),                  # neighbours differ
    ("ijb,jb->ib", [rand(5, 7, 300), rand(7, 300)]),                       # after b: j, j, i
    ("ik,kjb->ijb", [rand(16, 8), rand(8, 12, 1)]),                        # a batch of one
])
def test_where_it_must_not(subscripts, arrays):
    assert joined(subscripts, *arrays) == {}


@pytest.mark.parametrize("subscripts, shapes", [
    ("ik,kjb->ijb", [(16, 8), (8, 12, "N")]),
    ("ijkb,li->ljkb", [(4, 5, 6, "N"), (7, 4)]),
    ("ij,jk,kl,lmb->imb", [(3, 4), (4, 5), (5, 6), (6, 7, "N")]),
    ("ijab,jkab->ikab", [(3, 4, 20, "N"), (4, 2, 20, "N")]),
    ("ijb,jb->ijb", [(5, 7, "N"), (7, "N")]),
    ("ijb->jb", [(5, 7, "N")]),
])
def test_joined_contractions_give_numpys_values_at_every_batch(subscripts, shapes):
    before = len(api._kernels)
    for n in (64, 65, 100, 1000, 3001):
        arrays = [rand(*[n if d == "N" else d for d in s]) for s in shapes]
        close(tinyc.einsum(subscripts, *arrays), subscripts, arrays)
    assert len(api._kernels) - before <= 1   # one compile for every batch size


def test_out_alpha_beta_and_layouts():
    A, B = rand(16, 8), rand(8, 12, 500)
    for out in (np.zeros((16, 12, 500), np.float32), np.zeros((16, 12, 500), np.float32, order="F"),
                np.zeros((16, 12, 520), np.float32)[:, :, 10:510]):
        previous = rand(*out.shape)
        out[...] = previous
        tinyc.einsum("ik,kjb->ijb", A, B, out=out, alpha=2.0, beta=-0.5)
        close(out, "ik,kjb->ijb", [A, B], 2.0, -0.5, previous)


def test_split_checked_and_dtypes():
    A, B = rand(6, 5, dtype="float64"), rand(5, 4, 700, dtype="float64")
    close(tinyc.einsum("ik,kjb->ijb", A, B, device=tinyc.devices("opencl:cpu", split=True)), "ik,kjb->ijb", [A, B])
    close(tinyc.einsum("ik,kjb->ijb", A, B, check_bounds=True), "ik,kjb->ijb", [A, B])
    Ai, Bi = rng.integers(-9, 9, (6, 5)), rng.integers(-9, 9, (5, 4, 700))
    assert np.array_equal(tinyc.einsum("ik,kjb->ijb", Ai, Bi), np.einsum("ik,kjb->ijb", Ai, Bi))
    Ac, Bc = A + 1j * A, B - 2j * B
    close(tinyc.einsum("ik,kjb->ijb", Ac, Bc), "ik,kjb->ijb", [Ac, Bc])


def test_a_contraction_shows_the_users_labels():
    c = tinyc.contract("ik,kjb->ijb", (16, 8), (8, 12, None))
    assert c.path == ["ik,kjb->ijb"]
    assert c.batch_labels == "b"
    for n in (1, 9, 640):
        A, B = rand(16, 8), rand(8, 12, n)
        close(c(A, B), "ik,kjb->ijb", [A, B])


def test_the_printed_program_says_what_is_joined_and_runs(tmp_path):
    command = [sys.executable, "-m", "tinyc.cli", "einsum", "ik,kjb->ijb", "--shape", "A=16x8",
               "--shape", "B=8x12x300"]
    printed = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert "; jb: the modes j, b joined into one" in printed and "njb = 12*nb" in printed
    assert "; path: ik,kjb->ijb" in printed
    path = tmp_path / "joined.ir"
    path.write_text(printed)
    for extra in ([], ["--batch", "5"]):
        run = subprocess.run([sys.executable, "-m", "tinyc.cli", "run", str(path), "--check", *extra],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert "results match the NumPy reference" in run.stdout + run.stderr
