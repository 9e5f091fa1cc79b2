"""parallel regions, subgroup operations and barriers in the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from reference_testlib import kernel, run_text
from tinyc.reference import ReferenceFault, ReferenceUnsupported, run

ATTRS = "attributes {work_group_size=[32, 2], subgroup_size=16}"  # 64 work-items, 4 subgroups
LINEAR_ID = """
    %sg = builtin.subgroup_id : i32
    %lid = builtin.subgroup_local_id : i32
    %sgs = builtin.subgroup_size : i32
    %base = arith.mul %sg, %sgs : i32
    %l32 = arith.add %base, %lid : i32
    %l = cast %l32 : index"""


def subgroups(x: np.ndarray, size: int = 16) -> np.ndarray:
    return x.reshape(-1, size)


@pytest.mark.parametrize("ty, dtype", [("f32", np.float32), ("i32", np.int32), ("f64", np.float64)])
def test_subgroup_operations(ty, dtype):
    rng = np.random.default_rng(5)
    x = (rng.integers(-100, 100, 64) if ty == "i32" else rng.uniform(-1, 1, 64)).astype(dtype)
    out = np.zeros((64, 10), dtype=dtype, order="F")
    ops = ["subgroup_add.reduce", "subgroup_add.inclusive_scan", "subgroup_add.exclusive_scan",
           "subgroup_max.reduce", "subgroup_max.inclusive_scan", "subgroup_max.exclusive_scan",
           "subgroup_min.reduce", "subgroup_min.inclusive_scan", "subgroup_min.exclusive_scan"]
    body = "\n".join(f"""
        %r{k} = {name} %v : {ty}
        %k{k} = constant {k} : index
        store %r{k}, %out[%l, %k{k}]""" for k, name in enumerate(ops))
    run_text(f"""
    func @k(%x: memref<{ty}x64>, %out: memref<{ty}x64x10>) {ATTRS} {{
      parallel {{
        {LINEAR_ID}
        %v = load %x[%l] : {ty}
        %c3 = constant 3 : i32
        %b = subgroup_broadcast %v, %c3 : {ty}
        %k9 = constant 9 : index
        store %b, %out[%l, %k9]
        {body}
      }}
    }}""", [x, out])
    s = subgroups(x)
    low = np.iinfo(dtype).min if ty == "i32" else -np.inf
    high = np.iinfo(dtype).max if ty == "i32" else np.inf

    def exclusive(scan, identity):
        return np.concatenate([np.full((4, 1), identity, dtype=dtype), scan[:, :-1]], axis=1)

    cs, cmax, cmin = np.cumsum(s, axis=1, dtype=dtype), np.maximum.accumulate(s, axis=1), \
        np.minimum.accumulate(s, axis=1)
    expected = [np.repeat(s.sum(axis=1, keepdims=True), 16, axis=1), cs, exclusive(cs, 0),
                np.repeat(s.max(axis=1, keepdims=True), 16, axis=1), cmax, exclusive(cmax, low),
                np.repeat(s.min(axis=1, keepdims=True), 16, axis=1), cmin, exclusive(cmin, high),
                np.repeat(s[:, 3:4], 16, axis=1)]
    for k, e in enumerate(expected):
        np.testing.assert_allclose(out[:, k], e.reshape(-1), rtol=1e-6, err_msg=f"column {k}")


def test_subgroup_add_scan_rounds_in_lane_order():
    # 1 + 2^-24 + 2^-24 ... : sequential f32 sums stay 1.0; a pairwise sum would not.
    x = np.full(16, 2.0**-24, dtype=np.float32)
    x[0] = 1.0
    out = np.zeros(16, dtype=np.float32)
    run_text(f"""
    func @k(%x: memref<f32x16>, %out: memref<f32x16>) attributes {{work_group_size=[16, 1], subgroup_size=16}} {{
      parallel {{
        {LINEAR_ID}
        %v = load %x[%l] : f32
        %s = subgroup_add.inclusive_scan %v : f32
        store %s, %out[%l]
      }}
    }}""", [x, out])
    assert (out == 1.0).all()


def test_builtins_in_parallel_region():
    out = np.zeros((32, 5, 3), dtype=np.int64, order="F")
    run_text("""
    func @k(%out: memref<i64x32x5x?>) attributes {work_group_size=[16, 2], subgroup_size=8} {
      %gid = builtin.group_id : index
      %gs = builtin.group_size : index
      %ns = builtin.num_subgroups : i32
      %view = subview %out[:, :, %gid] : memref<i64x32x5>
      parallel {
        %sg = builtin.subgroup_id : i32
        %lid = builtin.subgroup_local_id : i32
        %sgs = builtin.subgroup_size : i32
        %base = arith.mul %sg, %sgs : i32
        %l32 = arith.add %base, %lid : i32
        %l = cast %l32 : index
        %c0 = constant 0 : index
        %c1 = constant 1 : index
        %c2 = constant 2 : index
        %c3 = constant 3 : index
        %c4 = constant 4 : index
        %a = cast %sg : i64
        %b = cast %lid : i64
        %c = cast %ns : i64
        %d = cast %gid : i64
        %e = cast %gs : i64
        store %a, %view[%l, %c0]
        store %b, %view[%l, %c1]
        store %c, %view[%l, %c2]
        store %d, %view[%l, %c3]
        store %e, %view[%l, %c4]
      }
    }""", [out], batch=3)
    lanes = np.arange(32)
    for g in range(3):
        o = out[:, :, g]
        assert o[:, 0].tolist() == (lanes // 8).tolist()   # 2x16 work-items: 4 subgroups of 8
        assert o[:, 1].tolist() == (lanes % 8).tolist()
        assert (o[:, 2] == 4).all() and (o[:, 3] == g).all() and (o[:, 4] == 3).all()


def test_divergent_if_with_yields_in_parallel():
    out = np.zeros(64, dtype=np.int32)
    run_text(f"""
    func @k(%out: memref<i32x64>) {ATTRS} {{
      parallel {{
        {LINEAR_ID}
        %c5 = constant 5 : i32
        %small = cmp.lt %lid, %c5 : bool
        %v = if %small -> (i32) {{
          %m = arith.mul %lid, %lid : i32
          yield (%m)
        }} else {{
          %n = arith.neg %sg : i32
          yield (%n)
        }}
        store %v, %out[%l]
      }}
    }}""", [out])
    lanes = np.arange(64)
    expected = np.where(lanes % 16 < 5, (lanes % 16) ** 2, -(lanes // 16))
    assert out.tolist() == expected.tolist()


def test_subgroup_operation_in_a_subgroup_uniform_branch():
    out = np.zeros(64, dtype=np.int32)
    run_text(f"""
    func @k(%out: memref<i32x64>) {ATTRS} {{
      parallel {{
        {LINEAR_ID}
        %one = constant 1 : i32
        %odd_sg = arith.and %sg, %one : i32
        %c = cmp.eq %odd_sg, %one : bool
        %v = if %c -> (i32) {{
          %s = subgroup_add.exclusive_scan %lid : i32
          yield (%s)
        }} else {{
          %z = constant -1 : i32
          yield (%z)
        }}
        store %v, %out[%l]
      }}
    }}""", [out])
    lanes = np.arange(64) % 16
    expected = np.where((np.arange(64) // 16) % 2 == 1, lanes * (lanes - 1) // 2, -1)
    assert out.tolist() == expected.tolist()


def test_subgroup_operation_with_part_of_a_subgroup_active_is_unsupported():
    with pytest.raises(ReferenceUnsupported, match="part of a subgroup"):
        run_text(f"""
        func @k() {ATTRS} {{
          parallel {{
            {LINEAR_ID}
            %c5 = constant 5 : i32
            %c = cmp.lt %lid, %c5 : bool
            if %c {{
              %s = subgroup_add.reduce %lid : i32
            }}
          }}
        }}""", [])


def test_barrier_orders_local_memory_between_work_items():
    out = np.zeros(64, dtype=np.float32)
    run_text(f"""
    func @k(%out: memref<f32x64>) {ATTRS} {{
      %tmp = alloca : memref<f32x64,local>
      parallel {{
        {LINEAR_ID}
        %f = cast %l32 : f32
        store %f, %tmp[%l]
        barrier.local
        %c37 = constant 37 : i32
        %c64 = constant 64 : i32
        %s = arith.add %l32, %c37 : i32
        %m = arith.rem %s, %c64 : i32
        %j = cast %m : index
        %v = load %tmp[%j] : f32
        store %v, %out[%l]
      }}
    }}""", [out])
    assert out.tolist() == [float((i + 37) % 64) for i in range(64)]


def test_barrier_in_divergent_control_flow_faults():
    with pytest.raises(ReferenceFault, match="barrier"):
        run_text(f"""
        func @k() {ATTRS} {{
          parallel {{
            {LINEAR_ID}
            %c5 = constant 5 : i32
            %c = cmp.lt %lid, %c5 : bool
            if %c {{
              barrier
            }}
          }}
        }}""", [])


def test_loop_with_per_work_item_trip_counts():
    out = np.zeros(64, dtype=np.int32)
    run_text(f"""
    func @k(%out: memref<i32x64>) {ATTRS} {{
      parallel {{
        {LINEAR_ID}
        %z = constant 0 : i32
        %one = constant 1 : i32
        %s = for %j:i32 = %z, %lid init(%acc=%z) -> (i32) {{
          %t = arith.add %acc, %j : i32
          yield (%t)
        }}
        %sgp = arith.add %sg, %one : i32
        %u = for %j:i32 = %z, %sgp init(%acc=%s) -> (i32) {{
          %t = arith.add %acc, %one : i32
          yield (%t)
        }}
        store %u, %out[%l]
      }}
    }}""", [out])
    lanes = np.arange(64)
    assert out.tolist() == ((lanes % 16) * (lanes % 16 - 1) // 2 + lanes // 16 + 1).tolist()


def test_parallel_store_atomic_add_counts_work_items():
    acc = np.zeros(2, dtype=np.int32)
    run_text(f"""
    func @k(%a: memref<i32x2>) {ATTRS} {{
      parallel {{
        {LINEAR_ID}
        %one = constant 1 : i32
        %c0 = constant 0 : index
        store.atomic_add %one, %a[%c0]
        %c1 = constant 1 : index
        store.atomic_add %lid, %a[%c1]
      }}
    }}""", [acc])
    assert acc.tolist() == [64, 4 * 120]


def test_subgroup_broadcast_needs_a_uniform_lane():
    with pytest.raises(ReferenceFault, match="not uniform"):
        run_text(f"""
        func @k() {ATTRS} {{
          parallel {{
            {LINEAR_ID}
            %b = subgroup_broadcast %lid, %lid : i32
          }}
        }}""", [])


def test_geometry_from_run_arguments():
    text = f"""
    func @k(%out: memref<i32x1>) {{
      %ns = builtin.num_subgroups : i32
      %c0 = constant 0 : index
      store %ns, %out[%c0]
    }}"""
    out = np.zeros(1, dtype=np.int32)
    run(kernel(text), [out], 1, work_group_size=(64, 2), subgroup_size=32)
    assert out[0] == 4
    run(kernel(text), [out], 1)
    assert out[0] == 1  # default: one subgroup of 16
