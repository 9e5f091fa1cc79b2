"""One compile for every batch size, batch entries on the lanes, views like NumPy's.

The batch labels of a contraction are `?` modes of its kernel: a call with a
new batch size reuses the compiled kernel (no tinyc.compile, no JIT). Where
the batch mode is the fastest (C order with the batch last) the entries go
on the lanes of a subgroup; results are checked against np.einsum for many
batch sizes (short last chunks and tiles included).
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.contractions import api
from tinyc.contractions.compiled import Signature, analyse, kernel_spec

rng = np.random.default_rng(11)


def rand(*shape, dtype="float32", order="C"):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    values = values.astype(dtype)
    return np.asfortranarray(values) if order == "F" else values


def close(got, want, dtype="float32"):
    tol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    assert np.shape(got) == np.shape(want)
    assert float(np.abs(np.asarray(got) - want).max(initial=0)) <= tol * scale


def spec(subscripts, *shapes, order="C", dtype=np.float32):
    sigs = []
    for s in shapes:
        a = np.empty(s, dtype, order=order)
        sigs.append(Signature("numpy", a.dtype, a.shape, a.strides))
    return kernel_spec(analyse(subscripts, sigs, None, None, None), None)


CASES = [  # subscripts, shapes with N for the batch, order
    ("ikb,kjb->ijb", ["16x8xN", "8x12xN"], "C"),      # batch fastest: lanes
    ("bij,bjk->bik", ["Nx16x8", "Nx8x12"], "C"),      # batch slowest: entries per work-group
    ("ikb,kj->ijb", ["16x8xN", "8x12"], "C"),         # a shared operand, on the lanes
    ("ikb,kj->ijb", ["16x8xN", "8x12"], "F"),         # a shared operand, tiles of the batch
    ("kl,lmb,mn->knb", ["5x6", "6x4xN", "4x3"], "C"),  # a chain, intermediates per entry
    ("ij,jk,kl,lmb->imb", ["6x5", "5x4", "4x3", "3x2xN"], "C"),   # shared products first
    ("bij,bj->bi", ["Nx5x4", "Nx4"], "F"),
    ("ib,jb->ijb", ["5xN", "3xN"], "C"),
    ("ijb->ib", ["5x4xN"], "C"),
    ("ijab,jkab->ikab", ["3x4x2xN", "4x5x2xN"], "C"),  # two batch modes
]


def _shapes(shapes, n):
    return [tuple(n if d == "N" else int(d) for d in s.split("x")) for s in shapes]


@pytest.mark.parametrize("subscripts, shapes, order", CASES)
def test_every_batch_size_runs_on_one_kernel(device, monkeypatch, subscripts, shapes, order):
    """Batch sizes from 1 up; where an operand lacks the batch label (a shared matrix, a
    single operand) the batch is the largest label, so there sizes from 17 up (larger than
    the other labels); with two batch modes, the larger is the first batch label; an array
    with a batch of one is both C- and Fortran-contiguous (NumPy), so Fortran order from 2."""
    dtype = "float64" if "l" in subscripts else "float32"
    first = [rand(*s, dtype=dtype, order=order) for s in _shapes(shapes, 1000)]
    close(tinyc.einsum(subscripts, *first), np.einsum(subscripts, *first), dtype)
    kernels = api.cache_info()["entries"]
    compiled = []
    monkeypatch.setattr(tinyc.compiler, "compile", lambda *a, **k: compiled.append(a) or pytest.fail("compiled"))
    shared = any("N" not in s for s in shapes) or len(shapes) == 1
    # two batch modes: the larger is the first; Fortran order: a batch of one is C-contiguous too
    smallest = 17 if shared else 3 if "a" in subscripts else 2 if order == "F" else 1
    for n in [n for n in (1001, 17, 3, 2, 1, 333, 4096 + 7) if n >= smallest]:
        ops = [rand(*s, dtype=dtype, order=order) for s in _shapes(shapes, n)]
        close(tinyc.einsum(subscripts, *ops), np.einsum(subscripts, *ops), dtype)
    assert not compiled and api.cache_info()["entries"] == kernels


@pytest.mark.parametrize("subscripts, shapes, order", [
    ("abij,abjk->abik", ["10xNx4x5", "10xNx5x6"], "C"),     # blocks of entries: b split off by %nb
    ("abij,abjk->abik", ["Nx10x8x8", "Nx10x8x8"], "C"),
    ("aibj,ajbk->aibk", ["20x8xNx8", "20x8xNx8"], "C"),
    ("kabi,kajb->ijab", ["4x7xNx5", "4x7x3xN"], "C"),       # both batch labels dynamic in a sum
    ("ijab,jkab->ikab", ["3x4x7xN", "4x5x7xN"], "F"),
])
def test_two_batch_labels_split_by_a_batch_size_run_unchecked(device, subscripts, shapes, order):
    """A batch entry's number split into two batch labels by a `?` size (rem and div by
    max(%nb, 1)): the compiler bounds every access, so calls run the unchecked kernel, at
    every batch size (it was a remainder by a variable: every call ran bounds-checked)."""
    for n in (1, 2, 57, 300):
        ops = [rand(*s, order=order) for s in _shapes(shapes, n)]
        c = tinyc.Contraction(subscripts, ops)
        kernel = c.program["einsum"]
        assert kernel.info.launch.bounded and not kernel._unbounded, kernel.info.unbounded
        close(c(*ops), np.einsum(subscripts, *ops))
        close(tinyc.einsum(subscripts, *ops), np.einsum(subscripts, *ops))


def test_alpha_beta_and_out_with_every_batch_size(device):
    for n in (3, 40, 1000):
        a, b = rand(16, 8, n), rand(8, 12, n)
        out = rand(16, 12, n)
        want = 2.0 * np.einsum("ikb,kjb->ijb", a, b) + 0.5 * out
        tinyc.einsum("ikb,kjb->ijb", a, b, out=out, alpha=2.0, beta=0.5)
        close(out, want)


def test_lanes_for_the_fastest_batch_mode_groups_for_the_slowest():
    lanes = spec("ikb,kjb->ijb", (16, 8, 100), (8, 12, 100)).plan
    assert lanes.lanes is not None and lanes.lanes.label == "b" and lanes.dynamic == {"b"}
    groups = spec("ikb,kjb->ijb", (16, 8, 100), (8, 12, 100), order="F").plan
    assert groups.lanes is None and groups.dynamic == {"b"}
    source = spec("ikb,kjb->ijb", (16, 8, 100), (8, 12, 100)).plan
    assert source.groups_for({"i": 16, "j": 12, "k": 8, "b": 100000}) == -(-100000 // lanes.lanes.chunk)


def spec_of(subscripts, *arrays):
    sigs = [Signature("numpy", a.dtype, a.shape, a.strides) for a in arrays]
    return kernel_spec(analyse(subscripts, sigs, None, None, None), None)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_lanes_gather_a_small_operand_only(device, dtype):
    """The output's stride-1 batch goes on the lanes when the one operand that holds the batch
    at another stride is small beside the stride-1 tensors (lanes.GATHER_SHARE: its elements
    are gathered); otherwise entries per work-group. Batch sizes below, at and past a subgroup
    and a chunk (the batch label must be the largest label to be dynamic: from 33 up)."""
    for n in (1, 7, 17, 1001):
        cases = [("ijb,jb->ib", True, rand(32, 32, n, dtype=dtype), rand(32, n, dtype=dtype, order="F")),
                 ("ik,kjb->ijb", False, rand(12, 5, dtype=dtype), rand(5, 5, n, dtype=dtype, order="F")),
                 ("bij->b", False, rand(n, 16, 12, dtype=dtype)),
                 ("bij,bjk->ikb", False, rand(n, 8, 8, dtype=dtype), rand(n, 8, 8, dtype=dtype))]
        for subscripts, lanes, *ops in cases:
            if n > 32:
                assert (spec_of(subscripts, *ops).plan.lanes is not None) == lanes, subscripts
            close(tinyc.einsum(subscripts, *ops), np.einsum(subscripts, *ops), dtype)


def test_lane_kernel_is_one_subgroup_with_a_guard():
    from tinyc.compiler import check_source
    from tinyc.contractions.emit import build_kernel

    source = build_kernel(spec("ikb,kj->ijb", (16, 8, 100), (8, 12))).checked_source()
    check_source(source)
    assert "memref<f32x?x8x16>" in source and "subgroup_size=16" in source
    assert "builtin.subgroup_local_id" in source and "cmp.lt" in source and "parallel" in source


def test_no_tile_that_loops_over_the_contiguous_mode(device):
    """A shared operand tiles the batch only where the tile's gemms keep the output's stride-1
    label as a matrix mode: in `blki,kj->blji` (C order) the batch fuses to l, and i (stride 1)
    would become a loop around strided gemms. Results against NumPy at several batch sizes."""
    assert spec("blki,kj->blji", (2000, 5, 6, 9), (6, 9)).plan.tile == 0
    assert spec("bik,kj->bij", (2000, 16, 8), (8, 12)).plan.tile > 0    # i joins the batch
    for n in (1, 63, 2000):
        a, b = rand(n, 5, 6, 9), rand(6, 9)
        close(tinyc.einsum("blki,kj->blji", a, b), np.einsum("blki,kj->blji", a, b))


def test_plan_depends_on_the_key_alone():
    """The kernel is planned at a representative batch size: the same for 20 and 10^6 entries."""
    from tinyc.contractions.emit import build_kernel

    for sub, shapes in [("bij,bjk->bik", [(20, 4, 4), (20, 4, 4)]), ("ikb,kj->ijb", [(8, 8, 20), (8, 8)])]:
        small = build_kernel(spec(sub, *shapes)).checked_source()
        big = [tuple(10**6 if n == 20 else n for n in s) for s in shapes]
        assert build_kernel(spec(sub, *big)).checked_source() == small


def test_contract_takes_the_batch_as_none_and_any_batch_size(device):
    c = tinyc.contract("bij,bjk->bik", (None, 4, 3), (None, 3, 2), dtype="f64")
    assert c.batch_labels == "b" and "memref<f64x3x4x?>" in c.source
    for n in (1, 7, 500):
        a, b = rand(n, 4, 3, dtype="float64"), rand(n, 3, 2, dtype="float64")
        close(c(a, b), np.einsum("bij,bjk->bik", a, b), "float64")
    with pytest.raises(ValueError, match=r"made for \(16384, 4, 3\) \(any size along the batch label b\)"):
        c(rand(5, 4, 4, dtype="float64"), rand(5, 4, 2, dtype="float64"))


@pytest.mark.parametrize("subscripts, shape", [
    ("bij->bji", (5, 3, 4)), ("ijk->kij", (2, 3, 4)), ("ii->i", (4, 4)), ("bii->ib", (3, 4, 4)),
    ("ij->ij", (3, 4)), ("...ij->...ji", (2, 3, 4)),
])
def test_permutations_and_diagonals_are_views_as_in_numpy(subscripts, shape):
    a = rand(*shape)
    got, want = tinyc.einsum(subscripts, a), np.einsum(subscripts, a)
    assert np.shares_memory(got, a) and got.flags.writeable
    assert got.shape == want.shape and got.strides == want.strides
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("layout", ["C", "F", "reversed", "swapped"])
def test_a_diagonal_seen_before_is_the_same_view_again(layout):
    """A diagonal's second call takes the remembered view (api._diagonals): the same shape,
    strides, dtype and memory as np.einsum's, writeable, for any layout of the operand."""
    from tinyc.contractions import api

    a = rand(6, 5, 5)
    a = {"C": a, "F": np.asfortranarray(a), "reversed": a[::-1], "swapped": a.astype(a.dtype.newbyteorder())}[layout]
    tinyc.einsum("bii->bi", a)
    assert ("bii->bi", a.shape, a.strides, a.dtype) in api._diagonals
    got, want = tinyc.einsum("bii->bi", a), np.einsum("bii->bi", a)
    assert (got.shape, got.strides, got.dtype) == (want.shape, want.strides, want.dtype)
    assert np.shares_memory(got, a) and got.flags.writeable
    np.testing.assert_array_equal(got, want)
    got[0, 1] = 7.0
    assert a[0, 1, 1] == 7.0


def test_no_view_where_numpy_makes_an_array(device):
    a = rand(3, 4)
    for result in (tinyc.einsum("ij->ji", a, alpha=2.0), tinyc.einsum("ij->i", a)):
        assert not np.shares_memory(result, a)
    out = np.empty((4, 3), np.float32)
    assert tinyc.einsum("ij->ji", a, out=out) is out
    close(out, a.T)


def test_path_in_the_users_labels():
    c = tinyc.contract("kl,lmb,mn->knb", (20, 20), (20, 9, 1000), (9, 9))
    assert c.path == ["kl,lmb->kmb", "mn,kmb->knb"]
    chain = tinyc.contract("ij,jk,kl,lmb->imb", (32, 24), (24, 16), (16, 12), (12, 8, 1000))
    assert chain.path[-1] == "lmb,il->imb" and all("(shared)" in p for p in chain.path[:-1])
    dots = tinyc.contract("...ij,...jk->...ik", (5, 4, 3), (5, 3, 2))
    assert dots.path == ["aij,ajk->aik"]


@pytest.mark.parametrize("knobs", [
    "Knobs('lanes', 16, 4)", "Knobs('lanes', 64, 8)", "Knobs('lanes', 32, 6, ksplit=2)",
    "Knobs('lanes', 32, 4, ksplit=3)", "Knobs('groups', block=1)", "Knobs('groups', block=4)",
])
def test_every_knob_computes_the_contraction(device, knobs):
    """The tuner's knobs change the schedule, never the result (alpha, beta, relu, a chain)."""
    from tinyc.contractions.compiled import compile_contraction
    from tinyc.contractions.knobs import Knobs
    from tinyc.contractions.running import Call, run

    chosen = eval(knobs, {"Knobs": Knobs})
    for subscripts, shapes, epilogue in [("ikb,kjb->ijb", [(5, 7, 333), (7, 4, 333)], "relu"),
                                         ("kl,lmb,mn->knb", [(6, 5), (5, 9, 77), (9, 3)], None),
                                         ("ijb->jb", [(4, 9, 50)], None)]:
        ops = [rand(*s, dtype="float64") for s in shapes]
        a = analyse(subscripts, [Signature("numpy", o.dtype, o.shape, o.strides) for o in ops], None, None,
                    epilogue)
        compiled = compile_contraction(a, epilogue, None, False, chosen)
        assert compiled.program.warnings == []          # generated code is warning-free
        out = rand(*a.out_shape, dtype="float64")
        want = 0.5 * np.einsum(subscripts, *ops) + 2.0 * out
        run(Call(a, compiled, compiled.groups(a)), ops, out, 0.5, 2.0)
        close(out, np.maximum(want, 0) if epilogue else want, "float64")


def test_lane_kernel_on_staged_operands_checks_clean(device):
    """A lane kernel whose last step reads and writes only local tensors indexed no global
    entry: its unused `base + slot` gave every call an unused-value warning (campaign seed 1)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((8, 9, 3, 5)).astype(np.float32)
    b = rng.standard_normal((24, 16, 10))[::2, ::2, ::2].astype(np.float32)
    c = rng.standard_normal((3, 8, 5)).astype(np.float32)
    got = tinyc.einsum("ljib,mlb,inb->lnb", a, b, c, alpha=2.5)
    want = 2.5 * np.einsum("ljib,mlb,inb->lnb", a.astype(np.float64), b, c)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
