"""Kernel ABI, memref descriptors (dynamic shapes/strides, views), groups."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tinyc
from codegen_testlib import assembly, compiled, fortran, program, spmd_kernel
from tinyc.ir.types import GroupType, MemrefType

ABI = """
func @abi(%a: i8, %b: bf16, %c: f16, %d: c32, %e: c64, %f: index,
          %A: memref<f32x?x5x?,strided<1,?,?>> {alignment=64},
          %G: group<memref<i16x?x4,strided<1,?>>x?, offset: ?>,
          %H: group<memref<f64x3>x7>) {
}
"""


def test_kernel_parameters_follow_the_abi():
    asm = assembly(ABI)
    types = re.findall(r"OpFunctionParameter (%\w+)", asm)
    assert types == [
        "%uchar", "%ushort", "%half", "%v2float", "%v2double", "%ulong",
        "%_ptr_CrossWorkgroup_float", "%ulong", "%ulong", "%ulong", "%ulong",   # ?x5x? then strides ?,?
        "%_ptr_CrossWorkgroup__ptr_CrossWorkgroup_ushort",
        "%_ptr_CrossWorkgroup_ulong", "%_ptr_CrossWorkgroup_ulong",            # shape0, stride1 per member
        "%ulong", "%ulong",                                                      # group size, offset
        "%_ptr_CrossWorkgroup__ptr_CrossWorkgroup_double",
    ]
    assert re.search(r"OpDecorate %A Alignment 64", asm)
    assert "OpExecutionMode %abi LocalSize 16 1 1" in asm
    assert "OpExecutionMode %abi SubgroupSize 16" in asm


INFO = """
func @info(%s: f32, %A: memref<f32x8x?>, %B: memref<f32x8x?>, %C: memref<f32x?>,
           %G: group<memref<f32x8>x?>, %H: group<memref<f32x8>x?>, %D: memref<f32x4x4x?>) {
  %gid = builtin.group_id : index
  %g32 = cast %gid : i32
  %a = subview %A[:, %gid] : memref<f32x8>
  %b = subview %B[0:4, %gid] : memref<f32x4>
  %g = load %G[%gid] : memref<f32x8>
  %h = load %H[%gid] : memref<f32x8>
  %e = expand %D[2 -> 2x%gid] : memref<f32x4x4x2x?,strided<1,4,16,?>>
  %f = fuse %e[0, 1] : memref<f32x16x2x?,strided<1,16,?>>
  parallel {
    %lane = builtin.subgroup_local_id : i32
    %i = cast %lane : index
    %c0 = constant 0 : index
    %x = load %a[%i] : f32
    store %x, %b[%i]
    store.atomic_add %x, %h[%i]
    %gi = cast %g32 : index
    store %x, %C[%gi]
    store %x, %f[%i, %c0, %c0]
  }
}
"""


def test_param_infos():
    info = compiled(INFO).kernels["info"]
    by_name = {p.name: p for p in info.params}
    assert [p.name for p in info.params] == ["s", "A", "B", "C", "G", "H", "D"]
    assert isinstance(by_name["A"].type, MemrefType) and isinstance(by_name["G"].type, GroupType)
    assert {n: p.written for n, p in by_name.items()} == {
        "s": False, "A": False, "B": True, "C": True, "G": False, "H": True, "D": True}
    assert {n: p.batch_mode for n, p in by_name.items()} == {
        "s": None, "A": 1, "B": 1, "C": 0, "G": 0, "H": 0, "D": None}
    assert info.work_group_size == (16, 1) and info.subgroup_size == 16


VIEWS = spmd_kernel("views", ", ".join([
    "%A: memref<f32x?x?,strided<1,?>>", "%off: index", "%sz: index", "%q: index",
    "%E: memref<f32x?x?>", "%F: memref<f32x4x?x?>", "%Z: memref<f32>",
    "%T: memref<f32x4x8,strided<2,16>>", "%O: memref<f32x?x6x?>"]), """
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %c3 = constant 3 : index
    %c4 = constant 4 : index
    %c5 = constant 5 : index
    %neg = constant -1.0 : f32
    %x0 = load %A[%l, %gid] : f32
    store %x0, %O[%l, %c0, %gid]
    ; dynamic offset and size; the mode size is read back with `size`
    %s = subview %A[%off:%sz, %gid] : memref<f32x?>
    %n = size %s[0] : index
    %in = cmp.lt %l, %n : bool
    %x1 = if %in -> (f32) {
        %v = load %s[%l] : f32
        yield (%v)
    } else {
        yield (%neg)
    }
    store %x1, %O[%l, %c1, %gid]
    ; bare `:` keeps the whole mode
    %w = subview %A[:, %gid] : memref<f32x?>
    %x2 = load %w[%l] : f32
    store %x2, %O[%l, %c2, %gid]
    ; expand mode 0 (4*q rows) into 4 x q
    %ex = expand %E[0 -> 4 x %q] : memref<f32x4x?x?>
    %r = arith.rem %l, %c4 : index
    %d = arith.div %l, %c4 : index
    %x3 = load %ex[%r, %d, %gid] : f32
    store %x3, %O[%l, %c3, %gid]
    ; fuse the first two modes of a 4 x ? x ? tensor
    %fu = fuse %F[0, 1] : memref<f32x?x?>
    %x4 = load %fu[%l, %gid] : f32
    store %x4, %O[%l, %c4, %gid]
    ; order-0 memref and a static non-canonical layout
    %z = load %Z[] : f32
    %tr = arith.rem %l, %c4 : index
    %tc = arith.div %l, %c4 : index
    %t = load %T[%tr, %tc] : f32
    %zt = arith.add %z, %t : f32
    store %zt, %O[%l, %c5, %gid]
""")


def test_views_with_dynamic_shapes_and_strides(device):
    rng = np.random.default_rng(1)
    batch, rows = 3, 16
    big = fortran(rng.random((rows, 2 * batch + 1)).astype(np.float32))
    A = big[:, ::2]  # column stride 2*rows: a dynamic stride
    off, sz, q = 3, 5, 4
    E = fortran(rng.random((4 * q, batch)).astype(np.float32))
    F = np.asfortranarray(rng.random((4, 4, batch)).astype(np.float32))
    Z = np.array(0.5, np.float32)
    Tbuf = rng.random(16 * 8).astype(np.float32)
    T = np.lib.stride_tricks.as_strided(Tbuf, (4, 8), (8, 64))
    O = np.zeros((rows, 6, batch), np.float32, order="F")
    program(VIEWS)["views"](A, np.int64(off), np.int64(sz), np.int64(q), E, F, Z, T, O, batch=batch)
    i = np.arange(rows)
    np.testing.assert_array_equal(O[:, 0], A[:, :batch])
    sub = np.where((i < sz)[:, None], A[np.minimum(i + off, rows - 1), :batch], -1)
    np.testing.assert_array_equal(O[:, 1], sub)
    np.testing.assert_array_equal(O[:, 2], A[:, :batch])
    np.testing.assert_array_equal(O[:, 3], E.reshape(4, q, batch, order="F")[i % 4, i // 4])
    np.testing.assert_array_equal(O[:, 4], F.reshape(16, batch, order="F"))
    np.testing.assert_array_equal(O[:, 5], np.repeat(0.5 + T[i % 4, i // 4][:, None], batch, 1))


GROUPS = spmd_kernel("groups", ", ".join([
    "%G: group<memref<f32x?>x?>", "%S: group<memref<i32x8>x4, offset: 2>",
    "%D: group<memref<f64x4x?,strided<1,?>>x?, offset: ?>", "%O: memref<f64x16x4x?>"]), """
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %c3 = constant 3 : index
    %c4 = constant 4 : index
    %c8 = constant 8 : index
    %zero = constant 0.0 : f64
    %g = load %G[%gid] : memref<f32x?>
    %n = size %g[0] : index
    %in = cmp.lt %l, %n : bool
    %x = if %in -> (f64) {
        %v = load %g[%l] : f32
        %w = cast %v : f64
        yield (%w)
    } else {
        yield (%zero)
    }
    store %x, %O[%l, %c0, %gid]
    %ng = size %G[0] : index
    %ngf = cast %ng : f64
    store %ngf, %O[%l, %c1, %gid]
    %s = load %S[%gid] : memref<i32x8>
    %j = arith.rem %l, %c8 : index
    %y = load %s[%j] : i32
    %yf = cast %y : f64
    store %yf, %O[%l, %c2, %gid]
    %d = load %D[%gid] : memref<f64x4x?,strided<1,?>>
    %r = arith.rem %l, %c4 : index
    %q = arith.div %l, %c4 : index
    %m = size %d[1] : index
    %ok = cmp.lt %q, %m : bool
    %z = if %ok -> (f64) {
        %v = load %d[%r, %q] : f64
        yield (%v)
    } else {
        yield (%zero)
    }
    store %z, %O[%l, %c3, %gid]
""")


def test_groups_with_and_without_offset(device):
    rng = np.random.default_rng(2)
    batch = 4
    G = [rng.random(n).astype(np.float32) for n in (16, 3, 9, 0)]
    G[3] = np.zeros(1, np.float32)[:0]
    S = [np.arange(10, dtype=np.int32) + 100 * k for k in range(4)]
    off = 3
    widths = [4, 2, 1, 3]
    D = [rng.random(off + 5 * w).astype(np.float64) for w in widths]  # column stride 5
    O = np.zeros((16, 4, batch), np.float64, order="F")
    program(GROUPS)["groups"](G, S, tinyc.Group(D, offset=off, shape=[(4, w) for w in widths], stride=[(1, 5)] * 4), O, batch=batch)
    i = np.arange(16)
    for g in range(batch):
        want = np.zeros(16)
        want[: len(G[g])] = G[g]
        np.testing.assert_array_equal(O[:, 0, g], want)
        np.testing.assert_array_equal(O[:, 1, g], 4)
        np.testing.assert_array_equal(O[:, 2, g], S[g][2 + i % 8])
        dm = np.zeros(16)
        dm[: 4 * widths[g]] = D[g][off:].reshape(-1, 5)[: widths[g], :4].ravel()
        np.testing.assert_array_equal(O[:, 3, g], dm)


@pytest.mark.parametrize("source", [ABI, INFO, VIEWS, GROUPS])
def test_validates(source):
    assert compiled(source).spirv


SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.ir"))


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_samples_compile_and_validate(path):
    result = compiled(path.read_text())
    assert result.spirv[:4] == b"\x03\x02\x23\x07" and result.kernels
