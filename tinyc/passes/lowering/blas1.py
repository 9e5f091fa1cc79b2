"""axpby and hadamard_product: element-wise updates as `foreach` loops.

The foreach runs over the output's index space; lower-foreach then puts its
first mode across subgroup lanes, so loads and stores of the output (and of
non-transposed inputs) are coalesced. Inputs are cast to the output's
element type before the arithmetic (spec: promotion into the output type).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tinyc.ir.core import Value
from tinyc.ir.instructions import Axpby, HadamardProduct
from tinyc.ir.types import MemrefType
from tinyc.passes.lowering.builder import LoweringBuilder
from tinyc.passes.lowering.context import LoweringContext
from tinyc.passes.lowering.scaling import prepare_scaling, store_update

INDEX_NAMES = ("i", "j", "k", "l", "m", "n")


@contextmanager
def foreach_over(b: LoweringBuilder, shape_of: Value, modes: list[int] | None = None
                 ) -> Iterator[list[Value]]:
    """A foreach over all (or the given) modes of a memref; yields the loop variables."""
    t = shape_of.type
    assert isinstance(t, MemrefType)
    modes = list(range(t.order)) if modes is None else modes
    uppers = [b.named(b.dim(shape_of, mode), f"size{mode}") for mode in modes]
    lowers = [b.int_const(0) for _ in modes]
    with b.foreach(lowers, uppers) as loop_vars:
        for v, mode in zip(loop_vars, modes):
            b.named(v, INDEX_NAMES[mode] if mode < len(INDEX_NAMES) else f"i{mode}")
        yield loop_vars


def lower_axpby(ctx: LoweringContext, b: LoweringBuilder, inst: Axpby) -> None:
    """B := alpha op(A) + beta B, one element per loop iteration."""
    A, B = inst.inputs[0], inst.output
    out_type = B.type.element  # type: ignore[attr-defined]
    if B.type.order == 0:  # type: ignore[attr-defined]
        with b.parallel():
            scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
            with b.if_(first_work_item(ctx, b)) as branch, branch.then():
                store_update(b, scaling, b.cast(b.load(A, []), out_type), B, [])
        return
    scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
    with foreach_over(b, B) as idx:
        a_idx = idx[::-1] if inst.transpose and len(idx) == 2 else idx
        x = b.named(b.cast(b.load(A, a_idx), out_type), "x")
        store_update(b, scaling, x, B, idx)


def lower_hadamard_product(ctx: LoweringContext, b: LoweringBuilder,
                           inst: HadamardProduct) -> None:
    """c := alpha a∘b + beta c, one element per loop iteration."""
    x_mem, y_mem = inst.inputs
    out = inst.output
    out_type = out.type.element  # type: ignore[attr-defined]
    scaling = prepare_scaling(b, inst.alpha, inst.beta, out_type, inst.atomic)
    with foreach_over(b, out) as idx:
        x = b.cast(b.load(x_mem, idx), out_type)
        y = b.cast(b.load(y_mem, idx), out_type)
        store_update(b, scaling, b.named(b.mul(x, y), "prod"), out, idx)


def first_work_item(ctx: LoweringContext, b: LoweringBuilder) -> Value:
    """True on work-item 0 of subgroup 0: the one that does scalar work."""
    is_lane0 = b.eq(b.lane_id(), 0)
    if ctx.num_subgroups == 1:
        return is_lane0
    return b.all_of([is_lane0, b.eq(b.subgroup_id(ctx.num_subgroups), 0)])
