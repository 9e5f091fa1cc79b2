"""lower-collectives: replace BLAS-like collectives by SPMD code.

Every gemm, gemv, ger, axpby, sum, cumsum and hadamard_product — at function
level or inside the for/if regions of the collective region — becomes a
`parallel` region (or a `foreach`, which lower-foreach turns into one) at the
same place. Barriers between them were inserted before this pass, so each
lowering only distributes its own work over the work-group's subgroups.
The lowering of each class is registered with it (`@lowers`,
tinyc/passes/lowering/registry.py).
`alloca`, `foreach` and `parallel` stay.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from tinyc.ir.core import Function, Instruction, Kind, Region, erase
from tinyc.passes.lowering import blas1, gemm, reductions  # noqa: F401 (register their lowerings)
from tinyc.passes.lowering.context import LoweringContext
from tinyc.passes.lowering.registry import LOWERINGS

if TYPE_CHECKING:
    from tinyc.passes import PassOptions


def collective_region_instructions(region: Region) -> Iterator[Instruction]:
    """Instructions of a collective region and of the for/if regions nested in it.

    SPMD regions (`parallel`, `foreach` bodies) are not entered.
    """
    for inst in list(region.instructions):
        yield inst
        if inst.region_kind is not Kind.SPMD:
            for nested in inst.regions:
                yield from collective_region_instructions(nested)


def lower_collectives(fn: Function, options: PassOptions) -> None:
    """Replace each BLAS-like collective of `fn` by its SPMD lowering."""
    ctx = LoweringContext.of(fn, options)
    targets = [inst for inst in collective_region_instructions(fn.body)
               if type(inst) in LOWERINGS]
    for inst in targets:
        region = inst.parent
        before = {id(i) for i in region.instructions}
        LOWERINGS[type(inst)](ctx, ctx.builder_before(inst), inst)
        if inst.addressing().rules is not None:  # the lowering is in bounds when the rule holds
            for made in region.instructions:
                if id(made) not in before:
                    made.lowered_from = inst
                    for nested in _walk(made):
                        nested.lowered_from = inst
        erase(inst)
    ctx.session.tidy()


def _walk(inst: Instruction) -> Iterator[Instruction]:
    for region in inst.regions:
        yield from region.walk()
