"""Every bad call raises LaunchError naming the argument, before anything runs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from runtime_testlib import UsmArray, rand
from tinyc.diagnostics import LaunchError
from tinyc.ir.types import DYNAMIC as D
from tinyc.ir.types import bf16, f16, f32, group_type, i32, index, memref_type
from tinyc.runtime.arguments import Call, Group, make_packer
from tinyc.signature import ParamInfo


def raises(argument: str | None, *words: str):
    """Context: LaunchError for `argument` whose message holds `words`."""

    class Check:
        def __enter__(self):
            self.ctx = pytest.raises(LaunchError)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            swallowed = self.ctx.__exit__(*exc)
            error = self.info.value
            assert error.argument == argument, str(error)
            text = str(error)
            if argument:
                assert f"'{argument}'" in text
            for word in words:
                assert word in text, text
            return swallowed

    return Check()


@pytest.fixture
def x_y(rng):
    return rand(rng, (16, 4)), rand(rng, (16, 4))


def test_wrong_count(kernels, x_y):
    with raises(None, "takes 3 arguments, got 2", "alpha, X, Y"):
        kernels["axpy"](1.0, x_y[0], batch=4)


def test_unknown_keyword(kernels, x_y):
    with raises(None, "unknown keyword", "bach"):
        kernels["axpy"](1.0, *x_y, bach=4)


@pytest.mark.parametrize("batch", [-1, 1.5, True, "3", 2**40])
def test_bad_batch(kernels, x_y, batch):
    with raises("batch", "batch"):
        kernels["axpy"](1.0, *x_y, batch=batch)


def test_batch_zero_runs_nothing_but_checks_the_arguments(kernels, x_y):
    x, y = x_y
    before = y.copy()
    kernels["axpy"](1.0, x, y, batch=0)
    np.testing.assert_array_equal(y, before)
    with raises("Y", "expected dtype float32"):
        kernels["axpy"](1.0, x, y.astype(np.float64), batch=0)


def test_batch_numpy_integer(kernels, x_y):
    kernels["axpy"](1.0, *x_y, batch=np.int64(4))


def test_dtype(kernels, x_y):
    with raises("Y", "expected dtype float32, got float64", "memref<f32x16x?>"):
        kernels["axpy"](1.0, x_y[0], x_y[1].astype(np.float64), batch=4)
    swapped = x_y[1].astype(">f4")
    with raises("Y", "expected dtype float32 in the machine's byte order", "Y.astype('=f4') passes it",
                "got >f4"):
        kernels["axpy"](1.0, x_y[0], swapped, batch=4)


def test_shape(kernels, rng):
    with raises("X", "expected shape (16, ?), got (8, 4)"):
        kernels["axpy"](1.0, rand(rng, (8, 4)), rand(rng, (16, 4)), batch=4)
    with raises("X", "expected shape (16, ?), got (64,)"):
        kernels["axpy"](1.0, rand(rng, (64,)), rand(rng, (16, 4)), batch=4)


def test_static_stride(kernels, rng):
    with raises("Y", "expected element strides (1, 16), got (4, 1)", "Fortran"):
        kernels["axpy"](1.0, rand(rng, (16, 4)), rand(rng, (16, 4), order="C"), batch=4)


def test_dynamic_unit_stride_required(kernels, rng):
    """memref<f32x?x?> has stride (1, ?): rows must be contiguous."""
    with raises("A", "expected element strides (1, ?)"):
        kernels["scale"](1.0, rand(rng, (6, 5), order="C"), batch=5)


def test_negative_stride(kernels, rng):
    with raises("A", "non-negative"):
        kernels["scale_strided"](1.0, rand(rng, (6, 5))[::-1], batch=5)


def test_too_small_for_batch(kernels, x_y):
    with raises("X", "mode 1 has size 4, too small for batch=5"):
        kernels["axpy"](1.0, *x_y, batch=5)


def test_not_an_array(kernels, x_y):
    with raises("Y", "expected a NumPy array or USM array", "list"):
        kernels["axpy"](1.0, x_y[0], [[1.0] * 4] * 16, batch=4)


def test_read_only_for_written_param(kernels, x_y):
    x, y = x_y
    y.flags.writeable = False
    with raises("Y", "read-only"):
        kernels["axpy"](1.0, x, y, batch=4)


@pytest.mark.parametrize(
    "position, value, words",
    [
        (0, 128, ("out of range for i8", "[-128, 127]")),
        (0, -129, ("out of range",)),
        (1, 2**15, ("out of range for i16",)),
        (2, -(2**31) - 1, ("out of range for i32",)),
        (3, 2**63, ("out of range for i64",)),
        (2, 1.0, ("expected an integer for i32", "float")),
        (3, np.float32(2), ("expected an integer",)),
        (2, True, ("expected an integer", "bool")),
        (2, "7", ("expected an integer", "str")),
        (6, 1j, ("expected a real number for f32", "complex")),
        (7, "x", ("expected a real number for f64",)),
        (4, None, ("expected a real number for f16",)),
        (8, "1+2j", ("expected a complex number for c32",)),
        (7, 10**400, ("too large for f64",)),
        (9, 10**400, ("too large for c64",)),
    ],
)
def test_scalars(kernels, position, value, words):
    args = [0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0j, 0j, np.zeros(11, np.int64)]
    args[position] = value
    with raises("abcdefghzw"[position], *words):
        kernels["scalars"](*args)


def test_group_not_a_list(kernels, rng):
    with raises("G", "expected a list or tuple of arrays, tinyc.Group or a stacked array", "dict"):
        kernels["gscale"]({0: rand(rng, (4, 3))}, 1.0)


def test_group_stacked_array_needs_one_more_mode(kernels, rng):
    """A (4, 3) array for group<memref<f32x4x?>>: members would be 1-d, so it is refused."""
    with raises("G", "a stacked array", "one more mode than the memref", "shape (4, 3)"):
        kernels["gscale"](rand(rng, (4, 3)), 1.0)


def test_group_shorter_than_batch(kernels, rng):
    with raises("G", "group has 2 arrays, too few for batch=3"):
        kernels["gscale"]([rand(rng, (4, 3)), rand(rng, (4, 3))], 1.0, batch=3)


def test_group_static_size(kernels, rng):
    with raises("G", "expected 4 arrays, got 3"):
        kernels["gadd"]([rand(rng, (10,)) for _ in range(3)], batch=3)


def test_group_static_offset_mismatch(kernels, rng):
    with raises("G", "offset=3", "offset 2"):
        kernels["gadd"](Group([rand(rng, (10,)) for _ in range(4)], offset=3), batch=4)


def test_group_member_too_small_for_offset(kernels, rng):
    members = [rand(rng, (10,)) for _ in range(3)] + [rand(rng, (9,))]
    with raises("G", "member 3", "holds 9 elements but offset 2 + extent 8 needs 10"):
        kernels["gadd"](members, batch=4)


def test_group_member_dtype(kernels, rng):
    members = [rand(rng, (10,)) for _ in range(3)] + [rand(rng, (10,), np.float64)]
    with raises("G", "member 3", "expected dtype float32, got float64"):
        kernels["gadd"](members, batch=4)


def test_group_member_shape(kernels, rng):
    with raises("G", "member 1", "expected shape (4, ?), got (5, 3)"):
        kernels["gscale"]([rand(rng, (4, 3)), rand(rng, (5, 3))], 1.0, batch=2)


def test_group_flat_needs_shape(kernels, rng):
    with raises("G", "member 0", "shape=(...)"):
        kernels["gscale"](Group([rand(rng, (20,))], offset=1), 1.0)


def test_group_flat_must_be_contiguous(kernels, rng):
    with raises("G", "member 0", "contiguous"):
        kernels["gscale"](Group([rand(rng, (40,))[::2]], offset=1, shape=(4, 2)), 1.0)


def test_group_explicit_shape_must_fit_type(kernels, rng):
    with raises("G", "shape=(5, 2)"):
        kernels["gscale"](Group([rand(rng, (40,))], offset=1, shape=(5, 2)), 1.0)


def test_group_bad_offset(kernels, rng):
    with raises("G", "non-negative integer"):
        kernels["gscale"](Group([rand(rng, (4, 2))], offset=-1, shape=(4, 2)), 1.0)


def test_group_empty(kernels):
    with raises("G", "at least one array"):
        kernels["gscale2"](1.0, [], batch=1)


def test_usm_from_another_context(kernels, queue, rng):
    import dpctl

    device = queue.sycl_device
    other = dpctl.SyclQueue(dpctl.SyclContext([device]), device)  # a new context
    assert other.sycl_context != queue.sycl_context
    usm = UsmArray.from_host(other, rand(rng, (8, 2)))
    with raises("A", "not usable on the kernel's queue"):
        kernels["scale"](1.0, usm, batch=2)
    with raises("G", "member 0", "not usable on the kernel's queue"):
        kernels["gscale"]([UsmArray.from_host(other, rand(rng, (4, 2)))], 1.0)


def test_nothing_runs_before_all_checks(kernels, rng):
    """The first argument is fine, the last is bad: Y must stay untouched."""
    x, y = rand(rng, (16, 4)), rand(rng, (16, 4))
    y0 = y.copy()
    with raises("Y", "too small"):
        kernels["axpy_w"](1.0, x, y[:, :2], batch=4)
    np.testing.assert_array_equal(y, y0)


# -- checks that need no kernel: the packers alone --------------------------------


def bind(queue, param: ParamInfo, value, batch: int = 1):
    import dpctl

    return make_packer(param, dpctl.RawKernelArg)(value, Call(queue, dpctl.memory, batch))


@pytest.mark.parametrize(
    "element, dtype, ok",
    [
        (f16, np.float16, True),
        (f16, np.uint16, False),
        (bf16, np.uint16, True),
        (bf16, np.float16, False),
        (index, np.int64, True),
        (index, np.int32, False),
        (i32, np.dtype(">i4"), False),
    ],
)
def test_dtype_table(queue, element, dtype, ok):
    param = ParamInfo("M", memref_type(element, (4,)))
    array = np.zeros(4, dtype=dtype)
    if ok:
        bind(queue, param, array)
    else:
        with raises("M", "expected dtype"):
            bind(queue, param, array)


@pytest.mark.parametrize("shape, ok", [((), True), ((1,), True), ((1, 1), True), ((2,), False)])
def test_order_zero_memref(queue, shape, ok):
    param = ParamInfo("s", memref_type(f32, ()))
    array = np.zeros(shape, dtype=np.float32)
    if ok:
        bind(queue, param, array)
    else:
        with raises("s", "0-d or one-element"):
            bind(queue, param, array)


def test_size_one_mode_strides_are_free(queue):
    """(16, 1) in C order has byte strides (4, 4); mode 1 is never stepped."""
    param = ParamInfo("A", memref_type(f32, (16, 1)))
    bind(queue, param, np.zeros((16, 1), np.float32, order="C"))


def test_group_static_dims_of_members(queue, rng):
    param = ParamInfo("G", group_type(memref_type(f32, (4, 4)), D, 0))
    bind(queue, param, [rand(rng, (4, 4)), rand(rng, (16,))])  # 2-d shaped, 1-d flat
    with raises("G", "member 1", "holds 15 elements"):
        bind(queue, param, [rand(rng, (4, 4)), rand(rng, (15,))])


def test_param_info_is_frozen():
    param = ParamInfo("a", f32)
    with pytest.raises(dataclasses.FrozenInstanceError):
        param.name = "b"  # type: ignore[misc]


@pytest.mark.parametrize("shape", [(4, -1), ("4", 2), 7, [(4, 2)] * 2])
def test_group_bad_explicit_shape(kernels, rng, shape):
    with raises("G", "shape="):
        kernels["gscale"](Group([rand(rng, (40,))], offset=1, shape=shape), 1.0)
