"""np.einsum's `order=` and `casting=` (and its corner cases) on tinyc.einsum: NumPy itself is the reference for
which calls are refused, for the layout of a new result and for its values."""

from __future__ import annotations

import itertools
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tinyc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tolerances import UNIT_ROUNDOFF, assert_within, sum_error_bound  # noqa: E402

rng = np.random.default_rng(11)


def assert_einsum_close(got, subscripts, ops, t):
    """`got` (computed in type t) against NumPy's float64 einsum of the same operands: Higham's
    bound of a sum of products in t and in f64 (either order), plus got's rounding to t."""
    wide = [np.asarray(x, np.float64) for x in ops]
    want = np.einsum(subscripts, *wide)
    magnitude = np.einsum(subscripts, *[np.abs(x) for x in wide])
    lhs, out = subscripts.split("->")
    sizes = {label: n for term, x in zip(lhs.split(","), ops) for label, n in zip(term, np.shape(x))}
    terms = math.prod(sizes[label] for label in set(lhs) - set(out) - {","})
    bound = sum_error_bound(terms, t, magnitude) + sum_error_bound(terms, "f64", magnitude) \
        + UNIT_ROUNDOFF[t] * np.abs(want)
    assert_within(got, want, bound, subscripts)


def outcome(run):
    """("ok", result) or (the exception's class, None)."""
    try:
        return "ok", run()
    except (TypeError, ValueError) as exc:
        return type(exc), None


LAYOUT_CASES = [
    ("bij,bjk->bik", [(40, 5, 4), (40, 4, 3)]),     # batch first
    ("ikb,kjb->ijb", [(5, 4, 40), (4, 3, 40)]),     # batch last
    ("ijk,kl->ijl", [(3, 4, 5), (5, 2)]),           # no batch
    ("ib,jb->ijb", [(6, 30), (5, 30)]),             # an outer product
    ("ijb->jb", [(4, 6, 30)]),                      # a reduction
]


@pytest.mark.parametrize("subscripts, shapes", LAYOUT_CASES)
@pytest.mark.parametrize("stored", ["C", "F"])
@pytest.mark.parametrize("order", ["C", "F", "A", "K", "f"])
def test_order_lays_out_a_new_result_as_numpy(device, subscripts, shapes, stored, order):
    ops = [np.asarray(rng.standard_normal(s), order=stored) for s in shapes]
    want = np.einsum(subscripts, *ops, order=order)
    got = tinyc.einsum(subscripts, *ops, order=order)
    assert_einsum_close(got, subscripts, ops, "f64")
    if order.upper() != "K":   # K: NumPy's own choice moves with optimize=; only the values count
        assert (got.flags.c_contiguous, got.flags.f_contiguous) == \
            (want.flags.c_contiguous, want.flags.f_contiguous), (got.strides, want.strides)


def test_order_keeps_the_view_numpy_returns(device):
    """A permutation is a view of the operand whatever the order, as np.einsum returns it."""
    a = rng.standard_normal((3, 4))
    for order in "CFAK":
        got, want = tinyc.einsum("ij->ji", a, order=order), np.einsum("ij->ji", a, order=order)
        assert np.shares_memory(got, a) == np.shares_memory(want, a)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("stored", ["<f4", ">f4", "<f2", "<i8", ">i4", "?"])
@pytest.mark.parametrize("options", [{}, {"dtype": "f8"}, {"dtype": "i4", "casting": "unsafe"},
                                     {"dtype": "f4", "casting": "no"}, {"dtype": "c16", "order": "C"}])
@pytest.mark.parametrize("subscripts", ["ij->ji", "ii->i", "ij->ij"])
def test_a_permutation_or_diagonal_is_numpys_view_whatever_the_options(device, stored, options, subscripts):
    """np.einsum returns a permutation or diagonal of one array as a view of it before it looks
    at dtype= and casting= (the view keeps the array's dtype, byte order included)."""
    a = rng.integers(0, 3, (4, 4)).astype(stored)
    want_kind, want = outcome(lambda: np.einsum(subscripts, a, **options))
    got_kind, got = outcome(lambda: tinyc.einsum(subscripts, a, **options))
    assert got_kind == want_kind
    assert np.shares_memory(got, a) == np.shares_memory(want, a)
    assert got.dtype == want.dtype and got.strides == want.strides
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("out_type", [">f8", ">f4", ">i4", ">c8"])
@pytest.mark.parametrize("casting", ["safe", "same_kind", "unsafe"])
def test_an_out_in_the_other_byte_order(device, out_type, casting):
    """out= of a non-native byte order: accepted and refused as NumPy does, the same values."""
    a, b = rng.integers(-3, 4, (6, 4, 5)).astype(np.float32), rng.integers(-3, 4, (6, 5, 3)).astype(np.float32)
    outs = [np.full((6, 4, 3), 7, out_type) for _ in range(2)]
    want_kind, _ = outcome(lambda: np.einsum("bij,bjk->bik", a, b, out=outs[0], casting=casting))
    got_kind, got = outcome(lambda: tinyc.einsum("bij,bjk->bik", a, b, out=outs[1], casting=casting))
    assert got_kind == want_kind
    if got_kind == "ok":
        assert got is outs[1]
        np.testing.assert_array_equal(outs[1], outs[0])


def test_a_contractions_dtype_converts_a_permutation(device):
    """A contraction's dtype= is what it computes in: its permutation is an array of that type."""
    c = tinyc.contract("ij->ji", (3, 4), dtype="f64")
    a = rng.standard_normal((3, 4)).astype(np.float32)
    got = c(a)
    assert got.dtype == np.float64 and not np.shares_memory(got, a)
    np.testing.assert_array_equal(got, a.T.astype(np.float64))


def test_an_order_after_a_plain_call_of_the_same_signature(device):
    """A repeated plain call takes a fast path by signature: an order must not reuse it."""
    a, b = rng.standard_normal((30, 4, 5)), rng.standard_normal((30, 5, 3))
    first = tinyc.einsum("bij,bjk->bik", a, b)
    assert first.flags.c_contiguous
    again = tinyc.einsum("bij,bjk->bik", a, b, order="F")
    assert again.flags.f_contiguous and not again.flags.c_contiguous
    assert_einsum_close(again, "bij,bjk->bik", [a, b], "f64")


DTYPES = ["float32", "float64", "complex64", "int32", "int8", "uint16"]
CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]


@pytest.mark.parametrize("casting", CASTINGS)
def test_casting_refuses_what_numpy_refuses(device, casting):
    """Every pair of operand dtypes with dtype= or out= of another: refused by tinyc exactly
    when np.einsum refuses it, and equal to NumPy's result when both run."""
    base = rng.integers(0, 4, size=(2, 3, 4)).astype(np.float64)   # (no negative float into an
    other = rng.integers(0, 4, size=(2, 4)).astype(np.float64)      # unsigned type: C leaves it undefined)
    ran = 0
    for a_type, b_type, target in itertools.product(DTYPES[:4], DTYPES[:4], DTYPES):
        a, b = base.astype(a_type), other.astype(b_type)
        for kind in ("dtype", "out"):
            def call(f):
                if kind == "dtype":
                    return f("bij,bj->bi", a, b, dtype=target, casting=casting)
                out = np.zeros((2, 3), target)
                return f("bij,bj->bi", a, b, out=out, casting=casting)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")   # NumPy's ComplexWarning of a complex result into a real out
                want_kind, want = outcome(lambda: call(np.einsum))
                got_kind, got = outcome(lambda: call(tinyc.einsum))
            label = (a_type, b_type, kind, target, casting)
            if want_kind is TypeError and got_kind is TypeError:
                continue
            assert got_kind == want_kind, label
            assert got.dtype == want.dtype, label
            np.testing.assert_array_equal(got, want, err_msg=str(label))   # small integers: exact
            ran += got_kind == "ok"
    assert ran >= 8   # (every rule lets equal dtypes through: 4 types, with dtype= and with out=)


@pytest.mark.parametrize("a_type, b_type, out_type", [
    ("int8", "uint8", "float16"),     # result_type(int8, uint8, float16) = float16: accepted
    ("int16", "int16", "float16"),    # float32 into float16: refused under 'safe'
    ("int8", "int8", "int32"),        # summed in int32 (no wrap at 8 bits)
    ("float32", "float32", "complex128"),
    ("uint8", "int8", "uint16"),      # int16 into uint16: refused
])
def test_out_takes_part_in_the_computations_type(device, a_type, b_type, out_type):
    """np.einsum computes in the result type of the operands and `out` together."""
    a = (rng.integers(0, 11, size=(5, 6)) * (1 if "u" in a_type else -1)).astype(a_type)   # exact in f16
    b = rng.integers(0, 11, size=(5, 4)).astype(b_type)
    want_kind, want = outcome(lambda: np.einsum("kj,kl->jl", a, b, out=np.zeros((6, 4), out_type)))
    got_kind, got = outcome(lambda: tinyc.einsum("kj,kl->jl", a, b, out=np.zeros((6, 4), out_type)))
    assert got_kind == want_kind
    assert want_kind in ("ok", TypeError)   # (never a mistake of the test's own shapes)
    if want_kind == "ok":
        np.testing.assert_array_equal(got, want)


def test_a_narrower_out_takes_the_result_rounded_once(device):
    """As NumPy: the sum runs in the operands' type and is converted into out at the end
    (in float32, 1e8 + 1 - 1e8 + 1 would lose the ones)."""
    x = np.array([[1e8, 1.0, -1e8, 1.0]] * 3)
    out = np.zeros(3, np.float32)
    assert tinyc.einsum("ij->i", x, out=out, casting="same_kind") is out
    np.testing.assert_array_equal(out, np.einsum("ij->i", x, out=np.zeros(3, np.float32), casting="same_kind"))
    np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])
    big = rng.integers(-2**40, 2**40, size=(3, 5, 60))
    small = np.zeros((3, 60), np.int8)   # int64 sums wrapped into int8 ('unsafe'), exactly NumPy's
    tinyc.einsum("ijb->ib", big, out=small, casting="unsafe")
    np.testing.assert_array_equal(small, np.einsum("ijb->ib", big, out=np.zeros((3, 60), np.int8),
                                                   casting="unsafe"))
    halves = rng.integers(-20, 20, size=(4, 6, 50)) * 0.5   # exact sums of halves, truncated to int32
    trunc = np.zeros((4, 50), np.int32)
    tinyc.einsum("ijb->ib", halves, out=trunc, casting="unsafe")
    np.testing.assert_array_equal(trunc, np.einsum("ijb->ib", halves, out=np.zeros((4, 50), np.int32),
                                                   casting="unsafe"))


def test_a_narrower_out_with_alpha_and_beta(device):
    """alpha·sum + beta·out in the wide type, rounded once into out."""
    a, b = rng.standard_normal((7, 5, 4)), rng.standard_normal((7, 4, 3))
    out = rng.standard_normal((7, 5, 3)).astype(np.float32)
    want = (2.0 * np.einsum("bij,bjk->bik", a, b) + 0.5 * out.astype(np.float64)).astype(np.float32)
    tinyc.einsum("bij,bjk->bik", a, b, out=out, alpha=2.0, beta=0.5, casting="same_kind")
    np.testing.assert_allclose(out, want, rtol=2 ** -23, atol=1e-12)   # one rounding (f64 sums: far below)


def test_options_are_checked_as_numpy_checks_them(device):
    a = np.ones((3, 4))
    with pytest.raises(ValueError, match="order must be one of 'C', 'F', 'A' or 'K', got 'X'"):
        tinyc.einsum("ij->i", a, order="X")
    with pytest.raises(ValueError, match="casting must be one of"):
        tinyc.einsum("ij->i", a, casting="bad")
    with pytest.raises(TypeError, match="casting must be a string"):
        tinyc.einsum("ij->i", a, casting=None)
    assert tinyc.einsum("ij,j->i", a, np.ones(4), order=None).flags.c_contiguous   # None is 'K', as NumPy
    with pytest.raises(TypeError, match="operand 0 of dtype float64 cannot be cast to float32 "
                                        r"\(casting rule 'safe'"):
        tinyc.einsum("ij->i", a, dtype="f32")   # NumPy refuses it too (its default rule is 'safe')
    with pytest.raises(TypeError):
        np.einsum("ij->i", a, dtype=np.float32)


def test_usm_out_is_never_narrowed(device):
    dpnp = pytest.importorskip("dpnp")
    a = dpnp.asarray(np.ones((3, 4)))
    with pytest.raises(TypeError, match="cannot convert the float64 result into the USM out of dtype float32"):
        tinyc.einsum("ij->i", a, out=dpnp.zeros(3, dtype=np.float32), casting="same_kind")


def test_a_contraction_converts_within_a_kind(device):
    """A contraction's dtype= is its declared type: its calls convert real arrays into it
    ('same_kind'), never complex into real."""
    c = tinyc.contract("bij,bjk->bik", (None, 4, 5), (None, 5, 3), dtype="f32")
    a, b = rng.standard_normal((9, 4, 5)), rng.standard_normal((9, 5, 3))
    got = c(a, b)
    assert got.dtype == np.float32
    assert_einsum_close(got, "bij,bjk->bik", [a, b], "f32")
    with pytest.raises(TypeError, match="operand 0 of dtype complex128 cannot be cast to float32"):
        c(a + 1j, b)


def test_casting_reaches_the_slices_over_devices(device):
    """dtype= below the operands' type with casting='unsafe', the batch split over sub-devices."""
    halves = tinyc.devices(device.filter_string, split=True)
    a, b = rng.standard_normal((5, 4, 300)), rng.standard_normal((4, 3, 300))
    got = tinyc.einsum("ikb,kjb->ijb", a, b, dtype="float32", casting="unsafe", device=halves)
    assert got.dtype == np.einsum("ikb,kjb->ijb", a, b, dtype=np.float32, casting="unsafe").dtype
    assert_einsum_close(got, "ikb,kjb->ijb", [a.astype(np.float32), b.astype(np.float32)], "f32")


def test_a_zero_dimensional_operand_as_it_is(device):
    """np.einsum("", x) of a 0-d x is a NumPy scalar (not a 0-d view)."""
    for x in (np.float64(3.0), np.array(2.5, np.float32), np.int16(7)):
        got, want = tinyc.einsum("", x), np.einsum("", x)
        assert type(got) is type(want) and got == want


def test_a_contraction_without_dtype_calls_as_einsum(device, monkeypatch):
    """Without dtype= a contraction's calls are einsum's own ('safe'), so a repeated plain call
    takes the by-signature fast path (api.run_plain), as before casting= existed."""
    from tinyc.contractions import api

    fast = []
    run_plain = api.run_plain
    monkeypatch.setattr(api, "run_plain", lambda *args: fast.append(1) or run_plain(*args))
    a = rng.standard_normal((4, 6, 50)).astype(np.float32)
    c = tinyc.contract("ijb->b", a)
    for _ in range(3):
        assert_einsum_close(c(a), "ijb->b", [a], "f32")
    assert len(fast) >= 2
    with pytest.raises(TypeError, match="casting rule 'safe'"):
        c(a, out=np.zeros(50, np.float16))   # narrowing needs a dtype-declared contraction's rule
