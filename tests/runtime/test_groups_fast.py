"""The fast group paths: gathered NumPy members, cached USM tables, stacked arrays, pools.

Each fast path must give the results and the errors of the member-by-member
path, and never reuse stale data: NumPy data is copied on every call, and a
cached table is only used for exactly the same member objects.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from runtime_testlib import UsmArray, rand
from test_errors import raises
from tinyc.runtime.arguments import Group
from tinyc.runtime.members import member_ids, same_members


def flat_columns(members, rows: int) -> np.ndarray:
    """What gread writes: column b holds 2 * member b flattened column-major."""
    out = np.zeros((rows, len(members)), np.float32, order="F")
    for b, m in enumerate(members):
        out[: m.size, b] = 2 * np.asarray(m).reshape(-1, order="F")
    return out


def read(kernel, group, count: int, rows: int) -> np.ndarray:
    out = np.zeros((rows, count), np.float32, order="F")
    kernel(group, out, batch=count)
    return out


# -- NumPy members of a group the kernel only reads ----------------------------------
@pytest.mark.parametrize("kind", [list, tuple])
def test_gathered_members(kernels, rng, kind):
    members = [rand(rng, (5, 3)) for _ in range(7)]
    got = read(kernels["gread"], kind(members), 7, 15)
    np.testing.assert_array_equal(got, flat_columns(members, 15))


def test_same_list_sees_changed_data(kernels, rng):
    """The second call with the same list (a cache hit) copies the data again."""
    members = [rand(rng, (4, 2)) for _ in range(5)]
    read(kernels["gread"], members, 5, 8)
    members[1][...] = 7
    members[4] *= -1
    np.testing.assert_array_equal(read(kernels["gread"], members, 5, 8), flat_columns(members, 8))


def test_same_list_with_a_replaced_member(kernels, rng):
    members = [rand(rng, (4, 2)) for _ in range(5)]
    read(kernels["gread"], members, 5, 8)
    members[2] = rand(rng, (4, 2))
    np.testing.assert_array_equal(read(kernels["gread"], members, 5, 8), flat_columns(members, 8))
    members[3] = rand(rng, (4, 2), np.float64)
    with raises("G", "member 3", "expected dtype float32, got float64"):
        read(kernels["gread"], members, 5, 8)


def test_member_changed_in_place_is_checked_again(kernels, rng):
    """A dtype changed in place on a cached member is caught (concatenate refuses to cast)."""
    members = [rand(rng, (4, 2)) for _ in range(3)]
    read(kernels["gread"], members, 3, 8)
    members[2].dtype = np.int32
    with raises("G", "member 2", "expected dtype float32, got int32"):
        read(kernels["gread"], members, 3, 8)


def test_same_group_object_again(kernels, rng):
    members = [rand(rng, (3, 3)) for _ in range(4)]
    group = Group(members)
    read(kernels["gread"], group, 4, 9)
    members[0][...] = 1  # the Group holds the same array objects: new data is seen
    np.testing.assert_array_equal(read(kernels["gread"], group, 4, 9), flat_columns(members, 9))


def test_members_of_different_shapes(kernels, rng):
    """Not one layout: checked member by member, each with its own `?` sizes."""
    members = [rand(rng, (2, 1)), rand(rng, (3, 4)), rand(rng, (6, 2))]
    np.testing.assert_array_equal(read(kernels["gread"], members, 3, 12), flat_columns(members, 12))


def test_c_order_members_refused(kernels, rng):
    """memref<f32x?x?> has stride (1, ?): a C-order member is an error, as a memref would be."""
    members = [rand(rng, (4, 3)) for _ in range(3)] + [rand(rng, (4, 3), order="C")]
    with raises("G", "member 3", "expected element strides (1, ?)"):
        read(kernels["gread"], members, 4, 12)


def test_flat_members_with_shape(kernels, rng):
    members = [rand(rng, (12,)) for _ in range(3)]
    got = read(kernels["gread"], Group(members, shape=(4, 3)), 3, 12)
    np.testing.assert_array_equal(got, flat_columns(members, 12))


def test_flat_members_too_small(kernels, rng):
    members = [rand(rng, (12,)) for _ in range(3)]
    with raises("G", "holds 12 elements", "needs 15"):
        read(kernels["gread"], Group(members, shape=(5, 3)), 3, 15)


def test_mixed_member_kinds(kernels, queue, rng):
    """NumPy and USM members in one group; a bad one is still named."""
    hosts = [rand(rng, (4, 2)) for _ in range(4)]
    members = [hosts[0], UsmArray.from_host(queue, hosts[1]), hosts[2], UsmArray.from_host(queue, hosts[3])]
    np.testing.assert_array_equal(read(kernels["gread"], members, 4, 8), flat_columns(hosts, 8))
    members[3] = UsmArray.from_host(queue, hosts[3].astype(np.float64))
    with raises("G", "member 3", "expected dtype float32, got float64"):
        read(kernels["gread"], members, 4, 8)


# -- written NumPy members ---------------------------------------------------------------
def test_written_members_copied_back_every_call(kernels, rng):
    members = [rand(rng, (4, 3)) for _ in range(6)]
    expect = [m * np.float32(2) for m in members]
    kernels["gscale2"](2.0, members, batch=6)
    for got, want in zip(members, expect):
        np.testing.assert_array_equal(got, want)
    members[5][...] = 1
    kernels["gscale2"](3.0, members, batch=6)
    np.testing.assert_array_equal(members[5], 3)
    np.testing.assert_array_equal(members[0], expect[0] * np.float32(3))


def test_written_member_made_read_only(kernels, rng):
    members = [rand(rng, (4, 3)) for _ in range(3)]
    kernels["gscale2"](2.0, members, batch=3)
    members[1].flags.writeable = False
    before = [m.copy() for m in members]
    with raises("G", "member 1", "read-only"):
        kernels["gscale2"](2.0, members, batch=3)
    for got, want in zip(members, before):
        np.testing.assert_array_equal(got, want)


# -- USM members ---------------------------------------------------------------------------
def test_usm_group_cached_then_changed(kernels, queue, rng):
    hosts = [rand(rng, (4, 3)) for _ in range(5)]
    members = [UsmArray.from_host(queue, h) for h in hosts]
    for _ in range(2):  # the second call reuses the device tables
        np.testing.assert_array_equal(read(kernels["gread"], members, 5, 12), flat_columns(hosts, 12))
    hosts[2] = rand(rng, (4, 3))
    members[2] = UsmArray.from_host(queue, hosts[2])  # another object: new tables
    np.testing.assert_array_equal(read(kernels["gread"], members, 5, 12), flat_columns(hosts, 12))
    as_tuple = tuple(members)
    for _ in range(2):  # by identity of the tuple
        np.testing.assert_array_equal(read(kernels["gread"], as_tuple, 5, 12), flat_columns(hosts, 12))


def test_usm_group_written_in_place(kernels, queue, rng):
    hosts = [rand(rng, (4, 2)) for _ in range(3)]
    members = [UsmArray.from_host(queue, h) for h in hosts]
    kernels["gscale2"](2.0, members, batch=3)
    kernels["gscale2"](2.0, members, batch=3)
    for m, h in zip(members, hosts):
        np.testing.assert_array_equal(m.to_host(), h * 4)


def test_usm_group_shorter_than_batch_after_cache(kernels, queue, rng):
    members = [UsmArray.from_host(queue, rand(rng, (4, 2))) for _ in range(3)]
    read(kernels["gread"], members, 3, 8)
    with raises("G", "group has 3 arrays, too few for batch=4"):
        kernels["gread"](members, np.zeros((8, 4), np.float32, order="F"), batch=4)


def test_usm_member_from_another_context(kernels, queue, rng):
    import dpctl

    device = queue.sycl_device
    other = dpctl.SyclQueue(dpctl.SyclContext([device]), device)
    members = [UsmArray.from_host(queue, rand(rng, (4, 2))) for _ in range(3)]
    read(kernels["gread"], members, 3, 8)
    members[1] = UsmArray.from_host(other, rand(rng, (4, 2)))
    with raises("G", "member 1", "not usable on the kernel's queue"):
        read(kernels["gread"], members, 3, 8)


# -- stacked arrays ------------------------------------------------------------------------
def test_stacked_numpy_array(kernels, rng):
    block = rand(rng, (4, 3, 5))
    expect = block * np.float32(2)
    kernels["gscale"](block, 2.0, batch=5)  # members block[:, :, g], written back
    np.testing.assert_array_equal(block, expect)
    got = read(kernels["gread"], block, 5, 12)
    np.testing.assert_array_equal(got, flat_columns([block[:, :, g] for g in range(5)], 12))


def test_stacked_view_with_gaps(kernels, rng):
    """Members of a strided view: the gaps stay as they were."""
    big = rand(rng, (6, 3, 8))
    before = big.copy()
    view = big[1:5, :, ::2]
    kernels["gscale2"](-1.0, view, batch=4)  # group<memref<f32x?x?>>: stride (1, 6) from the view
    expect = before.copy()
    expect[1:5, :, ::2] *= -1
    np.testing.assert_array_equal(big, expect)


def test_stacked_usm_array(kernels, queue, rng):
    block = rand(rng, (4, 3, 5))
    usm = UsmArray.from_host(queue, block)
    for _ in range(2):
        kernels["gscale"](usm, 2.0, batch=5)
    np.testing.assert_array_equal(usm.to_host(), block * 4)


def test_stacked_group_with_offset(kernels, rng):
    cols = 2
    block = rand(rng, (3 + 4 * cols, 4))  # 4 flat members (columns) of 11 elements
    expect = block.copy()
    expect[3 : 3 + 4 * cols] *= -1
    kernels["gscale"](Group(block, offset=3, shape=(4, cols)), -1.0, batch=4)
    np.testing.assert_array_equal(block, expect)


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda rng: rand(rng, (4, 3, 5), np.float64), ("(stacked) member", "expected dtype float32")),
        (lambda rng: rand(rng, (5, 3, 5)), ("(stacked) member", "expected shape (4, ?)")),
        (lambda rng: rand(rng, (4, 3, 5), order="C"), ("(stacked) member", "expected element strides")),
        (lambda rng: rand(rng, (4, 3, 2)), ("group has 2 arrays, too few for batch=5",)),
        (lambda rng: np.zeros((4, 3, 0), np.float32, order="F"), ("at least one array",)),
    ],
)
def test_stacked_errors(kernels, rng, make, words):
    with raises("G", *words):
        kernels["gscale"](make(rng), 1.0, batch=5)


def test_stacked_read_only_array_for_written_group(kernels, rng):
    block = rand(rng, (4, 3, 5))
    block.flags.writeable = False
    with raises("G", "read-only"):
        kernels["gscale"](block, 1.0, batch=5)


# -- Group, identities, pools ------------------------------------------------------------
def test_group_is_frozen(rng):
    members = [rand(rng, (4, 2))]
    group = Group(members, offset=1, shape=[(4, 2)])
    assert isinstance(group.arrays, tuple) and group.shape == ((4, 2),)
    with pytest.raises(AttributeError):
        group.offset = 2  # type: ignore[misc]
    members.append(rand(rng, (4, 2)))
    assert len(group) == 1


def test_member_ids_match_id():
    items = [object() for _ in range(1000)] + [None, 1.5]
    for seq in (items, tuple(items)):
        ids = member_ids(seq)
        assert ids.tolist() == [id(x) for x in seq]
        assert same_members(seq, ids)
    changed = list(items)
    changed[500] = object()
    assert not same_members(changed, member_ids(items))
    assert not same_members(items[:-1], member_ids(items))
    assert same_members([], member_ids([]))


def test_free_threaded_builds_do_not_read_list_internals(monkeypatch):
    import sysconfig

    import tinyc.runtime.members as members

    assert members._memory_layout_ok()  # this GIL build reads them
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)
    assert not members._memory_layout_ok()
    monkeypatch.undo()
    real = sysconfig.get_config_var
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: 1 if name == "Py_GIL_DISABLED" else real(name))
    assert not members._memory_layout_ok()


OPTED_OUT = """
import numpy as np, tinyc
import tinyc.runtime.members as members
assert members.member_ids is members._ids_by_map and members.same_members is members._same_by_map
k = tinyc.compile('''func @copy(%G: group<memref<f32x4>x?>, %out: memref<f32x4x?>) {
  %g = builtin.group_id : index
  %m = load %G[%g] : memref<f32x4>
  %o = subview %out[:, %g] : memref<f32x4>
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  axpby.n %one, %m, %zero, %o
}''')["copy"]
group = [np.full(4, float(g), np.float32) for g in range(50)]
for change in (None, 7, None):
    if change is not None:
        group[change] = np.full(4, -1.0, np.float32)
    out = np.zeros((4, 50), np.float32, order="F")
    k(group, out, batch=50)
    assert np.array_equal(out, np.stack(group, axis=1)), change
print("ok")
"""


def test_the_opt_out_reads_members_with_map_id(device):
    """TINYC_NO_CPYTHON_INTERNALS=1: same results through map(id), cache hits and misses included."""
    import os
    import subprocess

    env = dict(os.environ, TINYC_NO_CPYTHON_INTERNALS="1")
    done = subprocess.run([sys.executable, "-c", OPTED_OUT], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_pools_reused_and_released(queue, spirv, rng):
    from runtime_testlib import info
    from tinyc.runtime.kernel import Kernel

    k = Kernel(spirv, info("axpy"), queue)
    k.host_pointers = False  # NumPy data copied: the pools hold the buffers
    x, y = rand(rng, (16, 40)), rand(rng, (16, 40))
    k(1.0, x, y, batch=40)
    held = k._pools.device.held_bytes
    assert held > 0
    k(1.0, x, y, batch=40)
    assert k._pools.device.held_bytes == held  # the same buffers again, none added
    k.release_buffers()
    assert k._pools.device.held_bytes == 0 and k._pools.host.held_bytes == 0


def test_threads_calling_one_kernel(kernels, rng):
    """Pooled buffers are checked out per call: concurrent calls do not mix data."""
    k = kernels["scale"]
    arrays = [rand(rng, (64, 50)) for _ in range(8)]
    expect = [a * np.float32(i + 1) for i, a in enumerate(arrays)]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(3):
                a = arrays[i].copy(order="F")
                k(float(i + 1), a, batch=50)
                np.testing.assert_array_equal(a, expect[i])
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(arrays))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_written_member_aliased_by_another_argument(queue, spirv, rng):
    """A written member that is also the output (or a view of it): one device region, as on the host.

    gread with G marked written: O[k, 0] = 2 * G_0[k] over the 8 elements; O
    is member 0 itself, so the update happens in place (copies of the
    member would leave it unchanged).
    """
    from runtime_testlib import info
    from tinyc.runtime.kernel import Kernel

    k = Kernel(spirv, info("gread", G={"written": True}), queue)
    for output in (lambda m: m, lambda m: m[:, :]):
        member = rand(rng, (4, 2))
        expect = member * 2
        k([member], output(member), batch=1)
        np.testing.assert_array_equal(member, expect)


def test_written_views_of_one_block(kernels, rng):
    """Written members that are adjacent views: staged as one region, copied back whole."""
    block = rand(rng, (4, 3, 50))
    expect = block * np.float32(-2)
    kernels["gscale2"](-2.0, [block[:, :, g] for g in range(50)], batch=50)
    np.testing.assert_array_equal(block, expect)


def test_written_views_with_gaps_between(kernels, rng):
    """Every other column block: the gaps between members are never written."""
    block = rand(rng, (4, 3, 20))
    before = block.copy()
    kernels["gscale2"](3.0, [block[:, :, g] for g in range(0, 20, 2)], batch=10)
    expect = before.copy()
    expect[:, :, ::2] *= np.float32(3)
    np.testing.assert_array_equal(block, expect)


def test_table_cache_keeps_few_pinned_entries():
    """Entries that keep members alive are limited (they may hold much memory)."""
    from tinyc.runtime.members import TableCache

    cache = TableCache()
    for i in range(6):
        cache.add(("object", i, None), [i], pins=object())
    cache.add(("stacked", 1), ["t"])
    assert cache.find(("stacked", 1)) == ["t"]
    found = [i for i in range(6) if cache.find(("object", i, None)) is not None]
    assert found == [3, 4, 5]


class Tagged(np.ndarray):
    """An ndarray subclass (like np.memmap): checked and copied like an ndarray."""


@pytest.mark.parametrize("written", [False, True])
def test_ndarray_subclass_members(kernels, rng, written):
    members = [rand(rng, (4, 2)).view(Tagged) for _ in range(3)]
    if written:
        expect = [np.asarray(m) * 2 for m in members]
        kernels["gscale2"](2.0, members, batch=3)
        for got, want in zip(members, expect):
            np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_array_equal(read(kernels["gread"], members, 3, 8), flat_columns(members, 8))


# -- USM memrefs seen before ------------------------------------------------------------
def test_usm_memref_checked_again_when_it_changes(kernels, queue, rng):
    """A USM memref's checks are reused only while its interface's fields stay the same."""
    host = rand(rng, (16, 6))
    usm = UsmArray.from_host(queue, host)
    kernels["scale"](2.0, usm, batch=6)
    kernels["scale"](2.0, usm, batch=6)  # the same fields: the checked arguments again
    np.testing.assert_array_equal(usm.to_host(), host * 4)
    with raises("A", "mode 1 has size 6, too small for batch=7"):
        kernels["scale"](2.0, usm, batch=7)  # the batch is still checked
    usm.dtype = np.dtype(np.int32)  # the same object, another dtype
    with raises("A", "expected dtype float32, got int32"):
        kernels["scale"](2.0, usm, batch=6)
    usm.dtype = np.dtype(np.float32)
    usm.shape, usm.strides = (6, 16), (16, 1)  # now a transposed view: refused
    with raises("A", "expected element strides (1, ?)"):
        kernels["scale"](2.0, usm, batch=6)
    usm.shape, usm.strides = (16, 3), (1, 32)  # every other column
    kernels["scale"](0.5, usm, batch=3)
    usm.shape, usm.strides = (16, 6), (1, 16)
    expect = host * 4
    expect[:, ::2] *= np.float32(0.5)
    np.testing.assert_array_equal(usm.to_host(), expect)


@pytest.mark.parametrize("written", [False, True])
def test_prepared_call_keeps_gathered_buffers(queue, spirv, rng, written):
    """prepare() (no pools): the gathered host and device buffers live as long as the call.

    Junk of the same size is allocated between prepare and launch, so a freed
    buffer would be reused and the kernel would read it."""
    import gc

    from runtime_testlib import info
    from tinyc.runtime.kernel import Kernel

    k = Kernel(spirv, info("gread", G={"written": written}), queue)
    members = [rand(rng, (4, 3)) for _ in range(20000)]
    out = np.zeros((12, len(members)), np.float32, order="F")
    prepared = k.prepare(members, out, batch=len(members))
    gc.collect()
    junk = [np.full(12 * 4 * len(members), 7, np.uint8) for _ in range(4)]
    prepared.finish(prepared.launch())
    del junk
    np.testing.assert_array_equal(out, flat_columns(members, 12))
    times = k.time(members, out, batch=len(members), repeat=2)
    assert len(times) == 2
