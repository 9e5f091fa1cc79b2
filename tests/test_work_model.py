"""The work model of `tinyc bench` and benchmarks/, against flops and bytes counted by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinyc.harness.work import count_work, group_flops
from tinyc.compiler import compile_to_spirv
from tinyc.parser import parse

FUSED = Path(__file__).resolve().parents[1] / "samples" / "fused_kernel.ir"


def test_fused_kernel_flops_and_minimum_traffic():
    source = FUSED.read_text()
    info = compile_to_spirv(source, str(FUSED)).kernels["fused_kernel"]
    batch = 10
    rng = np.random.default_rng(1)
    A = [np.asfortranarray(rng.random((16, 8), dtype=np.float32)) for _ in range(batch)]
    B = np.asfortranarray(rng.random((8, 8), dtype=np.float32))
    C = np.asfortranarray(rng.random((8, 16), dtype=np.float32))
    D = np.zeros((16, 16, batch), dtype=np.float32, order="F")
    work = count_work(parse(source)["fused_kernel"], info, [np.float32(0.5), A, B, C, D], batch)
    # tmp = 1·A·Bᵀ + 0·tmp (16×8×8): 2·M·N·K only; then D := alpha·tmp·C + 1·D
    # (16×16×8): 2·M·N·K, and per element of D a multiply by alpha and an add.
    assert work.flops == batch * (2 * 16 * 8 * 8 + 2 * 16 * 16 * 8 + 2 * 16 * 16)
    # A, B and C read once; D (beta = 1) read and written once.
    assert work.bytes == 4 * (batch * 16 * 8 + 8 * 8 + 8 * 16 + 2 * batch * 16 * 16)
    np.testing.assert_array_equal(D, 0)  # counting runs on copies


def _fn(signature: str, body: str):
    from tinyc.ir.verifier import verify

    program = parse(f"func @k({signature}) {{\n{body}\n}}")
    verify(program)
    return program["k"]


def _f32(*shape: int) -> np.ndarray:
    return np.ones(shape, dtype=np.float32, order="F")


# (instruction line, extra argument types, arrays, flops counted by hand).
# alpha and beta are the arguments %a and %b unless a constant is named.
_SCALARS = "%a: f32, %b: f32, %one: f32"
CASES = {
    "gemm": ("gemm.n.n %a, %A, %B, %b, %C", "%A: memref<f32x4x5>, %B: memref<f32x5x3>, %C: memref<f32x4x3>",
             [_f32(4, 5), _f32(5, 3), _f32(4, 3)], 2 * 4 * 3 * 5 + 3 * 12),
    "gemm.t.n, alpha 1, beta 0": ("gemm.t.n %c1, %A, %B, %c0, %C",
                                  "%A: memref<f32x5x4>, %B: memref<f32x5x3>, %C: memref<f32x4x3>",
                                  [_f32(5, 4), _f32(5, 3), _f32(4, 3)], 2 * 4 * 3 * 5),
    "gemv, beta 1": ("gemv.n %a, %A, %x, %c1, %y", "%A: memref<f32x6x4>, %x: memref<f32x4>, %y: memref<f32x6>",
                     [_f32(6, 4), _f32(4), _f32(6)], 2 * 6 * 4 + 2 * 6),
    "ger": ("ger %a, %x, %y, %b, %C", "%x: memref<f32x6>, %y: memref<f32x4>, %C: memref<f32x6x4>",
            [_f32(6), _f32(4), _f32(6, 4)], 24 + 3 * 24),
    "hadamard_product": ("hadamard_product %a, %x, %y, %b, %z",
                         "%x: memref<f32x7>, %y: memref<f32x7>, %z: memref<f32x7>",
                         [_f32(7), _f32(7), _f32(7)], 7 + 3 * 7),
    "axpby, beta 0": ("axpby.n %a, %A, %c0, %B", "%A: memref<f32x8x2>, %B: memref<f32x8x2>",
                      [_f32(8, 2), _f32(8, 2)], 16),
    "axpby": ("axpby.t %a, %A, %b, %B", "%A: memref<f32x2x8>, %B: memref<f32x8x2>",
              [_f32(2, 8), _f32(8, 2)], 3 * 16),
    "sum": ("sum.n %a, %A, %b, %y", "%A: memref<f32x6x4>, %y: memref<f32x6>",
            [_f32(6, 4), _f32(6)], 24 + 3 * 6),
    "cumsum": ("cumsum %a, %A, 1, %b, %B", "%A: memref<f32x5x3>, %B: memref<f32x5x3>",
               [_f32(5, 3), _f32(5, 3)], 15 + 3 * 15),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_collective_flops_against_hand_counts(case):
    line, arrays_sig, arrays, expected = CASES[case]
    body = "  %c0 = constant 0.0 : f32\n  %c1 = constant 1.0 : f32\n  " + line
    fn = _fn(f"{_SCALARS}, {arrays_sig}", body)
    args = [np.float32(2), np.float32(3), np.float32(1), *arrays]
    assert group_flops(fn, args, batch=1) == expected


def test_complex_operations_count_four_real_flops():
    fn = _fn("%a: c32, %b: c32, %A: memref<c32x4x5>, %B: memref<c32x5x3>, %C: memref<c32x4x3>",
             "  gemm.n.n %a, %A, %B, %b, %C")
    arrays = [np.ones(s, dtype=np.complex64, order="F") for s in ((4, 5), (5, 3), (4, 3))]
    assert group_flops(fn, [np.complex64(1), np.complex64(1), *arrays], batch=1) == 4 * (2 * 60 + 3 * 12)


def test_flops_use_the_run_time_sizes():
    fn = _fn("%a: f32, %b: f32, %A: memref<f32x?x?>, %B: memref<f32x?x?>",
             "  axpby.n %a, %A, %b, %B")
    assert group_flops(fn, [np.float32(1), np.float32(1), _f32(9, 7), _f32(9, 7)], batch=1) == 3 * 63


@pytest.mark.parametrize("name, per_element", [("axpby_f32_64", 3), ("cumsum_f32_64", 4)])
def test_benchmarks_count_with_the_same_model(name, per_element):
    """benchmarks/ and `tinyc bench` once disagreed here: alpha·X + beta·B is 3 flops, the scan 1 more."""
    from benchmarks.cases import make_case

    case = make_case(name, batch=10)
    assert case.flops == per_element * 64 * 64 * 10


SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def test_arithmetic_in_spmd_regions_counts_once_per_lane_that_ran_it():
    """samples/elementwise.ir, per element k of a column: Horner's 3 steps (a mul and an add
    each), the final add, and where x <= 0 the `exp(v) - 1` subtraction (math.exp and index
    arithmetic are no flops): `tinyc bench` said 0 GFLOP/s for every kernel without a
    collective."""
    source = (SAMPLES / "elementwise.ir").read_text()
    fn = parse(source)["elementwise"]
    info = compile_to_spirv(source, "elementwise.ir").kernels["elementwise"]
    batch = 3
    x = np.asfortranarray(np.random.default_rng(4).standard_normal((64, batch)).astype(np.float32))
    y = np.zeros((64, batch), np.float32, order="F")
    per_group = 64 * 7 + int(np.count_nonzero(x[:, 0] <= 0))  # work-group 0, times the batch
    assert count_work(fn, info, [x, y], batch).flops == batch * per_group


def test_a_coopmatrix_multiply_add_counts_per_subgroup_that_ran_it():
    """samples/coopmatrix_gemm.ir: subgroup 0 alone computes alpha·(A·B + C) on 16x8 by 8x16."""
    source = (SAMPLES / "coopmatrix_gemm.ir").read_text()
    fn = parse(source)["coopmatrix_gemm"]
    info = compile_to_spirv(source, "coopmatrix_gemm.ir").kernels["coopmatrix_gemm"]
    batch = 2
    args = [np.float32(0.5), np.ones((16, 8, batch), np.float16, order="F"),
            np.ones((8, 16, batch), np.float16, order="F"), np.ones((16, 16, batch), np.float32, order="F")]
    assert count_work(fn, info, args, batch).flops == batch * (2 * 16 * 16 * 8 + 16 * 16)


def test_complex_scalar_arithmetic_counts_real_flops():
    """A complex multiply is 6 real flops and an add 2 (a multiply-add 8, as the collectives
    count a complex one: 4 times the real 2)."""
    fn = _fn("%A: memref<c32x8>, %B: memref<c32x8>",
             "  parallel {\n    %i32 = builtin.subgroup_local_id : i32\n    %i = cast %i32 : index\n"
             "    %a = load %A[%i] : c32\n    %m = arith.mul %a, %a : c32\n    %s = arith.add %m, %a : c32\n"
             "    store %s, %B[%i]\n  }")
    arrays = [np.ones(8, np.complex64), np.zeros(8, np.complex64)]
    assert group_flops(fn, arrays, batch=1, work_group_size=(8, 1), subgroup_size=8) == 8 * (6 + 2)
