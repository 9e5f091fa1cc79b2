"""Long reductions: a label every operand holds and the output does not, cut into chunks.

`bi,bj->ij` (a weight gradient), `bij->ij`, `bij,bjk->ik`: the one-kernel plan sums
such a label inside each output entry, with few work-groups. Cut into chunks
(chunked.py), the chunks are the batch of a contraction writing partial
sums, and a second kernel adds them up. Checked here against NumPy in float64
within the summation bound (tests/tolerances.py), for every shape of call the
path takes: a short last chunk or none, out= with alpha and beta, a Fortran
order result, an out with gaps, `...`, integers that wrap,
dtype=, check_bounds; and that every size of the label runs on the same
kernels, that the result is the same on every run, and that the one-kernel
plan is kept where cutting does not pay. Also the lanes sharing a long sum
in the general step (direct.py), which the chunks' own dot products use.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.contractions import api, chunked
from tinyc.contractions.compiled import analyse
from tinyc.contractions.running import signature
from tolerances import assert_within, sum_error_bound

rng = np.random.default_rng(23)
TYPE = {np.dtype("float32"): "f32", np.dtype("float64"): "f64", np.dtype("complex64"): "c32",
        np.dtype("complex128"): "c64"}


def rand(shape, dtype="float32"):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    if np.dtype(dtype).kind in "iu":
        values = rng.integers(-50, 50, shape)
    return values.astype(dtype)


@pytest.fixture(autouse=True)
def small_operands_cut(monkeypatch, request):
    """The cases here are small (fast tests): cut them whatever their bytes, except in the test
    of the default thresholds; the decisions cached per signature are forgotten around each."""
    if "default_thresholds" not in request.node.name:
        monkeypatch.setattr(chunked, "MIN_BYTES", 0)
        monkeypatch.setattr(chunked, "MIN_FULL_BYTES", 0)
    api._chunkings.clear()
    yield
    api._chunkings.clear()


def cut_of(subscripts, *arrays, out=None):
    """The Chunking the call takes, or None."""
    sigs = [signature(x) for x in arrays]
    a = analyse(subscripts, sigs, signature(out) if out is not None else None, None, None)
    return chunked.plan_chunks(a, sigs, out, None)


def check(got, subscripts, arrays, alpha=1, beta=0, old=None):
    """got = alpha·einsum + beta·old within the summation bound of the result's type: γ_K·Σ|terms|
    for the K terms of each entry, and a rounding each for alpha, beta and their sum."""
    from tinyc.contractions import subscripts as subs

    sub = subs.parse(subscripts, [x.shape for x in arrays])
    terms = max(int(np.prod([n for label, n in sub.sizes.items() if label not in sub.output])), 1)
    wide = [x.astype(np.complex128 if x.dtype.kind == "c" else np.float64) for x in arrays]
    want = alpha * np.einsum(subscripts, *wide)
    magnitude = abs(alpha) * np.einsum(subscripts, *[np.abs(x) for x in wide])
    if old is not None:
        want = want + beta * old
        magnitude = magnitude + abs(beta) * np.abs(old)
    t = TYPE[np.asarray(got).dtype]
    extra = 2 if t in ("c32", "c64") else 0   # (a complex product: within √2·γ_2 < γ_3 of exact)
    assert np.shape(got) == np.shape(want)
    assert_within(got, want, sum_error_bound(terms + 3 + extra, t, magnitude), subscripts)


CASES = [  # subscripts, shapes (the long label first or last), what they stand for
    ("bi,bj->ij", [(3000, 16), (3000, 16)]),          # a weight gradient, batch first
    ("ib,jb->ij", [(16, 3000), (16, 3000)]),          # the same, batch last
    ("bij,bjk->ik", [(4001, 8, 6), (4001, 6, 5)]),    # a sum of products of matrices
    ("bij->ij", [(5000, 8, 8)]),                      # a reduction over the batch
    ("bij->ji", [(4501, 30, 35)]),                    # 1,050 entries: two tiles of the sum, one short
    ("bij,bj->i", [(20000, 8, 7), (20000, 7)]),         # a sum of matrix-vector products
    ("b...,b->...", [(20000, 4, 8), (20000,)]),      # broadcast dimensions, a weight per entry
]


@pytest.mark.parametrize("subscripts,shapes", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_values_against_numpy(subscripts, shapes, dtype):
    arrays = [rand(s, dtype) for s in shapes]
    assert cut_of(subscripts, *arrays) is not None, "the case must take the chunked path"
    check(tinyc.einsum(subscripts, *arrays), subscripts, arrays)


@pytest.mark.parametrize("size", [1, 2, 63, 64, 65, 1000, 4096, 4097, 20011])
def test_every_size_of_the_label_one_set_of_kernels(size):
    """Sizes with no whole chunk, exactly whole chunks, a short last one: right values, and
    after the first call no kernel is compiled for a new size."""
    x, y = rand((20000, 16)), rand((20000, 16))
    tinyc.einsum("bi,bj->ij", x, y)   # (the kernels of this layout, compiled once)
    kernels, sums = api.cache_info()["entries"], len(chunked._finish_kernels)
    a, b = rand((size, 16)), rand((size, 16))
    check(tinyc.einsum("bi,bj->ij", a, b), "bi,bj->ij", [a, b])
    if cut_of("bi,bj->ij", a, b) is not None:
        assert (api.cache_info()["entries"], len(chunked._finish_kernels)) == (kernels, sums)


def test_short_last_chunk_and_none():
    x, y = rand((20000, 16)), rand((20000, 16))
    cut = cut_of("bi,bj->ij", x, y)
    assert cut is not None and cut.size == 20000
    for n in (cut.length * 40, cut.length * 40 + 1, cut.length * 41 - 1):
        for _ in range(3):   # (later calls relaunch by address, queued: the padded rows must live)
            a, b = x[:n].copy(), y[:n].copy()
            check(tinyc.einsum("bi,bj->ij", a, b), "bi,bj->ij", [a, b])


def test_out_alpha_beta_and_layouts():
    x, y = rand((5000, 12)), rand((5000, 10))
    out = rand((12, 10))
    old = out.copy()
    assert cut_of("bi,bj->ij", x, y, out=out) is not None
    got = tinyc.einsum("bi,bj->ij", x, y, out=out, alpha=0.5, beta=2.0)
    assert got is out
    check(out, "bi,bj->ij", [x, y], 0.5, 2.0, old)
    fortran = np.asfortranarray(rand((12, 10)))   # written in its own memory order
    old = fortran.copy()
    tinyc.einsum("bi,bj->ij", x, y, out=fortran, beta=-1.0)
    check(fortran, "bi,bj->ij", [x, y], 1, -1.0, old)
    gaps = rand((12, 20))[:, ::2]                 # an out with gaps: through a temporary
    old = gaps.copy()
    tinyc.einsum("bi,bj->ij", x, y, out=gaps, alpha=3.0, beta=1.0)
    check(gaps, "bi,bj->ij", [x, y], 3.0, 1.0, old)
    before = rand((12, 20))
    base = before.copy()
    tinyc.einsum("bi,bj->ij", x, y, out=base[:, ::2])
    assert np.array_equal(base[:, 1::2], before[:, 1::2]), "the gaps of out were written"
    result = tinyc.einsum("bi,bj->ij", x, y, order="F")
    assert result.flags.f_contiguous
    check(result, "bi,bj->ij", [x, y])


def test_strided_and_transposed_operands():
    base = rand((6000, 32))
    x, y = base[::2, ::2], base[1::2, 1::2]       # gaps in both modes
    check(tinyc.einsum("bi,bj->ij", x, y), "bi,bj->ij", [x, y])
    z = np.asfortranarray(rand((3000, 16)))
    check(tinyc.einsum("bi,bj->ij", z, z), "bi,bj->ij", [z, z])


FULL = [  # full reductions: no output label, the chunks' partial sums are scalars
    ("bi,bi->", [(20000, 16), (20000, 16)]),          # a Frobenius product, batch first
    ("ib,ib->", [(16, 20001), (16, 20001)]),          # batch last
    ("b,b->", [(70001,), (70001,)]),                  # a dot product
    ("b->", [(70000,)]),                              # a sum (one operand, stride 1: one entry)
    ("bij->", [(5001, 8, 8)]),
]


@pytest.mark.parametrize("subscripts,shapes", FULL, ids=[c[0] for c in FULL])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_full_reductions_as_numpy_scalars(subscripts, shapes, dtype):
    arrays = [rand(s, dtype) for s in shapes]
    assert cut_of(subscripts, *arrays) is not None, "the case must take the chunked path"
    got = tinyc.einsum(subscripts, *arrays)
    assert isinstance(got, np.dtype(dtype).type)   # a NumPy scalar, as np.einsum returns
    check(got, subscripts, arrays)


def test_full_reduction_into_out_with_alpha_beta_the_same_bits_every_run():
    x, y = rand((30001, 16)), rand((30001, 16))
    out = np.array(rand((1,))[0])
    old = out.copy()
    got = tinyc.einsum("bi,bi->", x, y, out=out, alpha=0.5, beta=-2.0)
    assert got is out and out.shape == ()
    check(out, "bi,bi->", [x, y], 0.5, -2.0, old)
    first = tinyc.einsum("bi,bi->", x, y)
    for _ in range(3):
        assert tinyc.einsum("bi,bi->", x, y) == first
    assert tinyc.einsum("bi,bi->", x, y, check_bounds=True) == first


def test_integers_wrap_as_numpy_and_dtype_is_kept():
    x, y = rand((40000, 8), "int32"), rand((40000, 8), "int32")
    assert np.array_equal(tinyc.einsum("bi,bj->ij", x, y), np.einsum("bi,bj->ij", x, y))
    u = rng.integers(0, 255, (40000, 8)).astype(np.uint8)
    got = tinyc.einsum("bi,bj->ij", u, u)
    assert got.dtype == np.uint8 and np.array_equal(got, np.einsum("bi,bj->ij", u, u))
    f = rand((40000, 8))
    got = tinyc.einsum("bi,bj->ij", f, f, dtype=np.float64)
    assert got.dtype == np.float64
    check(got, "bi,bj->ij", [f.astype(np.float64), f.astype(np.float64)])


def test_same_result_every_run_and_bounds_checked():
    """The chunks are summed in order: no run-to-run difference, and the bounds-checked
    kernels give the same bits."""
    x, y = rand((30001, 16)), rand((30001, 16))
    first = tinyc.einsum("bi,bj->ij", x, y)
    for _ in range(3):
        assert np.array_equal(tinyc.einsum("bi,bj->ij", x, y), first)
    assert np.array_equal(tinyc.einsum("bi,bj->ij", x, y, check_bounds=True), first)


def test_a_contraction_object_takes_the_path():
    c = tinyc.contract("bi,bj->ij", (4000, 16), (4000, 16))
    x, y = rand((4000, 16)), rand((4000, 16))
    check(c(x, y), "bi,bj->ij", [x, y])


@pytest.mark.parametrize("subscripts,shapes,why", [
    ("bi,bj->ij", [(40, 16), (40, 16)], "too short: fewer than MIN_CHUNKS chunks"),
    ("bij,bjk->ik", [(50, 64, 64), (50, 64, 64)], "a large output: P would outweigh the operands"),
    ("bi,bj->bij", [(3000, 4), (3000, 4)], "the label is in the output"),
    ("bi,j->ij", [(3000, 4), (4,)], "not every operand holds the label"),
    ("bb->", [(300, 300)], "a diagonal"),
    ("ij,ij->i", [(64, 20000), (64, 20000)], "a batch label in the output: the one kernel is parallel"),
    ("ij,j->i", [(2048, 2048), (2048,)], "the label not 4x longer than the output (LONGER)"),
])
def test_kept_on_one_kernel(subscripts, shapes, why):
    arrays = [rand(s) for s in shapes]
    assert cut_of(subscripts, *arrays) is None, why
    check(tinyc.einsum(subscripts, *arrays), subscripts, arrays)


@pytest.mark.parametrize("subscripts,shapes,cut", [
    ("bi,bj->ij", [(20000, 16), (20000, 16)], True),    # 2.6 MB: 19 ms in one kernel, 0.3 cut
    ("bij,bjk->ik", [(20000, 8, 8)] * 2, True),
    ("bi,bj->ij", [(2000, 16), (2000, 16)], False),     # 0.26 MB: the sums stay in the caches
    ("ijb->ij", [(8, 8, 20000)], False),                # one operand, the label its stride-1 mode
    ("bij->", [(20000, 8, 8)], False),                  # a full reduction under 16 MiB: one work-group
    ("b,b->", [(10**6,), (10**6,)], False),
    ("bi,bi->", [(150000, 16), (150000, 16)], True),    # 19 MB: the chunks spread over the cores
])
def test_default_thresholds(subscripts, shapes, cut):
    arrays = [rand(s) for s in shapes]
    assert (cut_of(subscripts, *arrays) is not None) == cut
    check(tinyc.einsum(subscripts, *arrays), subscripts, arrays)


def test_chunk_length_depends_on_static_sizes_only():
    from tinyc.contractions import subscripts as subs

    lengths = {chunked.chunk_length(subs.parse("bi,bj->ij", [(n, 16), (n, 16)]), "b") for n in (100, 10**6)}
    assert len(lengths) == 1
    small = chunked.chunk_length(subs.parse("b,b->", [(10, ), (10, )]), "b")
    assert small == chunked.MAX_CHUNK


@pytest.mark.parametrize("n", [16, 63, 64, 1000, 4099])
def test_lanes_share_a_long_sum_in_the_general_step(n):
    """A dot product in one kernel (too short to cut): LANES partial sums per entry in local
    memory, added in order after a barrier; the values against NumPy."""
    x, y = rand((n,)), rand((n,))
    c = tinyc.contract("b,b->", (n,), (n,))
    if n >= 64:
        assert "alloca" in c.source and "barrier.local" in c.source
    check(c(x, y), "b,b->", [x, y])
    a, b = rand((3, n)), rand((3, n))
    check(tinyc.einsum("ib,ib->i", a, b), "ib,ib->i", [a, b])
    full = tinyc.contract("bij,bij->", (n, 4, 5), (n, 4, 5))   # (its summed modes fused first)
    assert "fuse" in full.source and "barrier.local" in full.source
    a, b = rand((n, 4, 5)), rand((n, 4, 5))
    check(full(a, b), "bij,bij->", [a, b])


def _random_case(r: np.random.Generator):
    """Random subscripts where `b` is held by every operand and summed away, odd layouts."""
    terms = []
    for _ in range(int(r.integers(1, 4))):
        t = list(r.choice(list("ijkl"), int(r.integers(0, 3)), replace=False))
        t.insert(int(r.integers(0, len(t) + 1)), "b")
        terms.append("".join(t))
    labels = sorted(set("".join(terms)) - {"b"})
    out = [x for x in labels if r.random() < 0.7] or labels[:1]
    r.shuffle(out)
    sizes = {x: int(r.integers(1, 7)) for x in labels}
    sizes["b"] = int(r.choice([700, 33001, 70000]))
    dtype = str(r.choice(["float32", "float64", "complex64", "int32", "uint8"]))
    arrays = []
    for t in terms:
        x = rand(tuple(sizes[c] for c in t), dtype)
        way = r.random()
        if way < 0.2 and x.ndim > 1:
            x = np.asfortranarray(x)
        elif way < 0.4:
            x = x[..., ::-1]
        elif way < 0.55:
            x = x.astype(x.dtype.newbyteorder())
        elif way < 0.7:
            wide = np.zeros(tuple(2 * n for n in x.shape), x.dtype)
            wide[tuple(slice(None, None, 2) for _ in x.shape)] = x
            x = wide[tuple(slice(None, None, 2) for _ in x.shape)]
        arrays.append(x)
    return ",".join(terms) + "->" + "".join(out), arrays


@pytest.mark.parametrize("seed", range(30))
def test_random_long_reductions(seed):
    """Fixed-seed slice of the campaign of random long reductions (f16 is left out of it: not cut)."""
    subscripts, arrays = _random_case(np.random.default_rng(1000 + seed))
    got = tinyc.einsum(subscripts, *arrays)
    if np.asarray(got).dtype.kind in "iu":
        assert np.array_equal(got, np.einsum(subscripts, *arrays))
    else:
        check(got, subscripts, arrays)
