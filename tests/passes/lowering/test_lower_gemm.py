"""lower-collectives on gemm, gemv and ger: tiled coopmatrix code.

Structure checks on the lowered IR, plus runs of the lowered kernel on the
reference interpreter against the unlowered one (which computes the
collective with NumPy).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lowering_testlib import fortran, instructions, lower, lowered_text, same_results

from tinyc.ir.core import Instruction
from tinyc.ir.instructions import (
    Alloca,
    Barrier,
    CheckedFlag,
    CoopMatrixLoad,
    CoopMatrixMulAdd,
    CoopMatrixScale,
    CoopMatrixStore,
    For,
    If,
    LifetimeStop,
    Parallel,
    StoreFlag,
    Subview,
)
from tinyc.ir.types import DYNAMIC, MatrixUse, c64, coopmatrix_type, f16, f32, f64, memref_type
from tinyc.passes.lowering.session import constant_value
from tinyc.passes.lowering.tiling import GemmTiles
from tinyc.schedule.defaults import MatmulShape, matmul_defaults
from tinyc.target.device_info import CPU_DEVICE

ROOT = Path(__file__).resolve().parents[3]


def instructions_in(inst: Instruction, cls: type) -> list[Instruction]:
    return [i for region in inst.regions for i in region.walk() if isinstance(i, cls)]


def gemm_kernel(ta: str, tb: str, a: str, b: str, c: str, alpha: str = "%alpha",
                beta: str = "%beta", types: tuple[str, str, str, str] = ("f32",) * 4,
                atomic: bool = False, attrs: str = "", schedule: str = "") -> str:
    """A kernel with one gemm; alpha/beta are arguments or `constant` literals."""
    at, bt = types[:2]
    lines = []
    if not alpha.startswith("%"):
        lines.append(f"%ca = constant {alpha} : {at}")
        alpha = "%ca"
    if not beta.startswith("%"):
        lines.append(f"%cb = constant {beta} : {bt}")
        beta = "%cb"
    attributes = f" attributes {attrs}" if attrs else ""
    body = "\n  ".join(lines)
    return f"""
func @k(%alpha: {at}, %beta: {bt}, %A: {a}, %B: {b}, %C: {c}){attributes} {{
  {body}
  gemm.{ta}.{tb}{'.atomic' if atomic else ''} {alpha}, %A, %B, {beta}, %C{' attributes ' + schedule if schedule else ''}
}}
"""


def test_fused_kernel_is_straight_line_coopmatrix_code() -> None:
    text = (ROOT / "samples" / "fused_kernel.ir").read_text()
    program = lower(text)
    parallels = instructions(program, Parallel)
    assert len(parallels) == 2
    (loop,) = instructions(program, For)  # tmp0 C: two 16x8 tiles of D; tmp0 is one tile
    assert loop.parent is parallels[1].body
    loads = instructions(program, CoopMatrixLoad)
    assert [ld.checked for ld in loads] == [CheckedFlag.NONE] * len(loads)
    uses = [ld.result.type.use for ld in loads]
    assert uses == [MatrixUse.A, MatrixUse.B, MatrixUse.A, MatrixUse.B, MatrixUse.ACC]
    # gemm.n.t: the B tile is read transposed; beta = 0 never loads tmp0
    assert loads[1].transpose and not loads[0].transpose
    assert len(instructions(program, CoopMatrixMulAdd)) == 2
    scale = instructions(program, CoopMatrixScale)
    assert [s.operands[0].name for s in scale] == ["alpha"]
    # the accumulator tiles come from D's subview, 16x8 at a time, at row 0
    d = program.functions[0].args[4]
    acc = loads[4]
    view = acc.operands[0].owner
    assert isinstance(view, Subview) and view.tensor is d
    assert acc.result.type == coopmatrix_type(f32, 16, 8, MatrixUse.ACC) and not acc.transpose
    assert constant_value(acc.operands[1]) == 0


def test_beta_zero_never_reads_c() -> None:
    program = lower(gemm_kernel("n", "n", "memref<f32x32x8>", "memref<f32x8x24>",
                                "memref<f32x32x24>", beta="0.0"))
    c = program.functions[0].args[4]
    assert not [ld for ld in instructions(program, CoopMatrixLoad) if ld.operands[0] is c]


def test_runtime_beta_branches_on_zero() -> None:
    text = lowered_text(gemm_kernel("n", "n", "memref<f32x16x8>", "memref<f32x8x16>",
                                    "memref<f32x16x16>"))
    assert "%beta_is_zero = cmp.eq %beta" in text
    assert re.search(r"if %beta_is_zero \{\n\s*cooperative_matrix_store", text)


def test_alpha_beta_one_accumulates_into_loaded_c() -> None:
    program = lower(gemm_kernel("n", "n", "memref<f32x16x8>", "memref<f32x8x16>",
                                "memref<f32x16x16>", alpha="1.0", beta="1.0"))
    loads = instructions(program, CoopMatrixLoad)
    assert loads[0].result.type.use is MatrixUse.ACC, "C is the initial accumulator"
    assert "cooperative_matrix_scale" not in lowered_text(
        gemm_kernel("n", "n", "memref<f32x16x8>", "memref<f32x8x16>", "memref<f32x16x16>",
                    alpha="1.0", beta="1.0"))


@pytest.mark.parametrize("beta, flag", [("0.0", StoreFlag.ATOMIC), ("1.0", StoreFlag.ATOMIC_ADD)])
def test_atomic_stores(beta: str, flag: StoreFlag) -> None:
    program = lower(gemm_kernel("n", "n", "memref<f32x16x8>", "memref<f32x8x16>",
                                "memref<f32x16x16>", beta=beta, atomic=True))
    stores = instructions(program, CoopMatrixStore)
    assert stores and all(s.flag is flag for s in stores)
    assert all(ld.result.type.use is not MatrixUse.ACC for ld in instructions(program, CoopMatrixLoad))


def test_odd_static_sizes_fit_one_tile_without_checks() -> None:
    """13x7x19: the tile is 13x7 (padding rows are the codegen's), K runs in steps of 2
    (7 columns of broadcasts per k: defaults.K_STEP_BROADCASTS) and a static step of 1."""
    program = lower(gemm_kernel("n", "n", "memref<f32x13x19>", "memref<f32x19x7>",
                                "memref<f32x13x7>"))
    loads = instructions(program, CoopMatrixLoad)
    assert all(ld.checked is CheckedFlag.NONE for ld in loads)
    ks = sorted({ld.result.type.cols for ld in loads if ld.result.type.use is MatrixUse.A})
    assert ks == [1, 2]
    acc = instructions(program, CoopMatrixMulAdd)[0].result.type
    assert (acc.rows, acc.cols) == (13, 7)


def test_dynamic_sizes_use_size_and_checked_edge_tiles() -> None:
    text = lowered_text(gemm_kernel("t", "t", "memref<f32x?x?>", "memref<f32x?x?>",
                                    "memref<f32x?x?>", schedule='{"swap"=false}'))
    assert "size %C[0]" in text and "size %C[1]" in text and "size %A[0]" in text
    assert "%full_tile = arith.and" in text
    assert "cooperative_matrix_load.t.rows_checked %A" in text
    assert "cooperative_matrix_load.t.cols_checked %B" in text
    assert "cooperative_matrix_store.both_checked" in text
    assert "%k_main" in text, "the K remainder loop starts at the last full step"


def test_gemm_t_t_computes_the_transpose_and_stores_it_transposed() -> None:
    """C = Aᵀ Bᵀ = (B A)ᵀ: B is the product's first operand, read `.n`; no staging."""
    program = lower(gemm_kernel("t", "t", "memref<f32x24x40>", "memref<f32x32x24>",
                                "memref<f32x40x32>"))
    assert not instructions(program, Alloca)
    A, B, C = program.functions[0].args[2:5]
    loads = instructions(program, CoopMatrixLoad)
    firsts = [ld for ld in loads if ld.result.type.use is MatrixUse.A]
    seconds = [ld for ld in loads if ld.result.type.use is MatrixUse.B]
    assert all(ld.operands[0] is B and not ld.transpose for ld in firsts)
    assert all(ld.operands[0] is A and not ld.transpose for ld in seconds)
    stores = instructions(program, CoopMatrixStore)
    assert stores and all(st.transpose and st.operands[1] is C for st in stores)
    acc = instructions(program, CoopMatrixMulAdd)[0].result.type
    assert acc.rows % 16 == 0 or acc.rows == 32, "rows of the product are C's columns"


def test_multiple_subgroups_share_tiles_round_robin() -> None:
    text = lowered_text(gemm_kernel("n", "n", "memref<f32x64x64>", "memref<f32x64x64>",
                                    "memref<f32x64x64>", attrs="{work_group_size=[32, 2]}"))
    assert "builtin.subgroup_id : i32" in text
    assert re.search(r"for %tile = %\w+, %c16, %c4 \{", text), text  # 16 tiles of 64x4


def test_mixed_precision_keeps_input_types_in_tiles() -> None:
    program = lower(gemm_kernel("n", "n", "memref<f16x16x16>", "memref<f16x16x16>",
                                "memref<f32x16x16>", types=("f16", "f32", "f16", "f32")))
    mul_add = instructions(program, CoopMatrixMulAdd)[0]
    a, b, c = (v.type for v in mul_add.operands)
    assert (a.component, b.component, c.component) == (f16, f16, f32)


def test_gemm_in_for_and_if_is_lowered_in_place() -> None:
    text = """
func @k(%A: memref<f32x16x16>, %B: memref<f32x16x16>, %C: memref<f32x16x16>, %flag: i32) {
  %one = constant 1.0 : f32
  %c0 = constant 0 : index
  %c4 = constant 4 : index
  %z = constant 0 : i32
  for %i = %c0, %c4 {
    %p = cmp.eq %flag, %z : bool
    if %p {
      gemm.n.n %one, %A, %B, %one, %C
    }
  }
}
"""
    program = lower(text)
    (parallel,) = instructions(program, Parallel)
    branch = parallel.parent.parent
    assert isinstance(branch, If) and parallel.parent is branch.then
    assert isinstance(branch.parent.parent, For)


def test_gemv_and_ger_view_vectors_as_columns() -> None:
    gemv = lowered_text("""
func @k(%A: memref<f32x13x19>, %x: memref<f32x19>, %y: memref<f32x13>) {
  %one = constant 1.0 : f32
  gemv.n %one, %A, %x, %one, %y
}
""")
    assert "expand %x[0 -> 19 x 1] : memref<f32x19x1>" in gemv
    assert "coopmatrix<f32x13x1,matrix_acc>" in gemv
    ger = lowered_text("""
func @k(%a: memref<f32x?>, %b: memref<f32x?>, %C: memref<f32x?x?>) {
  %one = constant 1.0 : f32
  ger %one, %a, %b, %one, %C
}
""")
    assert re.search(r"expand %a\[0 -> %\w+ x 1\] : memref<f32x\?x1>", ger)
    assert "cooperative_matrix_load.t.cols_checked %b_col" in ger


@pytest.mark.parametrize("M, N, K, t, ta, want", [
    (16, 8, 8, f32, False, GemmTiles(16, 8, 8)),
    (13, 7, 19, f32, False, GemmTiles(13, 7, 2)),
    (64, 64, 64, f32, False, GemmTiles(64, 4, 4)),
    (64, 64, 64, f32, True, GemmTiles(16, 16, 8)),
    (None, None, None, f32, False, GemmTiles(32, 8, 2)),
    (64, 64, 64, f64, False, GemmTiles(64, 2, 4)),
    (64, 64, 64, c64, False, GemmTiles(32, 2, 2)),
    (48, 48, 48, f32, False, GemmTiles(48, 4, 4)),
    (192, 9, 4, f32, False, GemmTiles(96, 2, 4)),
])
def test_tile_choice(M, N, K, t, ta, want) -> None:
    """Default knobs on the AVX-512 CPU device, unstaged, as M_t × N_t × K_t."""
    a = memref_type(t, (DYNAMIC if K is None else K, DYNAMIC if M is None else M))
    knobs = matmul_defaults(MatmulShape(M, N, K, t, t, ta, a), 16, CPU_DEVICE, 0, stage=False)
    blocks, n = knobs["tile"]
    assert GemmTiles(blocks * 16 if M is None else min(blocks * 16, M), n, knobs["k_unroll"]) == want


# ------------------------------------------------------------------ semantics on the reference

def _gemm_source(ta: bool, tb: bool, dyn: bool, beta: str, wg: str, atomic: bool,
                 m: int, n: int, k: int) -> str:
    d = lambda *s: "x".join("?" if dyn else str(v) for v in s)
    a = f"memref<f32x{d(k, m) if ta else d(m, k)}>"
    b = f"memref<f32x{d(n, k) if tb else d(k, n)}>"
    c = f"memref<f32x{d(m, n)}>"
    return gemm_kernel("t" if ta else "n", "t" if tb else "n", a, b, c, beta=beta,
                       atomic=atomic, attrs=wg)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ta=st.booleans(), tb=st.booleans(), dyn=st.booleans(),
       beta=st.sampled_from(["%beta", "0.0", "1.0", "2.5"]),
       wg=st.sampled_from(["", "{work_group_size=[32, 2]}", "{subgroup_size=8, work_group_size=[8, 1]}"]),
       m=st.integers(1, 70), n=st.integers(1, 40), k=st.integers(1, 40), seed=st.integers(0, 9),
       swap=st.sampled_from([None, False, True]))
def test_gemm_matches_reference(ta, tb, dyn, beta, wg, m, n, k, seed, swap) -> None:
    rng = np.random.default_rng(seed)
    A = fortran(rng, (k, m) if ta else (m, k))
    B = fortran(rng, (n, k) if tb else (k, n))
    C = fortran(rng, (m, n))
    source = _gemm_source(ta, tb, dyn, beta, wg, False, m, n, k)
    if swap is not None:
        source = source.replace(", %C\n}", ', %C attributes {"swap"=' + str(swap).lower() + "}\n}")
    same_results(source, [np.float32(0.5), np.float32(-1.5), A, B, C], batch=1, outputs=[4],
                 rtol=1e-4)


@settings(max_examples=15, deadline=None)
@given(ta=st.booleans(), m=st.integers(1, 40), k=st.integers(1, 40), dyn=st.booleans(),
       wg=st.sampled_from(["", "{work_group_size=[32, 2]}"]))
def test_gemv_and_ger_match_reference(ta, m, k, dyn, wg) -> None:
    rng = np.random.default_rng(m * 41 + k)
    d = lambda *s: "x".join("?" if dyn else str(v) for v in s)
    attrs = f" attributes {wg}" if wg else ""
    gemv = f"""
func @k(%alpha: f32, %beta: f32, %A: memref<f32x{d(k, m) if ta else d(m, k)}>,
        %x: memref<f32x{d(k)}>, %y: memref<f32x{d(m)}>){attrs} {{
  gemv.{'t' if ta else 'n'} %alpha, %A, %x, %beta, %y
}}
"""
    A = fortran(rng, (k, m) if ta else (m, k))
    same_results(gemv, [np.float32(0.5), np.float32(2.0), A, fortran(rng, (k,)), fortran(rng, (m,))],
                 batch=1, outputs=[4], rtol=1e-4)
    ger = f"""
func @k(%alpha: f32, %beta: f32, %a: memref<f32x{d(m)}>, %b: memref<f32x{d(k)}>,
        %C: memref<f32x{d(m, k)}>){attrs} {{
  ger %alpha, %a, %b, %beta, %C
}}
"""
    same_results(ger, [np.float32(0.5), np.float32(2.0), fortran(rng, (m,)), fortran(rng, (k,)),
                       fortran(rng, (m, k))], batch=1, outputs=[4], rtol=1e-4)


# ------------------------------------------------------------------ staging of a transposed A

def test_transposed_a_is_staged_through_local_memory() -> None:
    """64x64 gemm.t.n: op(A) is copied to local memory once, then multiplied as `.n`;
    with 4 subgroups, they share the copy after a barrier."""
    program = lower(gemm_kernel("t", "n", "memref<f32x64x64>", "memref<f32x64x64>",
                                "memref<f32x64x64>", attrs="{work_group_size=[32, 2]}"))
    body = program.functions[0].body.instructions
    (alloca,) = instructions(program, Alloca)
    assert str(alloca.result.type) == "memref<f32x64x64,local>"
    copy, barrier, matmul, stop = body[body.index(alloca) + 1: body.index(alloca) + 5]
    assert isinstance(copy, Parallel) and isinstance(matmul, Parallel)
    assert isinstance(barrier, Barrier) and barrier.local_fence
    assert isinstance(stop, LifetimeStop) and stop.operands[0] is alloca.result
    a = program.functions[0].args[2]
    copy_loads = instructions_in(copy, CoopMatrixLoad)
    assert all(ld.transpose and ld.operands[0] is a for ld in copy_loads)
    assert all(st.operands[1] is alloca.result for st in instructions_in(copy, CoopMatrixStore))
    a_loads = [ld for ld in instructions_in(matmul, CoopMatrixLoad)
               if ld.result.type.use is MatrixUse.A]
    assert a_loads and all(ld.operands[0] is alloca.result and not ld.transpose for ld in a_loads)


def test_staging_copies_edge_tiles_checked() -> None:
    text = lowered_text(gemm_kernel("t", "n", "memref<f32x17x33>", "memref<f32x17x20>",
                                    "memref<f32x33x20>"))
    assert "alloca : memref<f32x33x17,local>" in text
    assert "cooperative_matrix_load.t.both_checked %A" in text
    assert "cooperative_matrix_store.both_checked %a" in text


@pytest.mark.parametrize("a, b, c, why", [
    ("memref<f32x8x8>", "memref<f32x8x8>", "memref<f32x8x8>", "one tile column reads A once"),
    ("memref<f32x?x?>", "memref<f32x?x?>", "memref<f32x?x?>", "no static size to allocate"),
    ("memref<f32x128x128>", "memref<f32x128x128>", "memref<f32x128x128>", "copy too large"),
])
def test_transposed_a_read_directly(a: str, b: str, c: str, why: str) -> None:
    program = lower(gemm_kernel("t", "n", a, b, c))
    assert not instructions(program, Alloca), why


def test_local_a_is_read_directly() -> None:
    program = lower("""
func @k(%B: memref<f32x64x64>, %C: memref<f32x64x64>) {
  %A = alloca : memref<f32x64x64,local>
  %one = constant 1.0 : f32
  gemm.t.n %one, %A, %B, %one, %C
}
""")
    assert len(instructions(program, Alloca)) == 1, "A is in local memory already"


def test_gemv_t_reads_a_directly() -> None:
    program = lower("""
func @k(%A: memref<f32x64x64>, %x: memref<f32x64>, %y: memref<f32x64>) {
  %one = constant 1.0 : f32
  gemv.t %one, %A, %x, %one, %y
}
""")
    assert not instructions(program, Alloca), "each element of A is used once"


def test_staging_leaves_room_for_the_kernels_allocas() -> None:
    """A 248 KB alloca of the kernel leaves no room for a 16 KiB copy (256 KiB device)."""
    program = lower("""
func @k(%A: memref<f32x64x64>, %B: memref<f32x64x64>, %C: memref<f32x64x64>) {
  %big = alloca : memref<f32x62000,local>
  %one = constant 1.0 : f32
  gemm.t.n %one, %A, %B, %one, %C
}
""")
    assert len(instructions(program, Alloca)) == 1


@pytest.mark.parametrize("m, n, k", [(64, 64, 64), (33, 20, 17), (16, 40, 5)])
def test_staged_gemm_matches_reference(m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m + n + k)
    for wg in ("", "{work_group_size=[32, 2]}"):
        text = _gemm_source(True, False, False, "%beta", wg, False, m, n, k)
        assert instructions(lower(text), Alloca)
        same_results(text, [np.float32(0.5), np.float32(-1.5), fortran(rng, (k, m)),
                            fortran(rng, (k, n)), fortran(rng, (m, n))],
                     batch=2, outputs=[4], rtol=1e-4)


def test_staged_copy_of_one_subgroup_needs_no_barrier() -> None:
    """Lane l copies the rows of op(A) it multiplies later: program order suffices."""
    program = lower(gemm_kernel("t", "n", "memref<f32x64x64>", "memref<f32x64x64>",
                                "memref<f32x64x64>"))
    assert instructions(program, Alloca) and not instructions(program, Barrier)
