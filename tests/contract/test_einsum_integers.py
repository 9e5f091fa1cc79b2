"""tinyc.einsum and tinyc.contract on the language's integer types (i8-i64, signless: NumPy's
signed and unsigned dtypes) and f16, against NumPy. Integer results are exact, overflow
included: products and sums wrap modulo 2^bits in the kernel as in NumPy, whatever the
order of the sum, so every element must be equal."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tinyc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tolerances import UNIT_ROUNDOFF, assert_within, sum_error_bound  # noqa: E402

rng = np.random.default_rng(20261127)

INTEGERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FAMILIES = {   # subscripts and operand shapes (the batch label b)
    "gemm, batch last": ("ikb,kjb->ijb", [(5, 6, 40), (6, 3, 40)]),
    "gemm, batch first": ("bij,bjk->bik", [(40, 5, 6), (40, 6, 3)]),
    "shared operand": ("ik,kjb->ijb", [(5, 6), (6, 3, 40)]),
    "mat-vec": ("ijb,jb->ib", [(7, 5, 40), (5, 40)]),
    "outer product": ("ib,jb->ijb", [(4, 40), (3, 40)]),
    "reduction": ("ijb->b", [(4, 5, 40)]),
    "kept reduction": ("bij->bj", [(40, 4, 5)]),
    "chain": ("kl,lmb,mn->knb", [(3, 4), (4, 5, 40), (5, 2)]),
    "trace": ("bii->b", [(40, 4, 4)]),
}


def full_range(shape, dtype):
    """Values over the dtype's whole range: products and sums overflow."""
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("family", ["gemm, batch last", "reduction", "outer product"])
def test_every_integer_dtype_wraps_as_numpy(device, dtype, family):
    subscripts, shapes = FAMILIES[family]
    ops = [full_range(s, dtype) for s in shapes]
    got = tinyc.einsum(subscripts, *ops)
    want = np.einsum(subscripts, *ops)
    assert got.dtype == want.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("batch", [1, 7, 300])
def test_int32_every_family_at_any_batch(device, family, batch):
    subscripts, shapes = FAMILIES[family]
    terms = subscripts.split("->")[0].split(",")
    ops = [full_range(tuple(batch if label == "b" else n for label, n in zip(term, shape)), "int32")
           for term, shape in zip(terms, shapes)]
    np.testing.assert_array_equal(tinyc.einsum(subscripts, *ops), np.einsum(subscripts, *ops))


def test_alpha_beta_and_out_on_integers(device):
    a, b = full_range((5, 6, 30), "int32"), full_range((6, 3, 30), "int32")
    product = np.einsum("ikb,kjb->ijb", a, b)
    with np.errstate(over="ignore"):
        for alpha in (1, 3, -2, 1):   # one packing relaunched with each call's alpha
            np.testing.assert_array_equal(tinyc.einsum("ikb,kjb->ijb", a, b, alpha=alpha),
                                          product * np.int32(alpha))
        out = full_range(product.shape, "int32")
        want = product * np.int32(2) + out * np.int32(-1)
        tinyc.einsum("ikb,kjb->ijb", a, b, out=out, alpha=2.0, beta=-1)   # 2.0: an integral float
    np.testing.assert_array_equal(out, want)
    with pytest.raises(TypeError, match=r"alpha=2.5 is not an integer, but the kernel computes in int32"):
        tinyc.einsum("ikb,kjb->ijb", a, b, alpha=2.5)
    for wrong in (np.int16, np.uint32):   # NumPy's 'safe' rule
        with pytest.raises(TypeError, match="casting rule 'safe'"):
            tinyc.einsum("ikb,kjb->ijb", a, b, out=np.zeros(product.shape, wrong))


@pytest.mark.parametrize("operands, out", [("int8", "int32"), ("uint8", "uint16"), ("uint32", "int64"),
                                           ("int16", "float32"), ("int32", "complex128")])
@pytest.mark.parametrize("subscripts, shapes", [FAMILIES["gemm, batch last"], FAMILIES["reduction"]])
def test_a_wider_out_is_the_computations_type(device, operands, out, subscripts, shapes):
    """As NumPy: `out=` of a wider dtype is what the sum runs in (int8 operands into an int32
    out do not wrap at 8 bits). Into a floating out the values stay small enough that every
    product and partial sum is exact there, so the results are equal too."""
    if np.dtype(out).kind in "iu":
        ops = [full_range(s, operands) for s in shapes]
    else:
        ops = [rng.integers(-100, 100, size=s).astype(operands) for s in shapes]
    got = np.zeros(np.einsum(subscripts, *ops).shape, out)
    want = np.zeros_like(got)
    tinyc.einsum(subscripts, *ops, out=got)
    np.einsum(subscripts, *ops, out=want)
    np.testing.assert_array_equal(got, want)


def test_unsigned_alpha_is_taken_modulo_its_width(device):
    a, b = full_range((4, 5, 20), "uint32"), full_range((5, 3, 20), "uint32")
    with np.errstate(over="ignore"):
        want = np.einsum("ikb,kjb->ijb", a, b) * np.uint32(3_000_000_000)
    np.testing.assert_array_equal(tinyc.einsum("ikb,kjb->ijb", a, b, alpha=3_000_000_000), want)


def test_mixed_integer_and_bool_operands_promote_as_numpy(device):
    a, b = full_range((4, 5, 20), "uint8"), full_range((5, 3, 20), "int16")
    want = np.einsum("ikb,kjb->ijb", a, b)   # int16
    got = tinyc.einsum("ikb,kjb->ijb", a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    flags = rng.random((4, 5, 20)) < 0.5
    np.testing.assert_array_equal(tinyc.einsum("ikb,kjb->ijb", flags, b), np.einsum("ikb,kjb->ijb", flags, b))


@pytest.mark.parametrize("name, dtype", [("i8", "int8"), ("i16", "int16"), ("i32", "int32"),
                                         ("i64", "int64"), ("f16", "float16")])
def test_dtype_names_are_the_languages(device, name, dtype):
    """NumPy reads "i8" as int64 and "f16" as a 16-byte float; dtype= takes the language's."""
    a, b = full_range((3, 4, 10), "int8"), full_range((4, 2, 10), "int8")
    got = tinyc.einsum("ikb,kjb->ijb", a, b, dtype=name)
    assert got.dtype == np.dtype(dtype)
    assert tinyc.contract("ikb,kjb->ijb", a.shape, b.shape, dtype=name)(a, b).dtype == np.dtype(dtype)
    with pytest.raises(TypeError, match="dtype 'bf16'"):
        tinyc.einsum("ikb,kjb->ijb", a, b, dtype="bf16")


@pytest.mark.parametrize("subscripts, shapes", [
    FAMILIES["gemm, batch first"], FAMILIES["mat-vec"], FAMILIES["reduction"],
    ("k,bkl->kl", [(3,), (40, 3, 1)]),          # the batch summed into a temporary (f32 sums into f16)
    ("bk,bkl->l", [(50, 6), (50, 6, 5)]),
    ("ij,bjk,kl->il", [(4, 5), (30, 5, 6), (6, 3)]),
])
def test_float16_within_its_rounding_bound(device, subscripts, shapes):
    """Within Higham's bound for a sum of products in half precision (γ_n Σ|terms|, u = 2^-11),
    plus the final rounding: the bound of a sum rounded to f16 after every partial result
    (a streamed reduction stores one per pass), which the f32 accumulation stays within."""
    ops = [rng.uniform(-2, 2, s).astype(np.float16) for s in shapes]
    got = tinyc.einsum(subscripts, *ops)
    assert got.dtype == np.float16
    exact = np.einsum(subscripts, *[x.astype(np.float64) for x in ops])
    magnitude = np.einsum(subscripts, *[np.abs(x.astype(np.float64)) for x in ops])
    terms, output = subscripts.split("->")
    sizes = {label: n for term, shape in zip(terms.split(","), shapes) for label, n in zip(term, shape)}
    n = int(np.prod([sizes[label] for label in set(terms) - set(output) - {","}]))
    assert_within(got, exact, sum_error_bound(n, "f16", magnitude) + UNIT_ROUNDOFF["f16"] * np.abs(exact))


def test_statements_on_integers(device):
    K, Q = full_range((3, 4, 4), "int32"), full_range((4, 5, 30), "int32")
    A = full_range((3, 5, 6, 30), "int32")
    c = tinyc.contract(["T[k,q,e] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e]",
                        "Q2[k,q,e] = 2 * T[k,q,e] - s * T[k,q,e]"],
                       shapes={"K": (3, 4, 4), "Q": (4, 5, None), "A": (3, 5, 6, None), "Q2": (4, 6, None)},
                       dtype="i32")
    Q2 = np.zeros((4, 6, 30), np.int32)
    c(K=K, Q=Q, A=A, Q2=Q2, s=7)
    with np.errstate(over="ignore"):
        T = np.einsum("dlk,lae,daqe->kqe", K, Q, A)
        want = T * np.int32(2) - T * np.int32(7)
    np.testing.assert_array_equal(Q2, want)
    with pytest.raises(TypeError, match="s=0.5 is not an integer"):
        c(K=K, Q=Q, A=A, Q2=Q2, s=0.5)
    shapes = {"X": (4, None), "Y": (4, None)}
    with pytest.raises(TypeError, match="statement 1: the factor 0.5 is not an integer"):
        tinyc.contract(["Y[i,e] = 0.5 * X[i,e]"], shapes=shapes, dtype="i32")
    with pytest.raises(TypeError, match="statement 1: divides by s, but the kernel computes in int32"):
        tinyc.contract(["Y[i,e] = X[i,e] / s"], shapes=shapes, dtype="i32")


@pytest.mark.parametrize("dtype", ["int16", "uint8"])
def test_usm_integer_arrays(device, dtype):
    """dpnp arrays go to the kernel in place; an unsigned one as the signed type's memref."""
    dpnp = pytest.importorskip("dpnp")
    a, b = full_range((20, 4, 3), dtype), full_range((20, 3, 5), dtype)
    got = tinyc.einsum("bij,bjk->bik", dpnp.asarray(a), dpnp.asarray(b))
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(dpnp.asnumpy(got), np.einsum("bij,bjk->bik", a, b))


def test_float16_calls_take_each_calls_alpha(device):
    """A relaunch by address writes a new alpha only into f32/f64 scalars; an f16 kernel's
    (a 16-bit pattern) is packed again: each call must see its own alpha."""
    a = rng.integers(-4, 4, (5, 6, 30)).astype(np.float16)
    b = rng.integers(-4, 4, (6, 3, 30)).astype(np.float16)
    product = np.einsum("ikb,kjb->ijb", a.astype(np.float64), b.astype(np.float64))   # exact in f16
    for alpha in (1, 0.5, -2, 1):
        np.testing.assert_array_equal(tinyc.einsum("ikb,kjb->ijb", a, b, alpha=alpha),
                                      (alpha * product).astype(np.float16))


def test_usm_operands_into_a_wider_usm_out(device):
    """USM operands are read in place, so a wider out is written by the kernel (the sum runs in
    the operands' type): f32 into f64 works; an unsigned widening would sign-extend: refused."""
    dpnp = pytest.importorskip("dpnp")
    a, b = rng.standard_normal((6, 5, 40)).astype(np.float32), rng.standard_normal((5, 3, 40)).astype(np.float32)
    out = dpnp.zeros((6, 3, 40), dtype=np.float64)
    tinyc.einsum("ikb,kjb->ijb", dpnp.asarray(a), dpnp.asarray(b), out=out)
    want = np.einsum("ikb,kjb->ijb", a.astype(np.float64), b.astype(np.float64))
    magnitude = np.einsum("ikb,kjb->ijb", np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    assert_within(dpnp.asnumpy(out), want, sum_error_bound(5, "f32", magnitude))   # K = 5, in f32
    small = dpnp.asarray(full_range((6, 5, 40), "uint8"))
    with pytest.raises(TypeError, match="USM operands"):
        tinyc.einsum("ikb->ib", small, out=dpnp.zeros((6, 40), dtype=np.uint16))
    flags = dpnp.asarray(rng.random((6, 5, 40)) < 0.5)   # bool: counted in int32, not widened in place
    with pytest.raises(TypeError, match="USM operands"):
        tinyc.einsum("ikb->ib", flags, out=dpnp.zeros((6, 40), dtype=np.int64))


@pytest.mark.parametrize("family", ["gemm, batch last", "gemm, batch first", "shared operand", "mat-vec",
                                    "reduction", "kept reduction", "chain", "trace"])
def test_bool_is_numpys_or_of_ands(device, family):
    """Bool operands give a bool result, NumPy's OR of ANDs (counted in int32, then != 0); sparse
    and dense operands, so that both results occur."""
    subscripts, shapes = FAMILIES[family]
    for density in (0.02, 0.5):
        ops = [rng.random(s) < density for s in shapes]
        got, want = tinyc.einsum(subscripts, *ops), np.einsum(subscripts, *ops)
        assert got.dtype == want.dtype == np.bool_
        np.testing.assert_array_equal(got, want)
        out = np.zeros(want.shape, bool)
        tinyc.einsum(subscripts, *ops, out=out)
        np.testing.assert_array_equal(out, want)


def test_bool_counts_into_an_integer_out_and_refuses_scaling(device):
    a, b = rng.random((5, 300)) < 0.5, rng.random(300) < 0.5
    scalar = tinyc.einsum("i,i->", b, b)
    assert isinstance(scalar, np.bool_) and scalar == np.einsum("i,i->", b, b)
    counts, want = np.zeros(5, np.int64), np.zeros(5, np.int64)
    tinyc.einsum("ik,k->i", a, b, out=counts)
    np.einsum("ik,k->i", a, b, out=want)   # NumPy sums in out's dtype: the counts
    np.testing.assert_array_equal(counts, want)
    with pytest.raises(TypeError, match="the result is bool"):
        tinyc.einsum("ik,k->i", a, b, alpha=2)
    with pytest.raises(TypeError, match="the result is bool"):
        tinyc.einsum("ik,k->i", a, b, out=np.zeros(5, bool), beta=1)
    with pytest.raises(ValueError, match="an epilogue needs numbers"):
        tinyc.einsum("ik,k->i", a, b, epilogue="relu")


@pytest.mark.parametrize("subscripts", ["ijk->kji", "ijk->ijk", "ii->i", "ijk->ij"])
def test_bool_permutations_are_views_as_in_numpy(device, subscripts):
    x = rng.random((4, 4, 3) if subscripts.startswith("ijk") else (4, 4)) < 0.5
    got, want = tinyc.einsum(subscripts, x), np.einsum(subscripts, x)
    assert got.dtype == want.dtype == np.bool_
    np.testing.assert_array_equal(got, want)
    assert np.shares_memory(got, x) == np.shares_memory(want, x)
