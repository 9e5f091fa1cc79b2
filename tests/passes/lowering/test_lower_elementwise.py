"""lower-collectives on axpby, hadamard_product, sum and cumsum."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lowering_testlib import fortran, instructions, lower, lowered_text, same_results

from tinyc.ir.instructions import (
    Load,
    Store,
    StoreFlag,
    SubgroupMode,
    SubgroupOperation,
)

WG = ["", "{work_group_size=[32, 2]}", "{subgroup_size=8, work_group_size=[8, 1]}"]


def kernel(params: str, body: str, attrs: str = "") -> str:
    attributes = f" attributes {attrs}" if attrs else ""
    return f"func @k(%alpha: f32, %beta: f32, {params}){attributes} {{\n{body}\n}}\n"


def dims(shape: tuple[int, ...], dyn: bool) -> str:
    return "".join("x" + ("?" if dyn else str(s)) for s in shape)


# ------------------------------------------------------------------ structure

def test_axpby_is_a_coalesced_loop_over_lanes() -> None:
    text = lowered_text(kernel("%A: memref<f32x40x7>, %B: memref<f32x40x7>",
                               "axpby.n %alpha, %A, %beta, %B"))
    assert "builtin.subgroup_local_id" in text
    assert re.search(r"for %i = %\w+, %c40, %c16 \{", text), text
    assert "load %A[%i, %j]" in text and re.search(r"store %\w+, %B\[%i, %j\]", text)


def test_axpby_transposed_reads_a_swapped() -> None:
    text = lowered_text(kernel("%A: memref<f32x7x40>, %B: memref<f32x40x7>",
                               "axpby.t %alpha, %A, %beta, %B"))
    assert "load %A[%j, %i]" in text


def test_beta_zero_does_not_load_the_output() -> None:
    program = lower(kernel("%A: memref<f32x40>, %B: memref<f32x40>",
                           "%z = constant 0.0 : f32\n  axpby.n %alpha, %A, %z, %B"))
    b = program.functions[0].args[3]
    assert not [ld for ld in instructions(program, Load) if ld.tensor is b]


@pytest.mark.parametrize("beta, flag", [("0.0", StoreFlag.ATOMIC), ("1.0", StoreFlag.ATOMIC_ADD)])
def test_atomic_hadamard(beta: str, flag: StoreFlag) -> None:
    program = lower(kernel("%a: memref<f32x13>, %b: memref<f32x13>, %c: memref<f32x13>",
                           f"%cb = constant {beta} : f32\n  hadamard_product.atomic %alpha, %a, %b, %cb, %c"))
    (store,) = instructions(program, Store)
    assert store.flag is flag


def test_promotion_casts_inputs_to_the_output_type() -> None:
    text = lowered_text("""
func @k(%alpha: i8, %beta: i32, %a: memref<i8x16>, %b: memref<i16x16>, %c: memref<i32x16>) {
  hadamard_product %alpha, %a, %b, %beta, %c
}
""")
    assert re.search(r"cast %\w+ : i32", text)
    assert "%alpha_1 = cast %alpha : i32" in text or re.search(r"%alpha\w* = cast %alpha : i32", text)


def test_scalar_sum_reduces_and_lane0_writes() -> None:
    program = lower(kernel("%A: memref<f32x100>, %b: memref<f32>", "sum.n %alpha, %A, %beta, %b"))
    (reduce,) = instructions(program, SubgroupOperation)
    assert reduce.mode is SubgroupMode.REDUCE
    assert "cmp.eq %" in lowered_text(kernel("%A: memref<f32x100>, %b: memref<f32>",
                                             "sum.n %alpha, %A, %beta, %b"))


def test_column_sums_reduce_and_row_sums_loop() -> None:
    t = lowered_text(kernel("%A: memref<f32x33x20>, %b: memref<f32x20>", "sum.t %alpha, %A, %beta, %b"))
    assert "subgroup_add.reduce" in t
    n = lowered_text(kernel("%A: memref<f32x33x20>, %b: memref<f32x33>", "sum.n %alpha, %A, %beta, %b"))
    assert "subgroup_add" not in n and "%row_sum = for %j" in n


def test_cumsum_mode0_scans_and_other_modes_run_sequentially() -> None:
    scan = lowered_text(kernel("%A: memref<f32x40x3>, %B: memref<f32x40x3>",
                               "cumsum %alpha, %A, 0, %beta, %B"))
    assert "subgroup_add.inclusive_scan" in scan and "subgroup_broadcast" in scan
    seq = lowered_text(kernel("%A: memref<f32x40x3>, %B: memref<f32x40x3>",
                              "cumsum %alpha, %A, 1, %beta, %B"))
    assert "subgroup_add" not in seq and "%prefix = arith.add %running" in seq
    short = lowered_text(kernel("%A: memref<f32x4x30>, %B: memref<f32x4x30>",
                                "cumsum %alpha, %A, 0, %beta, %B"))
    assert "subgroup_add" not in short, "a short mode 0 is scanned per lane"


# ------------------------------------------------------------------ semantics on the reference

shapes12 = st.one_of(st.tuples(st.integers(1, 40)), st.tuples(st.integers(1, 40), st.integers(1, 12)))


@settings(max_examples=30, deadline=None)
@given(shape=st.one_of(st.just(()), shapes12), transpose=st.booleans(), dyn=st.booleans(),
       beta=st.sampled_from(["%beta", "0.0", "1.0"]), wg=st.sampled_from(WG))
def test_axpby_matches_reference(shape, transpose, dyn, beta, wg) -> None:
    rng = np.random.default_rng(len(shape) * 100 + sum(shape))
    a_shape = shape[::-1] if transpose and len(shape) == 2 else shape
    body = (f"%cb = constant {beta} : f32\n  " if not beta.startswith("%") else "") + \
        f"axpby.{'t' if transpose else 'n'} %alpha, %A, {'%cb' if not beta.startswith('%') else beta}, %B"
    text = kernel(f"%A: memref<f32{dims(a_shape, dyn)}>, %B: memref<f32{dims(shape, dyn)}>", body, wg)
    same_results(text, [np.float32(0.5), np.float32(2.0), fortran(rng, a_shape), fortran(rng, shape)],
                 batch=1, outputs=[3])


@settings(max_examples=20, deadline=None)
@given(shape=shapes12, dyn=st.booleans(), wg=st.sampled_from(WG))
def test_hadamard_matches_reference(shape, dyn, wg) -> None:
    rng = np.random.default_rng(sum(shape))
    t = f"memref<f32{dims(shape, dyn)}>"
    text = kernel(f"%a: {t}, %b: {t}, %c: {t}", "hadamard_product %alpha, %a, %b, %beta, %c", wg)
    same_results(text, [np.float32(0.5), np.float32(2.0)] + [fortran(rng, shape) for _ in range(3)],
                 batch=1, outputs=[4])


@settings(max_examples=40, deadline=None)
@given(shape=shapes12, transpose=st.booleans(), dyn=st.booleans(),
       beta=st.sampled_from(["%beta", "0.0", "1.0"]), wg=st.sampled_from(WG), atomic=st.booleans())
def test_sum_matches_reference(shape, transpose, dyn, beta, wg, atomic) -> None:
    rng = np.random.default_rng(sum(shape) + 7)
    if atomic and beta == "%beta":
        beta = "1.0"
    out = () if len(shape) == 1 else ((shape[1],) if transpose else (shape[0],))
    cb = "" if beta.startswith("%") else f"%cb = constant {beta} : f32\n  "
    b = beta if beta.startswith("%") else "%cb"
    text = kernel(f"%A: memref<f32{dims(shape, dyn)}>, %b: memref<f32{dims(out, dyn)}>",
                  f"{cb}sum.{'t' if transpose else 'n'}{'.atomic' if atomic else ''} %alpha, %A, {b}, %b",
                  wg)
    same_results(text, [np.float32(0.5), np.float32(2.0), fortran(rng, shape), fortran(rng, out)],
                 batch=1, outputs=[3], rtol=1e-4)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 20), min_size=1, max_size=3).map(tuple), data=st.data(),
       dyn=st.booleans(), wg=st.sampled_from(WG))
def test_cumsum_matches_reference(shape, data, dyn, wg) -> None:
    mode = data.draw(st.integers(0, len(shape) - 1))
    rng = np.random.default_rng(sum(shape) + mode)
    t = f"memref<f32{dims(shape, dyn)}>"
    text = kernel(f"%A: {t}, %B: {t}", f"cumsum %alpha, %A, {mode}, %beta, %B", wg)
    same_results(text, [np.float32(0.5), np.float32(2.0), fortran(rng, shape), fortran(rng, shape)],
                 batch=1, outputs=[3], rtol=1e-4)
