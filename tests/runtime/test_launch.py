"""Launching the hand-written kernels on the device and checking against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from runtime_testlib import UsmArray, rand
from tinyc.runtime.arguments import Group
from tinyc.runtime.scalars import bf16_bits_to_float, float_to_bf16_bits


@pytest.mark.parametrize("m, n", [(1, 1), (5, 3), (16, 8), (37, 11), (100, 2)])
def test_scale_fortran(kernels, rng, m, n):
    a = rand(rng, (m, n))
    expect = a * np.float32(2.5)
    kernels["scale"](2.5, a, batch=n)
    np.testing.assert_array_equal(a, expect)


def test_scale_batch_smaller_than_mode(kernels, rng):
    a = rand(rng, (9, 6))
    before = a.copy()
    kernels["scale"](3, a, batch=4)  # an int for an f32 parameter is fine
    np.testing.assert_array_equal(a[:, :4], before[:, :4] * 3)
    np.testing.assert_array_equal(a[:, 4:], before[:, 4:])


def test_scale_transposed_c_order(kernels, rng):
    b = rand(rng, (7, 20), order="C")  # b.T is a Fortran-order (20, 7) view
    before = b.copy()
    kernels["scale"](0.5, b.T, batch=7)
    np.testing.assert_array_equal(b, before * np.float32(0.5))


def test_scale_leading_dimension_view(kernels, rng):
    """A column-slice view of a Fortran array: `?` stride 1 comes from the view."""
    c = rand(rng, (30, 40))
    expect = c.copy()
    view = c[2:22, 1:30:3]
    expect[2:22, 1:30:3] *= np.float32(-2)
    kernels["scale"](-2, view, batch=view.shape[1])
    np.testing.assert_array_equal(c, expect)  # gaps between columns untouched


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("step", [(1, 1), (2, 3), (3, 1)])
def test_scale_strided_views(kernels, rng, order, step):
    """memref<f32x?x?,strided<?,?>> takes any non-negative strided view."""
    base = rand(rng, (24, 30), order=order)
    expect = base.copy()
    index = (slice(1, None, step[0]), slice(0, None, step[1]))
    view = base[index]
    expect[index] *= np.float32(4)
    kernels["scale_strided"](4.0, view, batch=view.shape[1])
    np.testing.assert_array_equal(base, expect)


def test_not_written_is_not_copied_back(queue, spirv, rng):
    """axpy zeroes X on the device; X is marked read-only, so a launch that copies through
    device memory keeps the host's X (by address the kernel writes the array itself, so
    that mode needs a truthful KernelInfo: tests/runtime/test_bounds_writes.py)."""
    from runtime_testlib import info
    from tinyc.runtime.kernel import Kernel

    axpy = Kernel(spirv, info("axpy"), queue)
    axpy.host_pointers = False  # the copying path, on any device
    x, y = rand(rng, (16, 5)), rand(rng, (16, 5))
    x0, expect = x.copy(), y + np.float32(2) * x
    axpy(2.0, x, y, batch=5)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_allclose(y, expect, rtol=1e-6)


def test_written_is_copied_back(kernels, rng):
    x, y = rand(rng, (16, 5)), rand(rng, (16, 5))
    expect = y + np.float32(2) * x
    kernels["axpy_w"](2.0, x, y, batch=5)
    np.testing.assert_array_equal(x, 0)
    np.testing.assert_allclose(y, expect, rtol=1e-6)


def test_read_only_array_for_unwritten_param(kernels, rng):
    x, y = rand(rng, (16, 3)), rand(rng, (16, 3))
    x.flags.writeable = False
    expect = y + x
    kernels["axpy"](1.0, x, y, batch=3)
    np.testing.assert_allclose(y, expect, rtol=1e-6)


def test_aliased_arguments_share_device_memory(kernels, rng):
    """X and Y are one array: the device sees one buffer, as the host does.

    axpy computes Y += 2 X and then sets X = 0 in each work-item, so with
    aliasing every element ends as 0 (separate copies would give 3 W).
    """
    w = rand(rng, (16, 4))
    kernels["axpy"](2.0, w, w, batch=4)
    np.testing.assert_array_equal(w, 0)


def test_overlapping_group_members(kernels, rng):
    """Members interleave in one buffer: one device region, each view copied back."""
    z = rand(rng, (6, 10))
    expect = z * np.float32(2)
    kernels["gscale2"](2.0, [z[:, 0::2], z[:, 1::2]], batch=2)
    np.testing.assert_array_equal(z, expect)


def test_scalar_bits(kernels):
    out = np.zeros(11, dtype=np.int64)
    args = (-5, -300, -70000, -(2**40) - 3, 1.5, np.pi, 0.1, np.e, 1 - 2j, 3.25 + 0.5j)
    kernels["scalars"](*args, out, batch=1)
    bits = out.view(np.uint64)
    assert list(out[:4]) == [-5, -300, -70000, -(2**40) - 3]
    assert bits[4] == np.float16(1.5).view(np.uint16)
    assert bits[5] == float_to_bf16_bits(np.pi) == 0x4049
    assert bits[6] == np.float32(0.1).view(np.uint32)
    assert bits[7] == np.float64(np.e).view(np.uint64)
    assert bits[8] == np.array([1, -2], np.float32).view(np.uint64)[0]
    assert out[9:].view(np.float64).tolist() == [3.25, 0.5]


def test_scalar_limits(kernels):
    out = np.zeros(11, dtype=np.int64)
    kernels["scalars"](np.int8(-128), 32767, -(2**31), 2**63 - 1, -0.0, -1e-3, -np.inf, np.nan, 0, 0j, out,
                       batch=1)
    assert list(out[:4]) == [-128, 32767, -(2**31), 2**63 - 1]
    assert out.view(np.uint64)[4] == 0x8000
    assert bf16_bits_to_float(int(out[5])) == pytest.approx(-1e-3, rel=1e-2)
    assert out.view(np.uint64)[6] == np.float32(-np.inf).view(np.uint32)
    assert np.isnan(out[7:8].view(np.float64)[0])


@pytest.mark.parametrize(
    "value, bits",
    [(1.0, 0x3F80), (1.00390625, 0x3F80), (1.01171875, 0x3F82), (-2.0, 0xC000), (1e39, 0x7F80), (np.nan, 0x7FC0)],
)
def test_bf16_rounding(value, bits):
    """Round to nearest even on the f32 bits (1 + 2^-8 is a tie to even)."""
    assert float_to_bf16_bits(value) == bits


def test_launch_geometry(kernels):
    """Work-group (4, 2, 1), batch along OpenCL dimension 2."""
    batch = 3
    out = np.zeros((8, batch), dtype=np.int64, order="F")
    kernels["geom"](out, batch=batch)
    x, y = np.meshgrid(np.arange(4), np.arange(2), indexing="xy")
    for b in range(batch):
        expect = (x + 10 * y + 100 * b + 1000 * (4 + 10 * 2)).reshape(-1)
        np.testing.assert_array_equal(out[:, b], expect)


def test_group_shaped_members(kernels, rng):
    """Offset 0 and 2-d members: `?` sizes come from each member's shape."""
    members = [rand(rng, (4, c)) for c in (1, 3, 7, 2)]
    expect = [m * np.float32(1.5) for m in members]
    kernels["gscale"](members, 1.5, batch=4)
    for got, want in zip(members, expect):
        np.testing.assert_array_equal(got, want)


def test_group_flat_members_with_offset(kernels, rng):
    cols = (2, 5, 1)
    members = [rand(rng, (3 + 4 * c + 2,)) for c in cols]
    expect = [m.copy() for m in members]
    for e, c in zip(expect, cols):
        e[3 : 3 + 4 * c] *= np.float32(-1)
    kernels["gscale"](Group(members, offset=3, shape=[(4, c) for c in cols]), -1.0, batch=3)
    for got, want in zip(members, expect):
        np.testing.assert_array_equal(got, want)


def test_group_slices_of_one_array(kernels, rng):
    """Members are views of one 3-d array (one device region for all)."""
    block = rand(rng, (4, 6, 5))
    expect = block * np.float32(2)
    kernels["gscale"]([block[:, :, i] for i in range(5)], 2.0, batch=5)
    np.testing.assert_array_equal(block, expect)


def test_group_dynamic_slots_in_order(kernels, rng):
    """group<memref<f32x?x?>>: shape0, shape1, stride1 arrays, per member."""
    big = rand(rng, (10, 12))
    members = [rand(rng, (3, 4)), big[1:6, ::2], rand(rng, (1, 9)), rand(rng, (7, 1))]
    originals = [m.copy() for m in members]
    big_before = big.copy()
    kernels["gscale2"](3.0, members, batch=4)
    for got, was in zip(members, originals):
        np.testing.assert_array_equal(got, was * np.float32(3))
    untouched = np.ones(big.shape, bool)
    untouched[1:6, ::2] = False
    np.testing.assert_array_equal(big[untouched], big_before[untouched])


def test_group_static_size_and_offset(kernels, rng):
    members = [rand(rng, (10 + i,)) for i in range(4)]
    expect = [m.copy() for m in members]
    for e in expect:
        e[2:10] += 1
    kernels["gadd"](members, batch=4)
    for got, want in zip(members, expect):
        np.testing.assert_array_equal(got, want)


def test_group_contiguous_2d_member_is_flat(kernels, rng):
    """A (2, 5) C-order member is a flat buffer of 10 elements for offset 2."""
    members = [rand(rng, (2, 5), order="C") for _ in range(4)]
    expect = [m.copy() for m in members]
    for e in expect:
        e.reshape(-1)[2:10] += 1
    kernels["gadd"](Group(members, offset=2), batch=4)
    for got, want in zip(members, expect):
        np.testing.assert_array_equal(got, want)


def test_usm_array_in_place(kernels, queue, rng):
    """A USM array is passed without copies: the device data changes in place."""
    host = rand(rng, (13, 4))
    usm = UsmArray.from_host(queue, host)
    kernels["scale"](2.0, usm, batch=4)
    np.testing.assert_array_equal(usm.to_host(), host * 2)
    np.testing.assert_array_equal(host, usm.to_host() / 2)  # the host copy is not touched


def test_usm_array_with_offset_and_strides(kernels, queue, rng):
    """A view into the middle of an allocation (offset, strides in elements)."""
    host = rand(rng, (12, 10))
    full = UsmArray.from_host(queue, host)
    view = UsmArray(full.memory, np.float32, (5, 3), strides=(2, 24), offset=1 + 12)
    kernels["scale_strided"](-1.0, view, batch=3)
    expect = host.copy()
    expect[1:11:2, 1:7:2] *= -1
    np.testing.assert_array_equal(full.to_host(), expect)


def test_usm_group_members(kernels, queue, rng):
    hosts = [rand(rng, (4, 3)) for _ in range(3)]
    members = [UsmArray.from_host(queue, h) for h in hosts]
    numpy_member = rand(rng, (4, 2))
    expect_np = numpy_member * np.float32(5)
    kernels["gscale"](members + [numpy_member], 5.0, batch=4)
    for m, h in zip(members, hosts):
        np.testing.assert_array_equal(m.to_host(), h * 5)
    np.testing.assert_array_equal(numpy_member, expect_np)


def test_empty_mode(kernels):
    """A size-0 mode: nothing to copy, the kernel loops zero times."""
    a = np.zeros((0, 3), dtype=np.float32, order="F")
    kernels["scale"](2.0, a, batch=3)


def test_prepare_launch_raw_and_time(kernels, rng):
    k = kernels["scale"]
    a = rand(rng, (16, 64))
    expect = a * np.float32(4)
    prepared = k.prepare(2.0, a, batch=64)
    k.launch_raw(prepared.args, 64)
    prepared.finish(prepared.launch())
    np.testing.assert_array_equal(a, expect)
    times = k.time(1.0, a, batch=64, repeat=3)
    assert len(times) == 3 and all(0 < t < 1 for t in times)
    walls = k.time(1.0, a, batch=64, repeat=2, wall=True)
    assert len(walls) == 2 and all(0 < t < 1 for t in walls)
    np.testing.assert_array_equal(a, expect)  # time() does not copy back


def test_prepared_arguments_are_what_dpctl_submits(kernels, rng):
    """prepare() packs USM copies: dpctl's own queue.submit takes its args (DESIGN.md: host
    code written for either implementation launches the other's SPIR-V)."""
    k = kernels["scale"]
    a = rand(rng, (16, 8))
    expect = a * np.float32(3)
    prepared = k.prepare(3.0, a, batch=8)
    x, y = k.info.work_group_size
    event = k.queue.submit_async(k.sycl_kernel, prepared.args, [8, y, x], [1, y, x])
    prepared.finish(event)
    np.testing.assert_array_equal(a, expect)


def test_pack_relaunches_with_new_addresses(kernels, rng):
    """pack() packs as k(...) launches (by address where the device reads host memory): a
    relaunch with another array's address in the Address slot scales that array in place."""
    from tinyc.runtime.submit import Address

    k = kernels["scale"]
    a, b = rand(rng, (16, 8)), rand(rng, (16, 8))
    want_a, want_b = a * np.float32(2), b * np.float32(2)
    packed = k.pack(2.0, a, batch=8)
    k.launch_raw(packed.args, 8)
    if k.host_pointers:
        assert type(packed.args[1]) is Address and not packed.call.staged
        np.testing.assert_array_equal(a, want_a)
        packed.args[1].address = b.ctypes.data
        k.launch_raw(packed.args, 8)
        np.testing.assert_array_equal(b, want_b)
        np.testing.assert_array_equal(a, want_a)  # not launched again
    else:  # copied: the written array comes back with finish()
        packed.finish(packed.launch())
        np.testing.assert_array_equal(a, want_a * np.float32(2))


def test_host_views_keep_their_arrays_alive():
    """staging's views over raw host addresses hold the arrays they point into."""
    import gc
    import weakref

    from tinyc.runtime.staging import host_bytes

    array = np.arange(64, dtype=np.uint8)
    view = host_bytes([array], array.ctypes.data + 8, 16)
    alive = weakref.ref(array)
    del array
    gc.collect()
    assert alive() is not None
    assert view.tolist() == list(range(8, 24))
    del view
    gc.collect()
    assert alive() is None
