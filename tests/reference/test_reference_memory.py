"""Memrefs, views and groups in the reference interpreter, against NumPy slicing."""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from reference_testlib import fortran, run_text
from tinyc.diagnostics import LaunchError
from tinyc.reference import ReferenceFault

COPY = "%one = constant 1.0 : f32\n  %zero = constant 0.0 : f32\n  axpby.n %one, {src}, %zero, {dst}"


def copy(src: str, dst: str) -> str:
    """IR that copies memref `src` into `dst` (axpby with alpha 1, beta 0)."""
    return COPY.format(src=src, dst=dst)


def copy3(src: str, dst: str, shape: tuple[int, int, int]) -> str:
    """IR that copies a 3-D memref element by element in a foreach."""
    bounds = "\n".join(f"%n{k} = constant {n} : index" for k, n in enumerate(shape))
    return f"""%z = constant 0 : index
      {bounds}
      foreach (%i0, %i1, %i2) = (%z, %z, %z), (%n0, %n1, %n2) {{
        %v = load {src}[%i0, %i1, %i2] : f32
        store %v, {dst}[%i0, %i1, %i2]
      }}"""


# ---------------------------------------------------------------- subview

def test_subview_block_keeps_strides():
    A = fortran((8, 6))
    out = np.zeros((3, 4), dtype=np.float32, order="F")
    run_text(f"""
    func @k(%A: memref<f32x8x6>, %out: memref<f32x3x4>) {{
      %s = subview %A[2:3, 1:4] : memref<f32x3x4,strided<1,8>>
      {copy("%s", "%out")}
    }}""", [A, out])
    np.testing.assert_array_equal(out, A[2:5, 1:5])


def test_subview_rank_reduction_and_whole_mode():
    A = fortran((8, 6, 5))
    out = np.zeros((6,), dtype=np.float32)
    out2 = np.zeros((8, 5), dtype=np.float32, order="F")
    run_text(f"""
    func @k(%A: memref<f32x8x6x5>, %out: memref<f32x6>, %out2: memref<f32x8x5>) {{
      %i = constant 3 : index
      %row = subview %A[%i, :, 4] : memref<f32x6,strided<8>>
      {copy("%row", "%out")}
      %mid = subview %A[:, 2:0, 0:5] : memref<f32x8x5,strided<1,48>>
      axpby.n %one, %mid, %zero, %out2
    }}""", [A, out, out2])
    np.testing.assert_array_equal(out, A[3, :, 4])
    np.testing.assert_array_equal(out2, A[:, 2, :])


def test_subview_with_dynamic_offset_and_size():
    A = fortran((10, 4))
    out = np.full((10, 4), -1.0, dtype=np.float32, order="F")
    run_text(f"""
    func @k(%A: memref<f32x10x4>, %out: memref<f32x10x4>, %o: index, %n: index) {{
      %s = subview %A[%o:%n, :] : memref<f32x?x4,strided<1,10>>
      %t = subview %out[%o:%n, :] : memref<f32x?x4,strided<1,10>>
      {copy("%s", "%t")}
    }}""", [A, out, 3, 5])
    expected = np.full((10, 4), -1.0, dtype=np.float32)
    expected[3:8] = A[3:8]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("offset, size", [(6, 5), (11, 0)])
def test_subview_outside_the_memref_faults(offset, size):
    A = fortran((10, 4))
    with pytest.raises(ReferenceFault, match="subview"):
        run_text("""
        func @k(%A: memref<f32x10x4>, %o: index, %n: index) {
          %s = subview %A[%o:%n, 0] : memref<f32x?>
        }""", [A, offset, size])


# ---------------------------------------------------------------- expand, fuse

def test_expand_splits_a_mode_column_major():
    A = fortran((12, 5))
    out = np.zeros((3, 4, 5), dtype=np.float32, order="F")
    run_text(f"""
    func @k(%A: memref<f32x12x5>, %out: memref<f32x3x4x5>) {{
      %e = expand %A[0 -> 3x4] : memref<f32x3x4x5>
      {copy3("%e", "%out", (3, 4, 5))}
    }}""", [A, out])
    np.testing.assert_array_equal(out, A.reshape((3, 4, 5), order="F"))


def test_expand_with_dynamic_sizes_and_mismatch_fault():
    A = fortran((32, 16))
    out = np.zeros((32, 2, 8), dtype=np.float32, order="F")
    text = f"""
    func @k(%A: memref<f32x32x16>, %out: memref<f32x32x2x8>, %n: index) {{
      %e = expand %A[1 -> %n x 8] : memref<f32x32x?x8>
      %f = subview %e[:, 0:2, :] : memref<f32x32x2x8,strided<1,32,?>>
      {copy3("%f", "%out", (32, 2, 8))}
    }}"""
    run_text(text, [A, out, 2])
    np.testing.assert_array_equal(out, A.reshape((32, 2, 8), order="F"))
    with pytest.raises(ReferenceFault, match="expand"):
        run_text(text, [A, out, 3])


def test_expand_keeps_a_non_unit_stride():
    A = fortran((64, 7))
    view = A[::2, :]  # memref<f32x32x7,strided<2,64>>
    out = np.zeros((4, 8, 7), dtype=np.float32, order="F")
    run_text(f"""
    func @k(%A: memref<f32x32x7,strided<2,64>>, %out: memref<f32x4x8x7>) {{
      %e = expand %A[0 -> 4x8] : memref<f32x4x8x7,strided<2,8,64>>
      {copy3("%e", "%out", (4, 8, 7))}
    }}""", [view, out])
    np.testing.assert_array_equal(out, view.reshape((4, 8, 7), order="F"))


def test_fuse_merges_modes():
    A = fortran((3, 4, 5))
    out = np.zeros((12, 5), dtype=np.float32, order="F")
    out2 = np.zeros((3, 20), dtype=np.float32, order="F")
    run_text(f"""
    func @k(%A: memref<f32x3x4x5>, %out: memref<f32x12x5>, %out2: memref<f32x3x20>) {{
      %f = fuse %A[0, 1] : memref<f32x12x5>
      {copy("%f", "%out")}
      %g = fuse %A[1, 2] : memref<f32x3x20>
      axpby.n %one, %g, %zero, %out2
    }}""", [A, out, out2])
    np.testing.assert_array_equal(out, A.reshape((12, 5), order="F"))
    np.testing.assert_array_equal(out2, A.reshape((3, 20), order="F"))


def test_fuse_of_incompatible_dynamic_strides_faults():
    big = fortran((10, 16))
    with pytest.raises(ReferenceFault, match="cannot be fused"):
        run_text("""
        func @k(%A: memref<f32x8x16,strided<1,?>>) {
          %f = fuse %A[0, 1] : memref<f32x128,strided<1>>
        }""", [big[:8, :]])


def test_size_of_memref_modes_and_group():
    A = np.zeros((5, 7), dtype=np.float32, order="F")
    out = np.zeros(3, dtype=np.int64)
    run_text("""
    func @k(%A: memref<f32x?x?>, %G: group<memref<f32x2>x?>, %out: memref<indexx3>) {
      %m = size %A[0] : index
      %n = size %A[1] : index
      %g = size %G[0] : index
      %c0 = constant 0 : index
      %c1 = constant 1 : index
      %c2 = constant 2 : index
      store %m, %out[%c0]
      store %n, %out[%c1]
      store %g, %out[%c2]
    }""", [A, [np.zeros(2, np.float32)] * 4, out])
    assert list(out) == [5, 7, 4]


# ---------------------------------------------------------------- groups

def test_group_load_per_work_group():
    batch = 5
    members = [fortran((4, 3), seed=s) for s in range(batch)]
    out = np.zeros((4, 3, batch), dtype=np.float32, order="F")
    run_text(f"""
    func @k(%G: group<memref<f32x4x3>x?>, %out: memref<f32x4x3x?>) {{
      %gid = builtin.group_id : index
      %m = load %G[%gid] : memref<f32x4x3>
      %o = subview %out[:, :, %gid] : memref<f32x4x3>
      {copy("%m", "%o")}
    }}""", [members, out], batch=batch)
    np.testing.assert_array_equal(out, np.stack(members, axis=-1))


def test_group_as_one_stacked_array_stores_into_its_members():
    """The runtime's extension: members stacked along the last mode of one array."""
    batch = 4
    stacked = np.asfortranarray(np.zeros((4, 3, batch), dtype=np.float32))
    source = fortran((4, 3, batch), seed=3)
    run_text(f"""
    func @k(%G: group<memref<f32x4x3>x?>, %src: memref<f32x4x3x?>) {{
      %gid = builtin.group_id : index
      %m = load %G[%gid] : memref<f32x4x3>
      %s = subview %src[:, :, %gid] : memref<f32x4x3>
      {copy("%s", "%m")}
    }}""", [stacked, source], batch=batch)
    np.testing.assert_array_equal(stacked, source)


@pytest.mark.parametrize("dynamic", [False, True])
def test_group_with_offset_starts_offset_elements_after_each_member(dynamic):
    batch, offset = 3, 2
    members = [np.arange(100 * s, 100 * s + 20, dtype=np.float32) for s in range(batch)]
    out = np.zeros((2, 4, batch), dtype=np.float32, order="F")
    gtype = f"group<memref<f32x2x4>x?, offset: {'?' if dynamic else offset}>"
    group = tinyc.Group(members, offset=offset) if dynamic else members
    run_text(f"""
    func @k(%G: {gtype}, %out: memref<f32x2x4x?>) {{
      %gid = builtin.group_id : index
      %m = load %G[%gid] : memref<f32x2x4>
      %o = subview %out[:, :, %gid] : memref<f32x2x4>
      {copy("%m", "%o")}
    }}""", [group, out], batch=batch)
    for s in range(batch):
        np.testing.assert_array_equal(out[:, :, s], members[s][offset:offset + 8].reshape((2, 4), order="F"))


def test_flat_group_members_with_dynamic_sizes_from_group_shape():
    members = [np.arange(10 * s, 10 * s + 10, dtype=np.float64) for s in range(2)]
    out = np.zeros((3, 2, 2), dtype=np.float64, order="F")
    run_text("""
    func @k(%G: group<memref<f64x?x2>x?, offset: ?>, %out: memref<f64x3x2x?>) {
      %gid = builtin.group_id : index
      %m = load %G[%gid] : memref<f64x?x2>
      %o = subview %out[:, :, %gid] : memref<f64x3x2>
      %one = constant 1.0 : f64
      %zero = constant 0.0 : f64
      axpby.n %one, %m, %zero, %o
    }""", [tinyc.Group(members, offset=1, shape=(3, 2), stride=(1, 4)), out], batch=2)
    for s in range(2):
        np.testing.assert_array_equal(out[:, :, s], [[10 * s + 1, 10 * s + 5], [10 * s + 2, 10 * s + 6],
                                                      [10 * s + 3, 10 * s + 7]])


def test_group_member_too_short_for_offset_is_a_launch_error():
    # Members are checked when a work-group loads them (a batch may hold 10^5 of them).
    with pytest.raises(LaunchError, match="offset"):
        run_text("""
        func @k(%G: group<memref<f32x4>x?, offset: 3>) {
          %gid = builtin.group_id : index
          %m = load %G[%gid] : memref<f32x4>
        }""", [[np.zeros(6, np.float32)]])


def test_group_loaded_with_a_varying_index_in_spmd():
    members = [np.full(4, 10.0 * s, dtype=np.float32) + np.arange(4, dtype=np.float32)
               for s in range(3)]
    out = np.zeros((4, 3), dtype=np.float32, order="F")
    run_text("""
    func @k(%G: group<memref<f32x4>x3>, %out: memref<f32x4x3>) {
      %c0 = constant 0 : index
      %c3 = constant 3 : index
      %c4 = constant 4 : index
      foreach (%i, %j) = (%c0, %c0), (%c4, %c3) {
        %m = load %G[%j] : memref<f32x4>
        %v = load %m[%i] : f32
        store %v, %out[%i, %j]
      }
    }""", [members, out])
    np.testing.assert_array_equal(out, np.stack(members, axis=1))


# ---------------------------------------------------------------- load / store / alloca

def test_strided_numpy_view_argument_with_dynamic_strides():
    big = fortran((9, 8))
    view = big[1::2, ::3]  # element strides (2, 27)
    out = np.zeros(view.shape, dtype=np.float32, order="F")
    run_text(f"""
    func @k(%A: memref<f32x?x?,strided<?,?>>, %out: memref<f32x?x?>) {{
      {copy("%A", "%out")}
    }}""", [view, out])
    np.testing.assert_array_equal(out, view)


def test_out_of_bounds_load_and_store_fault():
    A = np.zeros((4, 4), dtype=np.float32, order="F")
    for text in ("%v = load %A[%i, %c0] : f32", "store %x, %A[%c0, %i]"):
        with pytest.raises(ReferenceFault, match="out of bounds"):
            run_text(f"""
            func @k(%A: memref<f32x4x4>, %i: index) {{
              %c0 = constant 0 : index
              %x = constant 1.0 : f32
              {text}
            }}""", [A, 4])
    with pytest.raises(ReferenceFault, match="out of bounds"):
        run_text("""
        func @k(%A: memref<f32x4x4>, %i: index) {
          %c0 = constant 0 : index
          %v = load %A[%i, %c0] : f32
        }""", [A, -1])


def test_out_of_bounds_in_one_lane_faults():
    A = np.zeros(8, dtype=np.float32)
    with pytest.raises(ReferenceFault, match="index 8 out of bounds"):
        run_text("""
        func @k(%A: memref<f32x8>) {
          %c0 = constant 0 : index
          %c9 = constant 9 : index
          foreach (%i) = (%c0), (%c9) {
            %v = load %A[%i] : f32
          }
        }""", [A])


def test_uninitialised_integer_local_memory_holds_a_garbage_pattern():
    out = np.zeros(3, dtype=np.int32)
    run_text("""
    func @k(%out: memref<i32x3>) {
      %tmp = alloca : memref<i32x6,strided<2>,local>
      %c0 = constant 0 : index
      %c3 = constant 3 : index
      %x = constant 7 : i32
      store %x, %tmp[%c0]
      foreach (%i) = (%c0), (%c3) {
        %v = load %tmp[%i] : i32
        store %v, %out[%i]
      }
    }""", [out])
    garbage = np.frombuffer(bytes([0xA5] * 4), dtype=np.int32)[0]
    assert out.tolist() == [7, garbage, garbage]


def test_plain_atomic_store_in_foreach():
    out = np.zeros(4, dtype=np.float64)
    run_text("""
    func @k(%out: memref<f64x4>) {
      %c0 = constant 0 : index
      %c4 = constant 4 : index
      foreach (%i) = (%c0), (%c4) {
        %f = cast %i : f64
        store.atomic %f, %out[%i]
      }
    }""", [out])
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_uninitialised_local_memory_reads_nan():
    out = np.zeros((4, 4), dtype=np.float32, order="F")
    run_text(f"""
    func @k(%out: memref<f32x4x4>) {{
      %tmp = alloca : memref<f32x4x4,local>
      {copy("%tmp", "%out")}
    }}""", [out])
    assert np.isnan(out).all()


def test_lifetime_stop_scribbles_over_local_memory():
    out = np.zeros(4, dtype=np.float32)
    run_text(f"""
    func @k(%out: memref<f32x4>) {{
      %tmp = alloca : memref<f32x4,local>
      %c = constant 2.0 : f32
      %c0 = constant 0 : index
      store %c, %tmp[%c0]
      lifetime_stop %tmp
      {copy("%tmp", "%out")}
    }}""", [out])
    assert np.isnan(out).all()


def test_store_atomic_add_in_foreach_adds_once_per_iteration():
    hist = np.zeros(4, dtype=np.int32)
    data = np.array([0, 1, 1, 3, 3, 3, 2, 1, 3], dtype=np.int32)
    run_text("""
    func @k(%d: memref<i32x9>, %h: memref<i32x4>) {
      %c0 = constant 0 : index
      %c9 = constant 9 : index
      %one = constant 1 : i32
      foreach (%i) = (%c0), (%c9) {
        %b = load %d[%i] : i32
        %j = cast %b : index
        store.atomic_add %one, %h[%j]
      }
    }""", [data, hist])
    np.testing.assert_array_equal(hist, np.bincount(data, minlength=4))


def test_collective_store_atomic_add_runs_on_every_work_item():
    acc = np.zeros(1, dtype=np.float32)
    run_text("""
    func @k(%a: memref<f32x1>) attributes {work_group_size=[32, 2], subgroup_size=16} {
      %c0 = constant 0 : index
      %x = constant 0.5 : f32
      store.atomic_add %x, %a[%c0]
    }""", [acc])
    assert acc[0] == 32.0


# ---------------------------------------------------------------- argument checks

def test_arguments_are_checked():
    text = """
    func @k(%A: memref<f32x4x4>) {
    }"""
    with pytest.raises(LaunchError, match="dtype"):
        run_text(text, [np.zeros((4, 4), np.float64, order="F")])
    with pytest.raises(LaunchError, match="shape"):
        run_text(text, [np.zeros((4, 5), np.float32, order="F")])
    with pytest.raises(LaunchError, match="strides"):
        run_text(text, [np.zeros((4, 4), np.float32, order="C")])
    with pytest.raises(LaunchError, match="takes 1 arguments"):
        run_text(text, [])


def test_an_empty_array_takes_any_strides():
    """An array with a 0 extent addresses no memory, and NumPy may give it any strides
    ((300, 0) in Fortran order has (0, 0)): the interpreter takes it as the runtime does
    (`tinyc run --check` once failed on such an argument: "expected element strides")."""
    src = np.empty((300, 0), np.float32, order="F")
    dst = np.empty((300, 0), np.float32, order="F")
    run_text(f"func @k(%A: memref<f32x300x?>, %B: memref<f32x300x?>) {{\n  {copy('%A', '%B')}\n}}", [src, dst])
