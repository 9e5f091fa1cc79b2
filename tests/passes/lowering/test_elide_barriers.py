"""elide-barriers: local barriers go when each work-item only touches its own local data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from lowering_testlib import fortran, instructions, lower, same_results

from tinyc.ir.instructions import Barrier
from tinyc.ir.types import index
from tinyc.parser import parse
from tinyc.passes.lowering.private_memory import residue

ROOT = Path(__file__).resolve().parents[3]

CHAIN = """
func @chain(%alpha: f32, %A: memref<f32x{m}x8>, %B: memref<f32x8x8>, %C: memref<f32x8x{n}>,
            %D: memref<f32x{m}x{n}>){attrs} {{
  %tmp = alloca : memref<f32x{m}x8,local>
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  gemm.n.t %one, %A, %B, %zero, %tmp
  {second}
}}
"""


def chain(m: int = 16, n: int = 16, attrs: str = "",
          second: str = "gemm.n.n %alpha, %tmp, %C, %one, %D") -> str:
    return CHAIN.format(m=m, n=n, attrs=f" attributes {attrs}" if attrs else "", second=second)


def barriers(text: str) -> list[Barrier]:
    return instructions(lower(text), Barrier)


def test_fused_kernel_sample_has_no_barrier() -> None:
    """Lane l stores rows l + 16b of A·Bᵀ and reads the same rows back as matrix_a."""
    assert not barriers((ROOT / "samples" / "fused_kernel.ir").read_text())


@pytest.mark.parametrize("m", [16, 13, 48])
def test_row_tiles_of_one_subgroup_are_private(m: int) -> None:
    assert not barriers(chain(m=m, n=40))


@pytest.mark.parametrize("text, why", [
    (chain(attrs="{work_group_size=[32, 1]}"), "two subgroups split the rows"),
    (chain(attrs="{work_group_size=[16, 2]}"), "two subgroups along y"),
    (chain(second="gemm.n.n %alpha, %C, %tmp, %one, %D", m=8, n=8),
     "the temporary is read as matrix_b: every lane reads every row"),
    (chain(second="gemm.t.n %alpha, %tmp, %B, %one, %D", m=8, n=8),
     "the temporary is read transposed: lanes read columns"),
    (chain(second="axpby.n %alpha, %tmp, %one, %A"), "a foreach reads element-wise"),
])
def test_shared_local_data_keeps_the_barrier(text: str, why: str) -> None:
    assert [b.local_fence for b in barriers(text)] == [True], why


def test_global_barriers_stay() -> None:
    text = """
func @k(%A: memref<f32x16x16>, %B: memref<f32x16x16>, %C: memref<f32x16x16>) {
  %one = constant 1.0 : f32
  gemm.n.n %one, %A, %B, %one, %C
  gemm.n.n %one, %C, %B, %one, %A
}
"""
    assert [(b.global_fence, b.local_fence) for b in barriers(text)] == [(True, False)]


def test_residues_of_tile_positions() -> None:
    program = parse("""
func @k(%n: index) {
  %c0 = constant 0 : index
  %c3 = constant 3 : index
  %c16 = constant 16 : index
  %c32 = constant 32 : index
  for %t = %c3, %n, %c32 {
    %a = arith.mul %n, %c16 : index
    %b = arith.add %a, %t : index
    %c = arith.sub %b, %c3 : index
    %d = arith.div %a, %c16 : index
  }
  for %u = %c0, %n {
    %e = arith.mul %u, %c3 : index
  }
}
""", "residue.ir")
    values = {v.name: v for inst in program.functions[0].walk() for v in
              [*inst.results, *(a for r in inst.regions for a in r.args)]}
    assert values["t"].type is index
    want = {"a": 0, "b": 3, "c": 0, "d": None, "t": 3, "u": None, "e": None}
    assert {name: residue(values[name], 16) for name in want} == want


@pytest.mark.parametrize("m, n", [(16, 16), (13, 40), (48, 8)])
def test_chain_without_barrier_matches_reference(m: int, n: int) -> None:
    rng = np.random.default_rng(m * n)
    same_results(chain(m=m, n=n), [np.float32(0.5), fortran(rng, (m, 8)), fortran(rng, (8, 8)),
                                   fortran(rng, (8, n)), fortran(rng, (m, n))],
                 batch=2, outputs=[4], rtol=1e-4)
