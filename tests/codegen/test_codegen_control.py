"""for / if with yields, loop controls, barrier with local memory, foreach."""

from __future__ import annotations

import re

import numpy as np
import pytest

from codegen_testlib import assembly, compiled, fortran, program, spmd_kernel

LOOPS = spmd_kernel("loops", "%n: i32, %A: memref<i64x?>, %O: memref<i64x?x5>", """
    %a = load %A[%i] : i64
    %c0 = constant 0 : i32
    %c1 = constant 1 : i32
    %c3 = constant 3 : i32
    %z = constant 0 : i64
    %o = constant 1 : i64
    ; Fibonacci numbers: fib(n), fib(n+1)
    %f0, %f1 = for %k:i32 = %c0, %n init(%p = %z, %q = %o) -> (i64, i64) {
        %s = arith.add %p, %q : i64
        yield (%q, %s)
    }
    ; sum over k in [0, n) step 3 of (k even ? k*a : -k), with a nested if
    %acc = for %k:i32 = %c0, %n, %c3 init(%t = %z) -> (i64) {
        %two = constant 2 : i32
        %r = arith.rem %k, %two : i32
        %even = cmp.eq %r, %c0 : bool
        %kk = cast %k : i64
        %v = if %even -> (i64) {
            %m = arith.mul %kk, %a : i64
            yield (%m)
        } else {
            %m = arith.neg %kk : i64
            yield (%m)
        }
        %t2 = arith.add %t, %v : i64
        yield (%t2)
    } {unroll=true}
    ; empty range: the initial value comes out
    %none = for %k:i32 = %n, %c0 init(%t = %a) -> (i64) {
        %t2 = arith.add %t, %o : i64
        yield (%t2)
    } {unroll=false}
    ; nested loops over index, inner bound depends on the outer variable
    %ci0 = constant 0 : index
    %ci1 = constant 1 : index
    %ni = cast %n : index
    %tri = for %k = %ci0, %ni init(%t = %z) -> (i64) {
        %inner = for %j = %ci0, %k init(%u = %t) -> (i64) {
            %u2 = arith.add %u, %o : i64
            yield (%u2)
        }
        yield (%inner)
    }
    ; if without results and without else: a divergent store
    %k0 = constant 0 : index
    %k1 = constant 1 : index
    %k2 = constant 2 : index
    %k3 = constant 3 : index
    %k4 = constant 4 : index
    store %f0, %O[%i, %k0]
    store %acc, %O[%i, %k1]
    store %none, %O[%i, %k2]
    store %tri, %O[%i, %k3]
    store %z, %O[%i, %k4]
    %pos = cmp.gt %a, %z : bool
    if %pos {
        store %f1, %O[%i, %k4]
    }
""")


def test_loops_and_ifs(device):
    n = 13
    a = np.arange(-16, 16, dtype=np.int64)
    out = fortran(np.full((32, 5), -99, np.int64))
    program(LOOPS)["loops"](np.int32(n), a, out, batch=2)
    fib = [0, 1]
    for _ in range(n + 1):
        fib.append(fib[-1] + fib[-2])
    acc = sum((k * a) if k % 2 == 0 else np.full_like(a, -k) for k in range(0, n, 3))
    np.testing.assert_array_equal(out[:, 0], fib[n])
    np.testing.assert_array_equal(out[:, 1], acc)
    np.testing.assert_array_equal(out[:, 2], a)
    np.testing.assert_array_equal(out[:, 3], n * (n - 1) // 2)
    np.testing.assert_array_equal(out[:, 4], np.where(a > 0, fib[n + 1], 0))


def test_loop_controls_and_phis():
    asm = assembly(LOOPS)
    merges = re.findall(r"OpLoopMerge %\w+ %\w+ (\w+)", asm)
    assert sorted(merges) == sorted(["None", "Unroll", "DontUnroll", "None", "None"])
    assert "OpSelectionMerge" in asm and "OpPhi" in asm
    assert "OpSLessThan" in asm


BARRIER = """
func @shift(%O: memref<f32x64x?>) attributes {subgroup_size=16, work_group_size=[16, 4]} {
  %gid = builtin.group_id : index
  %tmp = alloca : memref<f32x64,local>
  %tmp2 = alloca : memref<i16x3,local>
  parallel {
    %sg = builtin.subgroup_id : i32
    %lane = builtin.subgroup_local_id : i32
    %c16 = constant 16 : i32
    %c64 = constant 64 : i32
    %c5 = constant 5 : i32
    %base = arith.mul %sg, %c16 : i32
    %lin = arith.add %base, %lane : i32
    %v = cast %lin : f32
    %g = cast %gid : f32
    %vg = arith.add %v, %g : f32
    %li = cast %lin : index
    store %vg, %tmp[%li]
    barrier.local
    %s = arith.add %lin, %c5 : i32
    %r = arith.rem %s, %c64 : i32
    %ri = cast %r : index
    %w = load %tmp[%ri] : f32
    store %w, %O[%li, %gid]
    barrier.global
    barrier.global.local
    barrier
  }
}
"""


def test_barrier_and_alloca(device):
    out = fortran(np.zeros((64, 3), np.float32))
    program(BARRIER)["shift"](out, batch=3)
    want = (np.arange(64)[:, None] + 5) % 64 + np.arange(3)[None, :]
    np.testing.assert_array_equal(out, want.astype(np.float32))


def test_barrier_semantics():
    asm = assembly(BARRIER)
    sems = re.findall(r"OpControlBarrier %\w+ %\w+ %(\w+)", asm)
    values = {int(v.split("_")[-1]) for v in sems}
    # 0x110 local, 0x210 global, 0x310 both, 0 for a bare barrier (plus any inserted by passes)
    assert {0x110, 0x210, 0x310, 0} <= values
    assert re.search(r"OpVariable %_ptr_Workgroup_\w+ Workgroup", asm)


FOREACH = """
func @fill(%O: memref<i32x?x?x3>) attributes {subgroup_size=8, work_group_size=[8, 2]} {
  %c0 = constant 0 : index
  %c1 = constant 1 : index
  %m = size %O[0] : index
  %n = size %O[1] : index
  %p = constant 3 : index
  foreach (%i, %j, %k) = (%c1, %c0, %c0), (%m, %n, %p) {
    %a = cast %i : i32
    %b = cast %j : i32
    %c = cast %k : i32
    %h = constant 100 : i32
    %t = constant 10000 : i32
    %x = arith.mul %b, %h : i32
    %y = arith.mul %c, %t : i32
    %s = arith.add %a, %x : i32
    %r = arith.add %s, %y : i32
    store.atomic_add %r, %O[%i, %j, %k]
  }
}
"""


def test_foreach_visits_each_point_once(device):
    out = np.zeros((19, 5, 3), np.int32, order="F")
    program(FOREACH)["fill"](out, batch=1)
    i, j, k = np.meshgrid(np.arange(19), np.arange(5), np.arange(3), indexing="ij")
    want = np.where(i >= 1, i + 100 * j + 10000 * k, 0)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("source", [LOOPS, BARRIER, FOREACH])
def test_validates(source):
    assert compiled(source).spirv
