"""A work-group's large gemm.n.n cut along its summed mode (collectives.k_chunk): chunks of
K_CHUNK rows, the first with beta and the rest accumulating, a short last chunk of its own
size; never for a transposed operand, complex numbers or small gemms. Values against
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
    assert collectives.k_chunk(summed, output) == chunk


@pytest.mark.parametrize("subscripts, shapes, dtype, count", [
    ("ij,jk->ik", [(1024, 1024), (1024, 1024)], "float32", 2),       # gemm.n.n in 64 x 64 tiles
    ("bij,bjk->bik", [(4, 128, 128), (4, 128, 128)], "float32", 2),   # a batch of 128³
    ("ij,jk->ik", [(512, 300), (300, 512)], "float64", 3),            # 4 chunks and 44 rows
    ("ij,jk->ki", [(512, 384), (384, 512)], "float32", 1),            # gemm.t.t
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
    terms = arrays[0].shape[-1]   # the summed label j is the first operand's last
    assert_within(tinyc.einsum(subscripts, *arrays), want, sum_error_bound(terms, TYPE[np.dtype(dtype)], magnitude),
                  subscripts)
    out = rand(want.shape, dtype)
    old = out.astype(want.dtype)
    tinyc.einsum(subscripts, *arrays, out=out, alpha=0.5, beta=-2.0)   # beta only on the first chunk
    assert_within(out, 0.5 * want - 2.0 * old,
                  sum_error_bound(terms + 2, TYPE[np.dtype(dtype)], 0.5 * magnitude + 2.0 * np.abs(old)),
                  subscripts + " alpha, beta")
