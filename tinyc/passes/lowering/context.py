"""What every lowering needs to know about the function being lowered."""

from __future__ import annotations

from dataclasses import dataclass

from typing import Any

from tinyc.ir.core import Function, Instruction
from tinyc.target.device_info import device_of
from tinyc.passes.lowering.builder import LoweringBuilder
from tinyc.passes.lowering.session import Session


@dataclass
class LoweringContext:
    """Subgroup size, number of subgroups, local memory and the function's name pool.

    The work-group size pass has fixed both sizes before the lowering runs,
    so the number of subgroups (X/S·Y: subgroups form along x only) is a
    compile-time constant; using it instead of `builtin.num_subgroups` lets
    distribution loops fold away when there is one subgroup.
    """

    fn: Function
    subgroup_size: int
    num_subgroups: int
    session: Session
    local_memory_size: int   # bytes per work-group on the device

    @classmethod
    def of(cls, fn: Function, options: Any = None) -> LoweringContext:
        """The context of `fn`; `options` (PassOptions) describe the device."""
        sgs = int(fn.attrs.get("subgroup_size", 16))
        x, y = fn.attrs.get("work_group_size", [sgs, 1])
        return cls(fn, sgs, max(1, int(x) // sgs) * int(y), Session(fn),
                   device_of(options).local_memory_size)

    def builder_before(self, inst: Instruction) -> LoweringBuilder:
        return LoweringBuilder.before_inst(inst, self.session)
