"""store.atomic and store.atomic_add under contention from many work-groups."""

from __future__ import annotations

import numpy as np
import pytest

from codegen_testlib import (
    COMPLEX_TYPES, NUMPY, assembly, bf16_to_f32, f32_to_bf16, fortran, op_count, program, spmd_kernel,
)
from tolerances import assert_within, sum_error_bound

TYPES = ["i8", "i16", "i32", "i64", "index", "bf16", "f16", "f32", "f64", "c32", "c64"]
BATCH = 200  # every one of the 16 target elements gets 200 adds


def atomic_kernel(t: str) -> str:
    return spmd_kernel(f"atomic_{t}", f"%V: memref<{t}x?>, %O: memref<{t}x16>, %S: memref<{t}x?>, "
                       f"%Q: memref<{t}x1>", f"""
        %v = load %V[%i] : {t}
        store.atomic_add %v, %O[%l]
        store.atomic %v, %S[%i]
        %c0 = constant 0 : index
        store.atomic %v, %Q[%c0]
    """)


SOURCE = "\n".join(atomic_kernel(t) for t in TYPES)


def values(t: str, rng: np.random.Generator) -> np.ndarray:
    n = 16 * BATCH
    if t in ("bf16", "f16"):  # small integers: every partial sum is exact
        v = rng.integers(-1, 2, n).astype(np.float32)
        return f32_to_bf16(v) if t == "bf16" else v.astype(np.float16)
    if t in COMPLEX_TYPES:
        return (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(NUMPY[t])
    if t in ("f32", "f64"):
        return rng.uniform(-1, 1, n).astype(NUMPY[t])
    return rng.integers(-100, 100, n).astype(NUMPY[t])


@pytest.mark.parametrize("t", TYPES)
def test_atomics_under_contention(device, t):
    rng = np.random.default_rng(abs(hash(t)) % 1000)
    V = values(t, rng)
    O = np.zeros(16, NUMPY[t])
    S = np.zeros_like(V)
    Q = np.zeros(1, NUMPY[t])
    program(SOURCE)[f"atomic_{t}"](V, O, S, Q, batch=BATCH)
    per_lane = V.reshape(BATCH, 16)
    if t in ("bf16", "f16"):
        got = bf16_to_f32(O) if t == "bf16" else O.astype(np.float32)
        want = (bf16_to_f32(per_lane) if t == "bf16" else per_lane.astype(np.float32)).sum(0)
        np.testing.assert_array_equal(got, want)
    elif t in ("f32", "f64", "c32", "c64"):
        want = per_lane.astype(np.complex128 if t in COMPLEX_TYPES else np.float64).sum(0)
        magnitude = np.abs(per_lane.real).sum(0) + np.abs(per_lane.imag).sum(0)  # per part, at most
        assert_within(O, want, sum_error_bound(BATCH, t, magnitude), f"{BATCH} atomic adds in any order")
    else:
        bits = np.iinfo(NUMPY[t]).bits
        want = [(int(s) + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1) for s in per_lane.astype(object).sum(0)]
        np.testing.assert_array_equal(O, np.array(want, NUMPY[t]))
    np.testing.assert_array_equal(S, V)  # atomic stores do not clobber neighbours
    if t in COMPLEX_TYPES:   # racing stores: the spec lets the parts come from different ones
        assert Q[0].real in V.real and Q[0].imag in V.imag
    else:
        assert Q[0] in V


def test_native_atomics_where_available():
    asm = assembly(SOURCE)
    assert op_count(asm, "OpAtomicFAddEXT") >= 2 + 4  # f32, f64 and both parts of c32, c64
    assert op_count(asm, "OpAtomicIAdd") == 3             # i32, i64, index
    assert op_count(asm, "OpAtomicCompareExchange") == 12  # i8, i16, bf16, f16: add and 2 stores
    assert 'OpExtension "SPV_EXT_shader_atomic_float_add"' in asm


LOCAL = """
func @local_atomics(%O: memref<i16x4x?>, %F: memref<f32x4x?>) attributes {subgroup_size=16, work_group_size=[16, 4]} {
  %gid = builtin.group_id : index
  %t = alloca : memref<i16x4,local>
  %f = alloca : memref<f32x4,local>
  parallel {
    %sg = builtin.subgroup_id : i32
    %lane = builtin.subgroup_local_id : i32
    %c4 = constant 4 : i32
    %r = arith.rem %lane, %c4 : i32
    %ri = cast %r : index
    %z = constant 0 : i32
    %first = cmp.eq %sg, %z : bool
    %lt4 = cmp.lt %lane, %c4 : bool
    %init = arith.and %first, %lt4 : bool
    if %init {
      %zs = constant 0 : i16
      %zf = constant 0.0 : f32
      store %zs, %t[%ri]
      store %zf, %f[%ri]
    }
    barrier.local
    %one = constant 1 : i16
    %half = constant 0.5 : f32
    store.atomic_add %one, %t[%ri]
    store.atomic_add %half, %f[%ri]
    barrier.local
    if %init {
      %v = load %t[%ri] : i16
      %w = load %f[%ri] : f32
      store %v, %O[%ri, %gid]
      store %w, %F[%ri, %gid]
    }
  }
}
"""


def test_local_memory_atomics(device):
    O = fortran(np.zeros((4, 5), np.int16))
    F = fortran(np.zeros((4, 5), np.float32))
    program(LOCAL)["local_atomics"](O, F, batch=5)
    np.testing.assert_array_equal(O, 16)
    np.testing.assert_array_equal(F, 8.0)
