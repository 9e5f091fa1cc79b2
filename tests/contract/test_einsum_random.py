"""Random contractions (hypothesis) against np.einsum on the device.

Operands get random labels (repeated ones too), sizes 1-5 per label,
random memory layouts (axes permuted, some views strided) and an explicit
output of a random subset of the labels, or the implicit one. Examples are
derandomized so CI sees the same 40 every run (one JIT each).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinyc

LABELS = "abcdef"


@st.composite
def contractions(draw):
    n_ops = draw(st.integers(1, 4))
    sizes = {c: draw(st.integers(1, 5)) for c in LABELS}
    terms = [draw(st.lists(st.sampled_from(LABELS), min_size=0, max_size=4)) for _ in range(n_ops)]
    used = sorted({c for t in terms for c in t})
    if draw(st.booleans()):
        output = None
    else:
        output = draw(st.permutations(used))[: draw(st.integers(0, len(used)))]
    dtype = draw(st.sampled_from(["float32", "float64", "complex64"]))
    layouts = [draw(st.permutations(range(len(t)))) for t in terms]
    strided = [draw(st.booleans()) for _ in terms]
    seed = draw(st.integers(0, 2**31))
    return terms, output, sizes, dtype, layouts, strided, seed


def make_operand(rng, shape, dtype, layout, strided):
    """An array of `shape` whose memory order is `layout`, optionally a strided view."""
    stored = tuple(shape[d] * (2 if strided else 1) for d in layout)
    values = rng.standard_normal(stored)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(stored)
    values = values.astype(dtype)
    if strided:
        values = values[tuple(slice(None, None, 2) for _ in stored)]
    return values.transpose(np.argsort(layout))


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(contractions())
def test_random_contractions_match_numpy(device, case):
    terms, output, sizes, dtype, layouts, strided, seed = case
    rng = np.random.default_rng(seed)
    subscripts = ",".join("".join(t) for t in terms)
    if output is not None:
        subscripts += "->" + "".join(output)
    operands = [make_operand(rng, tuple(sizes[c] for c in t), dtype, lay, s)
                for t, lay, s in zip(terms, layouts, strided)]
    want = np.einsum(subscripts, *operands)
    got = tinyc.einsum(subscripts, *operands)
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    assert float(np.abs(np.asarray(got) - want).max(initial=0.0)) <= tol * scale, subscripts
