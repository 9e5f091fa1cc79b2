"""The contraction front end without a device: subscripts, layouts, path, plan, generated IR."""

from __future__ import annotations

import numpy as np
import pytest

from tinyc.contractions.compiled import Signature, analyse, kernel_spec
from tinyc.contractions.emit import build_kernel
from tinyc.contractions.layout import Layout, layout
from tinyc.contractions.path import contraction_path
from tinyc.contractions.subscripts import parse
from tinyc.compiler import check_source


def signature(shape, order="C", dtype=np.float32) -> Signature:
    a = np.empty(shape, dtype, order=order)
    return Signature("numpy", a.dtype, a.shape, a.strides)


def kernel_source(subscripts, *shapes, order="C", out=None) -> str:
    a = analyse(subscripts, [signature(s, order) for s in shapes], out, None, None)
    return build_kernel(kernel_spec(a, None)).checked_source()


# -- subscripts ----------------------------------------------------------------------------
@pytest.mark.parametrize("subscripts, shapes, inputs, output", [
    ("ij,jk", [(2, 3), (3, 4)], ["ij", "jk"], "ik"),
    ("ba,Ab", [(2, 3), (4, 2)], ["ba", "Ab"], "Aa"),     # implicit: ASCII order, once only
    ("ii", [(3, 3)], ["ii"], ""),
    ("i j , j k -> i k", [(2, 3), (3, 4)], ["ij", "jk"], "ik"),
])
def test_parse_outputs(subscripts, shapes, inputs, output):
    s = parse(subscripts, shapes)
    assert ["".join(t) for t in s.inputs] == inputs
    assert "".join(s.output) == output


def test_parse_ellipsis_broadcasts_right_aligned():
    s = parse("...ij,...jk->...ik", [(5, 1, 3, 2), (4, 2, 6)])
    assert len(s.inputs[0]) == 4 and len(s.inputs[1]) == 3
    assert [s.sizes[label] for label in s.output] == [5, 4, 3, 6]
    implicit = parse("...ij,...jk", [(5, 1, 3, 2), (4, 2, 6)])
    assert implicit.output == s.output


def test_parse_broadcasts_size_one():
    assert parse("ij,ij->ij", [(3, 1), (3, 4)]).sizes == {"i": 3, "j": 4}
    with pytest.raises(ValueError, match="'i' is 3 in operand 0 but 0 in operand 1"):
        parse("i,i", [(3,), (0,)])


# -- layouts -------------------------------------------------------------------------------
def test_layout_orders_modes_by_stride():
    assert layout("bij", (10, 3, 4), (12, 4, 1)) == Layout(("j", "i", "b"), (4, 3, 10), (1, 4, 12))
    assert layout("ij", (3, 4), (1, 3)) == Layout(("i", "j"), (3, 4), (1, 3))


def test_layout_drops_broadcast_and_merges_diagonals():
    assert layout("ij", (3, 4), (0, 1)) == Layout(("j",), (4,), (1,))       # np.broadcast_to
    assert layout("ij", (1, 4), (4, 1)) == Layout(("j",), (4,), (1,))       # size 1
    assert layout("ii", (3, 3), (3, 1)) == Layout(("i",), (3,), (4,))       # the diagonal
    assert layout("bii", (5, 3, 3), (9, 3, 1)) is None                     # overlapping modes
    assert layout("i", (3,), (-1,)) is None                                 # negative stride
    assert layout("ij", (3, 4), (0, 1), write=True) is None                 # an output must not overlap


# -- path ----------------------------------------------------------------------------------
def test_path_minimises_flops():
    sizes = {"i": 100, "j": 2, "k": 100, "l": 2}
    tensors = [frozenset("ij"), frozenset("jk"), frozenset("kl")]
    # (ij,jk)->ik costs 100*2*100, then ik,kl 100*100*2; (jk,kl)->jl costs 2*100*2, then 100*2*2.
    assert contraction_path(tensors, frozenset("il"), sizes) == [(1, 2), (0, 1)]


def test_path_greedy_beyond_six_operands():
    labels = "abcdefgh"
    tensors = [frozenset(labels[k:k + 2]) for k in range(7)]
    path = contraction_path(tensors, frozenset("ah"), {c: 3 for c in labels})
    assert len(path) == 6


# -- plan and generated IR ---------------------------------------------------------------------
def test_spec_fused_kernel_is_one_kernel_for_every_batch_size():
    """D_b += alpha A_b B^T C as the spec writes it (column-major arrays): one kernel, the
    batch a `?` mode, the same program for 100 and 100000 entries."""
    source = kernel_source("ikb,jk,jl->ilb", (16, 8, 100), (8, 8), (8, 16), order="F")
    check_source(source)
    assert source.count("func @") == 1
    assert "%A: memref<f32x16x8x?>" in source and "%out: memref<f32x16x16x?>" in source
    assert "%nb = size %out[2]" in source and "builtin.group_id" in source
    assert source == kernel_source("ikb,jk,jl->ilb", (16, 8, 100000), (8, 8), (8, 16), order="F")


def test_shared_operands_are_multiplied_once_per_work_group():
    """The product of the shared B^T C is made once per work-group, in local memory, and
    each work-group takes a tile of the batch; the short last tile entry by entry."""
    source = kernel_source("ikb,jk,jl->ilb", (16, 8, 1000), (8, 8), (8, 16), order="F")
    check_source(source)
    assert source.count("func @") == 1 and "alloca : memref<f32x16x8,local>" in source
    before, tile = source.split("%first =", 1)
    assert "gemm.t.n %0, %C, %B, %1, %t0" in before
    full, short = tile.split("} else {", 1)
    assert "gemm.n.n %alpha, %t0, " in full and "cmp.le" in full
    assert "for %" in short and "gemm" in short
    # C-order: the tile of the batch joins the gemm's columns: one gemm, no loop.
    c_order = kernel_source("bik,jk,jl->bil", (1000, 16, 8), (8, 8), (8, 16))
    before, tile = c_order.split("%first =", 1)
    full = tile.split("} else {")[0]
    assert before.count("gemm") == 1 and full.count("gemm") == 1 and "for %" not in full
    assert "fuse %a[1, 2] : memref<f32x8x1024>" in full
    chain = kernel_source("ij,jk,kl,blm->bim", (32, 24), (24, 16), (16, 12), (20000, 12, 8))
    before, tile = chain.split("%first =", 1)
    assert before.count("gemm") == 2 and tile.split("} else {")[0].count("gemm") == 1


@pytest.mark.parametrize("subscripts, shapes, instruction", [
    ("bij,bjk->bik", [(100, 8, 8), (100, 8, 8)], "gemm.n.n"),
    ("bji,bjk->bik", [(100, 8, 8), (100, 8, 8)], "gemm.n.t"),
    ("bij,bkj->bik", [(100, 8, 8), (100, 8, 8)], "gemm.t.n"),
    ("bij,bj->bi", [(100, 8, 8), (100, 8)], "gemv.t"),
    ("bi,bj->bij", [(100, 8), (100, 6)], "ger"),
    ("bi,bi->bi", [(100, 8), (100, 8)], "hadamard_product"),
    ("bij->bji", [(100, 8, 6)], "axpby.t"),
    ("bij->bi", [(100, 8, 6)], "sum.t"),
])
def test_collective_chosen(subscripts, shapes, instruction):
    """C-order arrays are transposed memrefs: the collective absorbs it with .t, no copies."""
    source = kernel_source(subscripts, *shapes)
    check_source(source)
    assert instruction in source
    assert "alloca" not in source


def test_batch_reduce_gemm_is_a_loop_of_gemm_with_beta_one():
    source = kernel_source("ikb,kjb->ij", (8, 8, 50), (8, 8, 50), order="F")
    check_source(source)
    assert source.count("gemm") == 2          # the first with beta, the loop with 1
    assert "for %" in source


def test_batch_modes_are_fused_into_the_group_id():
    source = kernel_source("cbij,cbjk->cbik", (3, 40, 4, 4), (3, 40, 4, 4))
    check_source(source)
    assert "builtin.group_id" in source and "arith.rem" in source and "arith.div" in source


def test_small_work_shares_work_groups():
    a = analyse("bij,bjk->bik", [signature((10000, 4, 4))] * 2, None, None, None)
    plan = kernel_spec(a, None).plan
    assert plan.block > 1 and plan.groups_for(a.sizes) == -(-10000 // plan.block)


def test_relu_epilogue_in_the_same_kernel():
    a = analyse("bij,bjk->bik", [signature((50, 8, 8))] * 2, None, None, "relu")
    source = build_kernel(kernel_spec(a, "relu")).checked_source()
    assert source.count("func @") == 1 and "arith.max" in source
