"""A lane id kept across a barrier: the CPU runtime let every lane store.

Found by launching printed einsum programs: `ikb,bk,mji->j` (A 5x3x2000,
B 2000x3, C 3x5x5) crashed `tinyc run` with a corrupt heap. Its kernel writes
two local temporaries (a sum, a 2000-long gemv), then after a barrier a gemv of
5 rows on 8 lanes stores `out` under `lane < 5`. The SPIR-V was right, but with
the lane id loaded once at the kernel's entry and used after the barrier the
runtime's compiler ran that store on all 8 lanes: 3 floats past the end of a
5-element output. Codegen now loads the work-items' builtins again after a
barrier (context.py, `Ctx.builtin`; docs/decisions.md, "Builtins and barriers").

Each launch here puts its arrays inside larger buffers filled with a canary, so a
write past an end is seen at once instead of as a crash later; the results are
compared with NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.compiler import Program, compile_to_spirv
from tinyc.spirv.codegen import context
from tinyc.spirv.tools import disassemble

from barrier_scan import values_across_barriers

CANARY = 7.0
PAD = 256

SOURCE = """
func @after_barrier(%A: memref<f32x200x5>, %x: memref<f32x200>, %T: memref<f32x25>,
                    %out: memref<f32x5>) {
  %t0 = alloca : memref<f32x5x5,local>
  %t1 = alloca : memref<f32x5,local>
  %flat = fuse %t0[0, 1] : memref<f32x25,local>
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  axpby.n %one, %T, %zero, %flat
  gemv.t %one, %A, %x, %zero, %t1
  barrier.local
  gemv.t %one, %t0, %t1, %zero, %out
}
"""


def guarded(shape: tuple[int, ...], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A Fortran-order float32 array of random values inside a buffer of canaries."""
    n = int(np.prod(shape))
    buffer = np.full(n + 2 * PAD, CANARY, np.float32)
    buffer[PAD:PAD + n] = rng.uniform(-1, 1, n)
    return np.ndarray(shape, np.float32, buffer[PAD:], order="F"), buffer


def untouched(buffer: np.ndarray, n: int) -> bool:
    return bool((buffer[:PAD] == CANARY).all() and (buffer[PAD + n:] == CANARY).all())


def run(program: Program) -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, int]]]:
    rng = np.random.default_rng(5)
    arrays, buffers = [], []
    for shape in ((200, 5), (200,), (25,), (5,)):
        array, buffer = guarded(shape, rng)
        arrays.append(array)
        buffers.append((buffer, array.size))
    A, x, T, out = arrays
    want = T.reshape(5, 5, order="F").T @ (A.T.astype(np.float64) @ x)
    for _ in range(3):
        program["after_barrier"](A, x, T, out, batch=1)
    return out, want, buffers


def test_a_guarded_store_after_a_barrier_stays_in_bounds(device):
    out, want, buffers = run(Program(compile_to_spirv(SOURCE, "<after-barrier>"), device))
    assert all(untouched(buffer, n) for buffer, n in buffers)
    assert np.allclose(out, want, rtol=1e-4, atol=1e-4)


def test_the_einsum_random_testing_found(device):
    rng = np.random.default_rng(6)
    A = rng.standard_normal((5, 3, 2000)).astype(np.float32)
    B = rng.standard_normal((2000, 3)).astype(np.float32)
    C = rng.standard_normal((3, 5, 5)).astype(np.float32)
    buffer = np.full(5 + 2 * PAD, CANARY, np.float32)
    out = buffer[PAD:PAD + 5]
    for _ in range(3):
        tinyc.einsum("ikb,bk,mji->j", A, B, C, out=out)
    assert untouched(buffer, 5)
    want = np.einsum("ikb,bk,mji->j", A.astype(np.float64), B, C)
    assert np.allclose(out, want, rtol=1e-4, atol=1e-3 * np.abs(want).max())


def test_the_old_builtin_placement_writes_past_the_end_or_is_right(device, monkeypatch):
    """Control: with the lane id loaded once at the entry, the runtime measured here (Intel
    Xeon, intel-opencl-rt 2026.22) ran the guarded store on every lane, and the canaries saw
    it; that is what the tests above would catch. The miscompile is the runtime's, so a CPU
    or runtime without it must give NumPy's values instead: either way nothing passes
    silently wrong."""
    monkeypatch.setattr(context, "VARYING_BUILTINS", frozenset())
    out, want, buffers = run(Program(compile_to_spirv(SOURCE, "<old-builtins>"), device))
    if untouched(*buffers[-1]):
        assert np.allclose(out, want, rtol=1e-4, atol=1e-4)


def builtins_across_barriers(asm: str) -> list[str]:
    """Ids of work-item builtins (and their conversions) defined before an OpControlBarrier
    and used after it."""
    derived = {"%SubgroupLocalInvocationId", "%LocalInvocationId", "%GlobalInvocationId", "%SubgroupId"}

    def watched(result: str, opcode: str, _type: str, operand: str) -> bool:
        if opcode in ("Load", "UConvert", "SConvert", "CompositeExtract") and operand in derived:
            derived.add(result)
            return True
        return False

    return values_across_barriers(asm, watched)


def test_no_work_item_builtin_is_live_across_a_barrier(monkeypatch):
    asm = disassemble(compile_to_spirv(SOURCE).spirv)
    assert "OpControlBarrier" in asm and "SubgroupLocalInvocationId" in asm
    assert builtins_across_barriers(asm) == []
    monkeypatch.setattr(context, "VARYING_BUILTINS", frozenset())   # the checker sees the old pattern
    assert builtins_across_barriers(disassemble(compile_to_spirv(SOURCE).spirv))


TWO_BARRIERS = """
func @two_barriers(%x: memref<f32x16>, %out: memref<f32x16>) attributes {subgroup_size=16, work_group_size=[16, 1]} {
  %t = alloca : memref<f32x16,local>
  parallel {
    barrier.local
    %a = builtin.subgroup_local_id : i32
    %i = cast %a : index
    %v = load %x[%i] : f32
    store %v, %t[%i]
    barrier.local
    %b = builtin.subgroup_local_id : i32
    %j = cast %b : index
    %w = load %t[%j] : f32
    store %w, %out[%j]
  }
}
"""
"""Both barriers in one block: the lane id loaded after the first must be loaded again after
the second (a cache of per-block loads that outlived a barrier kept it live across)."""


def test_a_second_barrier_in_the_same_block_loads_the_lane_id_again():
    asm = disassemble(compile_to_spirv(TWO_BARRIERS).spirv)
    assert asm.count("OpControlBarrier") == 2
    assert builtins_across_barriers(asm) == []


def test_two_barriers_in_one_block_give_numpys_values(device):
    rng = np.random.default_rng(7)
    x, _ = guarded((16,), rng)
    out, buffer = guarded((16,), rng)
    program = Program(compile_to_spirv(TWO_BARRIERS, "<two-barriers>"), device)
    for _ in range(3):
        program["two_barriers"](x, out, batch=1)
    assert untouched(buffer, 16)
    assert np.array_equal(out, x)
