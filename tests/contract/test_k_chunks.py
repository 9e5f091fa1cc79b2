"""A work-group's large gemm (not gemm.t.t) cut along its summed mode (collectives.k_chunk): chunks of
K_CHUNK rows, the first with beta and the rest accumulating, a short last chunk of its own
size; never for gemm.t.t, complex numbers or small gemms. Values against
NumPy within the summation bound (tests/tolerances.py), alpha and beta included."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tinyc
from tinyc.contractions import collectives
from tinyc.contractions.compiled import Signature, analyse, kernel_spec
from tinyc.contractions.emit import build_kernel
from tolerances import assert_within, sum_error_bound

rng = np.random.default_rng(31)
TYPE = {np.dtype("float32"): "f32", np.dtype("float64"): "f64", np.dtype("complex64"): "c32"}


def rand(shape, dtype="float32"):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def source(subscripts, *arrays) -> str:
    sigs = [Signature("numpy", x.dtype, x.shape, x.strides) for x in arrays]
    return build_kernel(kernel_spec(analyse(subscripts, sigs, None, None, None), None)).checked_source()


def gemms(text: str) -> list[str]:
    """The kernel's gemm instructions (one when uncut; the first chunk, the loop's and the
    short last chunk's when cut)."""
    return [line for line in text.splitlines() if line.strip().startswith("gemm.")]


@pytest.mark.parametrize("summed, output, chunk", [
    (1024, 64 * 64, 64), (128, 128 * 128, 64), (127, 64 * 64, 0), (1024, 16 * 16, 0), (None, 4096, 0),
])
def test_the_rule(summed, output, chunk):
    assert collectives.k_chunk(summed, output, False, False) == chunk
    assert collectives.k_chunk(summed, output, True, False) == 0     # gemm.t.t
    assert collectives.k_chunk(summed, output, False, True) == 0     # complex


@pytest.mark.parametrize("summed, rows, chunk", [(300, 32, 32), (300, 150, 150), (300, 151, 0), (300, 0, 0),
                                                  (None, 32, 0)])
def test_the_knob_needs_two_chunks_of_a_static_sum(summed, rows, chunk):
    """The tuner's rows apply to every form (gemm.t.t and complex too) and any output."""
    for form in ((False, False), (True, False), (False, True)):
        assert collectives.k_chunk(summed, 16, *form, rows) == chunk


@pytest.mark.parametrize("subscripts, shapes, dtype, count", [
    ("ij,jk->ik", [(1024, 1024), (1024, 1024)], "float32", 2),       # gemm.n.n in 64 x 64 tiles
    ("bij,bjk->bik", [(4, 128, 128), (4, 128, 128)], "float32", 2),   # a batch of 128³
    ("ij,jk->ik", [(512, 300), (300, 512)], "float64", 3),            # 4 chunks and 44 rows
    ("ij,jk->ki", [(512, 384), (384, 512)], "float32", 1),            # gemm.t.t
    ("ji,jk->ik", [(300, 256), (300, 256)], "float32", 3),            # gemm.n.t: 4 chunks and 44 rows
    ("ij,kj->ik", [(256, 320), (256, 320)], "float64", 2),            # gemm.t.n: 5 chunks
    ("ij,jk->ik", [(512, 512), (512, 512)], "complex64", 1),          # complex
    ("bij,bjk->bik", [(4, 16, 512), (4, 512, 16)], "float32", 1),     # a 16 x 16 output
])
def test_which_gemms_are_cut_and_their_values(subscripts, shapes, dtype, count):
    arrays = [rand(s, dtype) for s in shapes]
    text = source(subscripts, *arrays)
    assert len(gemms(text)) == count, text
    chunks = count > 1
    if chunks:
        assert re.search(r"for %\w+ = %\w+, %\w+, %\w+ \{", text), "the chunks' loop steps by the chunk"
    wide = [x.astype(np.complex128 if x.dtype.kind == "c" else np.float64) for x in arrays]
    want = np.einsum(subscripts, *wide)
    magnitude = np.einsum(subscripts, *[np.abs(x) for x in wide])
    inputs, output = subscripts.split("->")
    first = inputs.split(",")[0]
    terms = int(np.prod([arrays[0].shape[first.index(label)] for label in first if label not in output]))
    assert_within(tinyc.einsum(subscripts, *arrays), want, sum_error_bound(terms, TYPE[np.dtype(dtype)], magnitude),
                  subscripts)
    out = rand(want.shape, dtype)
    old = out.astype(want.dtype)
    tinyc.einsum(subscripts, *arrays, out=out, alpha=0.5, beta=-2.0)   # beta only on the first chunk
    assert_within(out, 0.5 * want - 2.0 * old,
                  sum_error_bound(terms + 2, TYPE[np.dtype(dtype)], 0.5 * magnitude + 2.0 * np.abs(old)),
                  subscripts + " alpha, beta")


# -- the tuner's knob (knobs.Knobs.kchunk) --------------------------------------------------
def knob_source(subscripts, arrays, kchunk) -> str:
    from tinyc.contractions.knobs import Knobs

    sigs = [Signature("numpy", x.dtype, x.shape, x.strides) for x in arrays]
    return build_kernel(kernel_spec(analyse(subscripts, sigs, None, None, None), None,
                                    knobs=Knobs("groups", kchunk=kchunk))).checked_source()


@pytest.mark.parametrize("kchunk, count", [(0, 1), (32, 3), (128, 3), (150, 2), (300, 1), (None, 3)])
def test_the_knob_sets_the_rows_per_chunk(kchunk, count):
    """0 is one gemm; a chunk the summed mode holds at least twice cuts it (300 rows:
    32 → 9 whole chunks and 12 rows; 128 → 2 and 44; 150 → 2; the rule's 64 → 4 and 44);
    a chunk longer than half the mode leaves one gemm."""
    arrays = [rand((512, 300), "float64"), rand((300, 512), "float64")]
    text = knob_source("ij,jk->ik", arrays, kchunk)
    assert len(gemms(text)) == count, text
    if kchunk:
        sizes = {int(m.group(1)) for m in re.finditer(r"memref<f64x\d+x(\d+)", text)}
        assert kchunk in sizes or count == 1, text


@pytest.mark.parametrize("kchunk", [0, 32, 128])
def test_a_tuned_chunk_gives_numpys_values(kchunk):
    from tinyc.contractions.compiled import compile_contraction
    from tinyc.contractions.knobs import Knobs

    A, B = rand((512, 300), "float64"), rand((300, 512), "float64")
    a = analyse("ij,jk->ik", [Signature("numpy", x.dtype, x.shape, x.strides) for x in (A, B)], None, None, None)
    c = compile_contraction(a, None, None, False, Knobs("groups", kchunk=kchunk))
    out = np.zeros((512, 512))
    c.kernel(1.0, 0.0, A.T, B.T, out.T, batch=c.groups(a))
    assert_within(out, A @ B, sum_error_bound(300, "f64", np.abs(A) @ np.abs(B)), f"kchunk {kchunk}")


def test_the_tuner_tries_chunks_only_where_a_sum_is_long():
    from tinyc.contractions.knobs import KCHUNKS, Knobs, candidates

    def tried(subscripts, shapes):
        arrays = [rand(s) for s in shapes]
        sigs = [Signature("numpy", x.dtype, x.shape, x.strides) for x in arrays]
        plan = kernel_spec(analyse(subscripts, sigs, None, None, None), None).plan
        return {k.kchunk for k in candidates(plan)} - {None}

    assert tried("ij,jk->ik", [(512, 512), (512, 512)]) == set(KCHUNKS)
    assert tried("ij,jk->ik", [(512, 32), (32, 512)]) == set()
    assert Knobs.from_dict(Knobs("groups", tile=32, kchunk=128).as_dict()).kchunk == 128
