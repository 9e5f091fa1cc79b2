"""tinyc.einsum / tinyc.contract as a user calls them: out, alpha/beta, epilogue, dtypes,
layouts, corner cases, USM arrays, the cache, and errors — against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.contractions import api
from tinyc.compiler import check_source

rng = np.random.default_rng(7)


def rand(*shape, dtype="float32"):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def close(got, want, tol=1e-4):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    assert float(np.abs(got - want).max(initial=0.0)) <= tol * scale


# -- out, alpha, beta, epilogue ------------------------------------------------------------
@pytest.mark.parametrize("subscripts, shapes", [
    ("bij,bjk->bik", [(6, 5, 4), (6, 4, 3)]),   # gemm
    ("bi,bi->b", [(9, 7), (9, 7)]),              # the general foreach step
    ("ij->ji", [(5, 3)]),                        # axpby
    ("ijk->ik", [(3, 4, 5)]),                    # sum
])
def test_beta_zero_never_reads_out(device, subscripts, shapes):
    ops = [rand(*s) for s in shapes]
    want = np.einsum(subscripts, *ops)
    out = np.full(want.shape, np.nan, np.float32)
    tinyc.einsum(subscripts, *ops, out=out, alpha=1.5)
    close(out, 1.5 * want)


@pytest.mark.parametrize("subscripts, shapes", [
    ("bij,bjk->bik", [(6, 5, 4), (6, 4, 3)]),
    ("bik,jk,jl->bil", [(7, 5, 3), (4, 3), (4, 6)]),
    ("bi,bi->b", [(9, 7), (9, 7)]),
])
def test_relu_epilogue_after_alpha_and_beta(device, subscripts, shapes):
    ops = [rand(*s) for s in shapes]
    want = np.einsum(subscripts, *ops)
    out = rand(*want.shape)
    expected = np.maximum(0.5 * want - 1.0 * out, 0)
    tinyc.einsum(subscripts, *ops, out=out, alpha=0.5, beta=-1.0, epilogue="relu")
    close(out, expected)
    assert (out >= 0).all()
    close(tinyc.einsum(subscripts, *ops, epilogue="relu"), np.maximum(want, 0))


def test_epilogue_errors():
    a = rand(3, 3)
    with pytest.raises(ValueError, match="unknown epilogue 'gelu'"):
        tinyc.einsum("ij,jk->ik", a, a, epilogue="gelu")
    c = rand(3, 3, dtype="complex64")
    with pytest.raises(ValueError, match="relu.*complex"):
        tinyc.einsum("ij,jk->ik", c, c, epilogue="relu")


def test_complex_alpha_with_real_operands_is_an_error():
    a = rand(3, 3)
    with pytest.raises(TypeError, match="alpha is complex"):
        tinyc.einsum("ij,jk->ik", a, a, alpha=1j)


# -- dtypes ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtypes", [
    ("float32", "float32"), ("float64", "float64"), ("complex64", "complex64"),
    ("complex128", "complex128"), ("float32", "float64"), ("complex64", "float64"),
    ("int64", "float32"), ("float32", "complex64"),
])
def test_result_dtype_follows_numpy(device, dtypes):
    a = rand(4, 3, dtype=dtypes[0]) if dtypes[0] != "int64" else rng.integers(-3, 3, (4, 3))
    b = rand(3, 5, dtype=dtypes[1])
    want = np.einsum("ij,jk->ik", a, b)
    got = tinyc.einsum("ij,jk->ik", a, b)
    assert got.dtype == want.dtype
    close(got, want, 1e-4)


def test_a_text_operand_is_a_type_error():
    """Integers and bool compute (tests/contract/test_einsum_integers.py); text does not."""
    with pytest.raises(TypeError, match="operand 1 has dtype <U1"):
        tinyc.einsum("i,i->", np.ones(1), np.array(["x"]))


def test_dtype_argument_forces_the_computation(device):
    a, b = rand(3, 4), rand(4, 2)
    got = tinyc.einsum("ij,jk->ik", a, b, dtype="f64")
    assert got.dtype == np.float64
    close(got, a.astype(np.float64) @ b, 1e-6)
    with pytest.raises(TypeError, match="unknown dtype 'f99'"):
        tinyc.einsum("ij,jk->ik", a, b, dtype="f99")


def test_out_dtype_safe_casting(device):
    a, b = rand(3, 4), rand(4, 2)
    wide = np.zeros((3, 2), np.float64)
    tinyc.einsum("ij,jk->ik", a, b, out=wide)
    close(wide, a.astype(np.float64) @ b)
    with pytest.raises(TypeError, match="casting rule 'safe'"):
        tinyc.einsum("ij,jk->ik", a.astype(np.float64), b, out=np.zeros((3, 2), np.float32))


def test_repeated_calls_by_address_take_each_calls_scalars_and_arrays(device):
    """Calls of one signature with out=, alpha or beta relaunch one packing by address (the
    first call checks it): each must see its own alpha, beta, operands and output."""
    s, b = rand(6, 5), rand(5, 4, 40)
    out = np.ones((6, 4, 40), np.float32)
    for alpha, beta in ((1.0, 0.0), (2.0, 0.5), (-1.0, 3.0), (0.25, 0.0), (2, 1)):
        b = b + 1
        before = out.copy()
        assert tinyc.einsum("ik,kjb->ijb", s, b, out=out, alpha=alpha, beta=beta) is out
        close(out, alpha * np.einsum("ik,kjb->ijb", s, b) + beta * before)
    other = np.zeros_like(out)
    tinyc.einsum("ik,kjb->ijb", s, b, out=other, alpha=3.0)
    close(other, 3 * np.einsum("ik,kjb->ijb", s, b))
    zs, zb = s.astype(np.complex64), (b + 1j).astype(np.complex64)
    zout = np.ones((6, 4, 40), np.complex64)
    for alpha in (1 + 1j, 2 - 1j):
        before = zout.copy()
        tinyc.einsum("ik,kjb->ijb", zs, zb, out=zout, alpha=alpha, beta=0.5j)
        close(zout, alpha * np.einsum("ik,kjb->ijb", zs, zb) + 0.5j * before)


# -- layouts -----------------------------------------------------------------------------------
def test_fortran_order_inputs_give_fortran_output(device):
    a, b = np.asfortranarray(rand(5, 4)), np.asfortranarray(rand(4, 6))
    got = tinyc.einsum("ij,jk->ik", a, b)
    assert got.flags.f_contiguous
    close(got, a @ b)


def test_the_new_result_takes_the_order_holding_more_of_the_batch(device):
    """A C-order shared matrix times a Fortran-order batch of matrices: the result is
    Fortran-ordered like the batched operand (each entry's result where its matrix is); a
    C-order batch of matrices times a Fortran-order batch of vectors stays C."""
    s, b = rand(6, 15), np.asfortranarray(rand(15, 10, 37))
    got = tinyc.einsum("ik,kjb->ijb", s, b)
    assert got.flags.f_contiguous and not got.flags.c_contiguous
    close(got, np.einsum("ik,kjb->ijb", s, b))
    a, x = rand(16, 16, 37), np.asfortranarray(rand(16, 37))
    got = tinyc.einsum("ijb,jb->ib", a, x)
    assert got.flags.c_contiguous and not got.flags.f_contiguous
    close(got, np.einsum("ijb,jb->ib", a, x))


@pytest.mark.parametrize("subscripts, shapes, orders, want", [
    ("ikb,kjb->ijb", [(16, 8, 37), (8, 12, 37)], "CF", "F"),   # B's entries in one piece
    ("ikb,kjb->ijb", [(8, 8, 37), (8, 8, 37)], "CF", "F"),
    ("ikb,kjb->ijb", [(16, 8, 37), (8, 12, 37)], "FC", "F"),
    ("bik,bkj->bij", [(37, 16, 8), (37, 8, 12)], "FC", "C"),   # B's entries in one piece
    ("bik,bkj->bij", [(37, 16, 8), (37, 8, 12)], "CF", "C"),
])
def test_operands_whose_batch_is_slowest_count_twice_for_the_new_results_order(
        device, subscripts, shapes, orders, want):
    """Two batched operands of other orders: the one that keeps each batch entry's elements
    together counts twice (new_output_order: measured 1.2-4.6x faster so)."""
    ops = [np.asfortranarray(rand(*s)) if o == "F" else rand(*s) for s, o in zip(shapes, orders)]
    got = tinyc.einsum(subscripts, *ops)
    assert (got.flags.f_contiguous, got.flags.c_contiguous) == ((True, False) if want == "F" else (False, True))
    close(got, np.einsum(subscripts, *ops))


@pytest.mark.parametrize("make", [
    lambda x: x[::2, 1::2],              # strided view
    lambda x: x.T,                       # transposed view
    lambda x: x[::-1],                   # negative stride: copied
    lambda x: np.broadcast_to(x[:1], x.shape),  # stride 0
])
def test_views_of_any_layout(device, make):
    base = rand(8, 8)
    a = make(base)
    b = rand(a.shape[1], 3)
    close(tinyc.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b))


def test_out_views(device):
    a, b = rand(4, 3), rand(3, 5)
    big = np.zeros((4, 10), np.float32)
    tinyc.einsum("ij,jk->ik", a, b, out=big[:, ::2])
    close(big[:, ::2], a @ b)
    assert not big[:, 1::2].any()
    f_out = np.zeros((4, 5), np.float32, order="F")
    tinyc.einsum("ij,jk->ik", a, b, out=f_out, beta=1.0)
    close(f_out, a @ b)


def test_out_that_is_an_operand(device):
    x = rand(5, 5)
    want = x @ x
    tinyc.einsum("ij,jk->ik", x, x, out=x)
    close(x, want)


def test_out_errors():
    a, b = rand(4, 3), rand(3, 5)
    with pytest.raises(ValueError, match=r"out has shape \(5, 4\) but the result .* \(4, 5\)"):
        tinyc.einsum("ij,jk->ik", a, b, out=np.zeros((5, 4), np.float32))
    with pytest.raises(TypeError, match="out must be a NumPy or USM array"):
        tinyc.einsum("ij,jk->ik", a, b, out=[[0.0]])


def test_read_only_out(device):
    a, b = rand(4, 3), rand(3, 5)
    out = np.zeros((4, 5), np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        tinyc.einsum("ij,jk->ik", a, b, out=out)


# -- corner cases ---------------------------------------------------------------------------------
def test_scalar_results_are_numpy_scalars(device):
    a, b = rand(7), rand(7)
    got = tinyc.einsum("i,i->", a, b)
    assert isinstance(got, np.float32)
    close(got, np.dot(a, b))
    x = rand(3, 4, dtype="float64")
    total = tinyc.einsum("ij->", x)
    assert isinstance(total, np.float64)
    close(total, x.sum(), 1e-12)


def test_zero_dimensional_and_python_scalar_operands(device):
    x = rand(4)
    close(tinyc.einsum(",i->i", np.float32(3.0), x), 3.0 * x)
    close(tinyc.einsum("i,->i", x, np.array(2.0, np.float32)), 2.0 * x)
    assert tinyc.einsum("", np.float64(2.5)) == 2.5


@pytest.mark.parametrize("subscripts, shapes", [
    ("ij,jk->ik", [(1, 4), (4, 1)]), ("bij,bjk->bik", [(1, 1, 1), (1, 1, 1)]),
    ("ij,ij->ij", [(3, 1), (3, 4)]), ("ij,jk->ik", [(3, 2), (1, 4)]),
    ("i,i->i", [(1,), (5,)]),
])
def test_size_one_modes_and_broadcasting(device, subscripts, shapes):
    ops = [rand(*s) for s in shapes]
    close(tinyc.einsum(subscripts, *ops), np.einsum(subscripts, *ops))


def test_zero_size_modes(device):
    empty = tinyc.einsum("ij,jk->ik", rand(0, 3), rand(3, 4))
    assert empty.shape == (0, 4)
    zeros = tinyc.einsum("ij,jk->ik", rand(3, 0), rand(0, 4))
    close(zeros, np.zeros((3, 4)))
    out = rand(3, 4)
    before = out.copy()
    tinyc.einsum("ij,jk->ik", rand(3, 0), rand(0, 4), out=out, beta=2.0)
    close(out, 2.0 * before)
    assert tinyc.einsum("i,i->", rand(0), rand(0)) == 0


@pytest.mark.parametrize("subscripts, shapes", [
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (3, 5, 2)]),
    ("...ij,...jk", [(2, 1, 4, 5), (3, 5, 2)]),
    ("i...->...", [(3, 4, 5)]),
    ("...,...", [(3,), (4, 3)]),
    ("a...b,b->...a", [(2, 3, 4, 5), (5,)]),
])
def test_ellipsis_broadcasting(device, subscripts, shapes):
    ops = [rand(*s) for s in shapes]
    close(tinyc.einsum(subscripts, *ops), np.einsum(subscripts, *ops))


def test_sublist_form(device):
    a, b = rand(3, 4), rand(4, 5)
    close(tinyc.einsum(a, [0, 1], b, [1, 2], [0, 2]), a @ b)
    close(tinyc.einsum(a, [0, 1], b, [1, 2]), a @ b)


def test_large_intermediates_use_global_scratch(device):
    a, b, c = rand(300, 260), rand(260, 240), rand(240, 7)
    close(tinyc.einsum("ij,jk,kl->il", a, b, c), np.einsum("ij,jk,kl->il", a, b, c, optimize=True), 1e-3)


# -- errors name the subscript and the operand ---------------------------------------------------
@pytest.mark.parametrize("args, error, message", [
    (("ij,jk->ik", (3, 4), (5, 6)), ValueError,
     "size of subscript 'j' is 4 in operand 0 but 5 in operand 1"),
    (("ij,jk->ix", (3, 4), (4, 6)), ValueError, "output subscript 'x' which never appeared"),
    (("ij,jk->ii", (3, 4), (4, 6)), ValueError, "output subscript 'i' multiple times"),
    (("ijk,jk->ik", (3, 4), (4, 6)), ValueError, "operand 0 has 2 dimensions but its subscripts 'ijk' name 3"),
    (("ij->i", (3, 4, 5)), ValueError, "operand 0 has 3 dimensions but its subscripts 'ij' name 2"),
    (("ij,jk->ik", (3, 4)), ValueError, "name 2 operands, but 1 was given"),
    (("i2,jk->ik", (3, 4), (4, 6)), ValueError, "invalid subscript '2'"),
    (("i.j", (3, 4)), ValueError, "'.' that is not part of an ellipsis"),
    (("ii->i", (3, 4)), ValueError, "collapsing index 'i' don't match \\(3 != 4\\)"),
    (("...i->i", (2, 3)), ValueError, "no '...' ellipsis provided"),
    (("ij->j->i", (2, 3)), ValueError, "'->'"),
])
def test_errors(args, error, message):
    subscripts, *shapes = args
    with pytest.raises(error, match=message):
        tinyc.einsum(subscripts, *[np.ones(s, np.float32) for s in shapes])


def test_bad_operands_are_type_errors():
    with pytest.raises(TypeError, match="subscripts must be a string"):
        tinyc.contract(3.5, (3,))
    with pytest.raises(TypeError, match="alpha must be a number"):
        tinyc.einsum("i->i", np.ones(3, np.float32), alpha="x")


# -- the cache and tinyc.contract ----------------------------------------------------------------
def test_repeated_calls_compile_once(device, monkeypatch):
    a, b = rand(11, 3, 4), rand(11, 4, 2)
    tinyc.einsum("bij,bjk->bik", a, b)

    def no_compile(*args, **kwargs):
        raise AssertionError("a cached contraction was compiled again")

    monkeypatch.setattr(api, "compile_contraction", no_compile)
    for _ in range(3):
        a2 = rand(11, 3, 4)
        close(tinyc.einsum("bij,bjk->bik", a2, b), np.einsum("bij,bjk->bik", a2, b))


def test_contract_object(device):
    c = tinyc.contract("bij,jk->bik", (20, 5, 4), (4, 3))
    assert isinstance(c, tinyc.Contraction)
    check_source(c.source, "einsum.ir")           # the generated program checks
    assert "memref<f32x" in c.source and "gemm" in c.source
    assert isinstance(c.program, tinyc.Program)
    assert "einsum" in c.program.kernel_names
    a, b = rand(20, 5, 4), rand(4, 3)
    close(c(a, b), np.einsum("bij,jk->bik", a, b))
    out = rand(20, 5, 3)
    before = out.copy()
    c(a, b, out=out, alpha=2.0, beta=1.0)
    close(out, 2.0 * np.einsum("bij,jk->bik", a, b) + before)
    a64 = a.astype(np.float64)
    close(c(a64, b), np.einsum("bij,jk->bik", a64, b), 1e-6)   # another dtype: another kernel
    with pytest.raises(ValueError, match=r"operand 1 has shape \(3, 4\) but the contraction was made for \(4, 3\)"):
        c(a, b.T)
    with pytest.raises(ValueError, match="takes 2 operands, got 1"):
        c(a)
    assert c.path == ["bij,jk->bik"]  # small: one work-group, b and i fused into one gemm mode
    assert c.flops == 2 * 20 * 5 * 4 * 3


def test_contract_from_arrays_and_dtype_names(device):
    a = rand(6, 4, dtype="complex64")
    c = tinyc.contract("ij->ji", a)
    assert "c32" in c.source
    close(c(a), a.T)
    assert "f64" in tinyc.contract("ij->ji", (3, 2), dtype=np.float64).source
    assert "c64" in tinyc.contract("ij->ji", (3, 2), dtype="c64").source


# -- USM arrays --------------------------------------------------------------------------------------
class Usm:
    """A C-order array in USM shared memory, exposing __sycl_usm_array_interface__."""

    def __init__(self, array: np.ndarray, queue):
        import dpctl.memory

        self.memory = dpctl.memory.MemoryUSMShared(max(array.nbytes, 1), queue=queue)
        self.host = np.frombuffer(self.memory, dtype=array.dtype, count=array.size).reshape(array.shape)
        self.host[...] = array
        self.__sycl_usm_array_interface__ = {
            "data": (self.memory._pointer, False), "shape": array.shape, "strides": None,
            "typestr": array.dtype.str, "version": 1, "syclobj": queue}


def test_usm_operands_and_out(device):
    from tinyc.runtime.device import select_queue

    queue = select_queue()
    a, b = rand(9, 3, 4), rand(9, 4, 5)
    ua, ub = Usm(a, queue), Usm(b, queue)
    out = Usm(np.full((9, 3, 5), np.nan, np.float32), queue)
    assert tinyc.einsum("bij,bjk->bik", ua, ub, out=out) is out
    close(out.host, np.einsum("bij,bjk->bik", a, b))
    mixed = tinyc.einsum("bij,bjk->bik", ua, b, out=Usm(np.zeros((9, 3, 5), np.float32), queue))
    close(mixed.host, np.einsum("bij,bjk->bik", a, b))


def test_dpnp_arrays_in_and_out(device):
    dpnp = pytest.importorskip("dpnp")
    a, b = rand(9, 3, 4), rand(9, 4, 5)
    got = tinyc.einsum("bij,bjk->bik", dpnp.asarray(a), dpnp.asarray(b))
    assert isinstance(got, dpnp.ndarray)
    close(dpnp.asnumpy(got), np.einsum("bij,bjk->bik", a, b))


def test_misaligned_arrays_are_copied_not_misread(device):
    raw = np.zeros(4 * 12 + 1, np.uint8)
    a = np.frombuffer(raw.data, dtype=np.float32, count=12, offset=1).reshape(3, 4)  # not aligned
    assert not a.flags.aligned
    b = rand(4, 2)
    close(tinyc.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b))
    out_raw = np.zeros(4 * 6 + 1, np.uint8)
    out = np.frombuffer(out_raw.data, dtype=np.float32, count=6, offset=1).reshape(3, 2)
    tinyc.einsum("ij,jk->ik", a, b, out=out)
    close(out, np.einsum("ij,jk->ik", a, b))


def test_large_single_contraction_spreads_over_work_groups(device):
    a, b = rand(256, 96), rand(96, 80)
    c = tinyc.contract("ij,jk->ik", a, b)
    assert c._main.groups > 1
    close(c(a, b), a @ b, 1e-3)


def test_intermediate_in_local_memory_read_in_a_loop(device):
    """A c32 gemv into local memory read by a ger in a loop with a run-time beta branch
    (found by random testing: the kernel read unwritten local memory while codegen kept a
    local pointer across the loop's barrier; docs/runtime-notes.md)."""
    ops = [rand(5, dtype="complex64"), rand(1000, dtype="complex64"),
           np.asfortranarray(rand(8, 2, 1000, dtype="complex64"))]
    for beta in (0.0, 1.0):
        out = rand(8, 2, 5, dtype="complex64")
        want = np.einsum("g,e,afe", *ops) + beta * out
        tinyc.einsum("g,e,afe", *ops, out=out, beta=beta)
        close(out, want)


def test_short_last_tile(device):
    a, c = rand(1, 2049), rand(17)       # 2049 output rows in tiles, the last one short
    close(tinyc.einsum("da,c->ac", a, c), np.einsum("da,c->ac", a, c))
    b = rand(8, 8)
    x = rand(1000, 8, 3)
    close(tinyc.einsum("ij,bjk->bik", b, x), np.einsum("ij,bjk->bik", b, x))
    ops = [rand(17), rand(5, 2049), rand(5), rand(2049, 8)]   # intermediates in both tile bodies
    close(tinyc.einsum("d,bg,b,gf->gbfd", *ops), np.einsum("d,bg,b,gf->gbfd", *ops))


def test_devices_without_system_allocations_get_copies(device, monkeypatch):
    """Where the device cannot read NumPy memory, the kernel's launch copies the operands to
    USM device memory and the output back (forced here on the CPU device)."""
    from tinyc.runtime import kernel

    monkeypatch.setattr(kernel, "reads_host_memory", lambda queue: False)
    api.clear_cache()
    a, b = rand(7, 3, 5), rand(7, 5, 2)[:, :, ::1]
    out = rand(7, 3, 4)[:, :, ::2]               # a strided output: only its elements change
    before = out.base.copy()
    tinyc.einsum("bij,bjk->bik", a, b, out=out, alpha=2.0, beta=1.0)
    close(out, 2.0 * np.einsum("bij,bjk->bik", a, b) + before[:, :, ::2])
    close(out.base[:, :, 1::2], before[:, :, 1::2], 0)
    for _ in range(2):                           # the plain call too, twice (no packing kept)
        close(tinyc.einsum("bij,bjk->bik", a, b), np.einsum("bij,bjk->bik", a, b))
    api.clear_cache()


def test_many_operands(device):
    ops = [rand(3, 4, dtype="float64") for _ in range(20)]     # operand names past G, O, S
    sub = ",".join("ij" for _ in ops) + "->ij"
    close(tinyc.einsum(sub, *ops), np.einsum(sub, *ops), 1e-12)
    vectors = [rand(2, dtype="float64") for _ in range(8)]      # greedy order beyond six
    sub = ",".join("abcdefgh") + "->abcdefgh"
    close(tinyc.einsum(sub, *vectors), np.einsum(sub, *vectors), 1e-12)


@pytest.mark.parametrize("order", ["C", "F"])
def test_an_out_overlapping_an_operand_in_either_order(device, order):
    """The kernel writes a temporary laid out as `out` (its strides made the kernel's output
    layout), then `out` takes it: a Fortran-order out once got the transposed buffer."""
    a = np.asarray(rand(5, 5), order=order)
    b = rand(5, 5)
    want = a.astype(np.float64) @ b
    close(tinyc.einsum("ij,jk->ik", a, b, out=a), want)
    big = np.zeros((10, 10), np.float32, order=order)
    view = big[::2, ::2]
    view[...] = rand(5, 5)
    want = 2 * (view.astype(np.float64) @ b) - view
    tinyc.einsum("ij,jk->ik", view, b, out=view, alpha=2, beta=-1)
    close(view, want)
    assert not big[1::2].any() and not big[:, 1::2].any()   # nothing written between the elements
