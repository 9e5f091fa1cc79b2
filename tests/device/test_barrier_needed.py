"""A chain of gemms through local memory needs the barrier the compiler inserts.

With four subgroups per work-group, each subgroup writes some rows of the
local temporary and the second gemm reads rows written by the others. The
CPU runtime runs the subgroups of a work-group one after the other between
barriers, so without `barrier.local` the second gemm reads unwritten memory:
the control run without the barrier pass must fail, which shows that the
test can see a missing barrier.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc import passes
from tinyc.compiler import Program, compile_to_spirv

SOURCE = """
func @chain(%A: memref<f32x64x32x?>, %B: memref<f32x32x32>, %C: memref<f32x32x32>,
            %D: memref<f32x64x32x?>) attributes {subgroup_size=16, work_group_size=[64, 1]} {
  %g = builtin.group_id : index
  %a = subview %A[:, :, %g] : memref<f32x64x32>
  %d = subview %D[:, :, %g] : memref<f32x64x32>
  %tmp = alloca : memref<f32x64x32,local>
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  gemm.n.n %one, %a, %B, %zero, %tmp
  gemm.n.n %one, %tmp, %C, %zero, %d
}
"""


def _run(program: Program, batch: int = 8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    A = np.asfortranarray(rng.uniform(-1, 1, (64, 32, batch)).astype(np.float32))
    B = np.asfortranarray(rng.uniform(-1, 1, (32, 32)).astype(np.float32))
    C = np.asfortranarray(rng.uniform(-1, 1, (32, 32)).astype(np.float32))
    D = np.full((64, 32, batch), np.nan, dtype=np.float32, order="F")
    program["chain"](A, B, C, D, batch=batch)
    expected = np.einsum("ikb,kj,jl->ilb", A.astype(np.float64), B, C)
    return D, expected


def test_barrier_between_gemms_through_local_memory(device):
    program = tinyc.compile(SOURCE, device=device)
    assert "barrier.local" in program.ir("lowered")
    got, expected = _run(program)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_without_the_barrier_pass_the_chain_is_wrong(device, monkeypatch):
    pipeline = [(name, run) for name, run in passes.PIPELINE if name != "insert-barriers"]
    monkeypatch.setattr(passes, "PIPELINE", pipeline)
    result = compile_to_spirv(SOURCE)
    assert "barrier" not in result.stages["lowered"]
    got, expected = _run(Program(result, device))
    assert not np.allclose(got, expected, rtol=1e-4, atol=1e-4, equal_nan=False), (
        "the chain came out right without a barrier: this test cannot detect a missing one")
