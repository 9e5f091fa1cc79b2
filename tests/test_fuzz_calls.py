"""Calls with wrong and odd arguments (tinyc/fuzz/calls.py): a fixed-seed slice, and its parts.

A launch runs correctly or raises one of the documented errors before anything
runs; arrays sit in canary-filled buffers, so a write outside an array is seen
whether the call ran or raised. The slice runs in a subprocess: a crash of the
process is a failure here, not the end of the test session.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from tinyc.fuzz import calls

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tolerances import UNIT_ROUNDOFF, assert_within, sum_error_bound  # noqa: E402

CI_SEED = 20261127
SUMMARY = re.compile(r"^calls (\d+) ran (\d+) raised (\d+) out-of-bounds (\d+) unexpected (\d+) wrong (\d+)$")


def test_fixed_seed_slice_of_the_calls_campaign(device):
    done = subprocess.run([sys.executable, "-m", "tinyc.fuzz.calls", "--calls", "240", "--seed", str(CI_SEED),
                           "--kernels", "30"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    found = SUMMARY.match(done.stdout.strip().splitlines()[-1])
    assert found, done.stdout[-2000:]
    total, ran, raised, outside, unexpected, wrong = map(int, found.groups())
    assert (total, outside, unexpected, wrong) == (240, 0, 0, 0), done.stderr[-4000:]
    assert ran >= 60 and raised >= 30   # both kinds of outcome are exercised


def test_a_write_outside_the_array_is_seen():
    """The canary sees a write past the end and one into a stride's gap, not one inside."""
    values = np.arange(6, dtype=np.float32)
    for where, seen in ((lambda g: g.array.__setitem__((0, 0), 99.0), False),
                        (lambda g: g.buffer.__setitem__(calls.PAD + 1, 99.0), True),      # a gap (stride 2)
                        (lambda g: g.buffer.__setitem__(-1, 99.0), True),                 # past the end
                        (lambda g: g.buffer.__setitem__(calls.PAD - 1, 99.0), True)):     # before the start
        g = calls.guarded(values, (2, 3), (2, 4))
        assert np.array_equal(g.array, values.reshape(2, 3))
        where(g)
        assert g.intact() is not seen


def test_raises_are_classified_by_the_documented_errors():
    import tinyc

    assert calls._raised(tinyc.LaunchError("x"))[0] == "raised"
    assert calls._raised(TypeError("x"))[0] == "raised"
    assert calls._raised(KeyError("x"))[0] == "unexpected"
    assert calls._raised(AttributeError("x"))[0] == "unexpected"


def test_einsum_calls_compare_with_numpy(monkeypatch):
    """A tinyc.einsum that returned another value than np.einsum is counted as wrong."""
    import tinyc

    outcomes = {calls.einsum_call(random.Random(i), np.random.default_rng(i))[0] for i in range(40)}
    assert outcomes <= {"ran", "raised"} and "ran" in outcomes
    monkeypatch.setattr(tinyc, "einsum", lambda *a, **k: np.einsum(*a, **k) + 1)
    found = [calls.einsum_call(random.Random(i), np.random.default_rng(i)) for i in range(40)]
    assert any(outcome == "wrong" for outcome, _ in found)


def test_the_einsum_bound_is_the_summation_bound():
    """2·γ·Σ|terms|: m = (operands + 1) + (summed terms) roundings of u = eps/2 each, in the
    result's type; at least twice tests/tolerances.py's γ_K·Σ|terms| (two evaluations, each
    within it); NumPy's implicit output (labels used once, sorted) sums the same terms."""
    rng = np.random.default_rng(4)
    A, B = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
    sizes = {"i": 3, "j": 5, "k": 4}
    magnitude = np.abs(A).astype(np.float64) @ np.abs(B)
    want = 2 * (3 + 5) * UNIT_ROUNDOFF["f32"] * magnitude
    for text in ("ij,jk->ik", "ij,jk"):
        found = calls.rounding_bound(text, [A, B], sizes, np.dtype(np.float32))
        assert np.allclose(found, want, rtol=1e-12)
        assert np.all(found >= 2 * sum_error_bound(5, "f32", magnitude))
    assert_within(A @ B, A.astype(np.float64) @ B, sum_error_bound(5, "f32", magnitude))
    complex_bound = calls.rounding_bound("ij,jk->ik", [A + 0j, B + 0j], sizes, np.dtype(np.complex64))
    assert np.allclose(complex_bound, 2 * want)
