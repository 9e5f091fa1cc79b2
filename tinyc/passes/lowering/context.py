"""What every lowering needs to know about the function being lowered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tinyc.ir.core import Function, Instruction
from tinyc.ir.instructions import BlasInstruction
from tinyc.target.device_info import DeviceInfo, device_of
from tinyc.passes.lowering.lowering_builder import LoweringBuilder
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
    device: DeviceInfo

    @classmethod
    def of(cls, fn: Function, options: Any = None) -> LoweringContext:
        """The context of `fn`; `options` (PassOptions) describe the device."""
        sgs = int(fn.attrs.get("subgroup_size", 16))
        x, y = fn.attrs.get("work_group_size", [sgs, 1])
        return cls(fn, sgs, max(1, int(x) // sgs) * int(y), Session(fn), device_of(options))

    @property
    def local_memory_size(self) -> int:
        """Bytes of local memory per work-group on the device."""
        return self.device.local_memory_size

    def knobs(self, inst: BlasInstruction) -> dict[str, Any]:
        """The instruction's complete schedule (verify-schedule has usually filled it in)."""
        from tinyc.schedule.resolve import allocas_bytes, resolve_knobs

        room = self.device.local_memory_size - allocas_bytes(self.fn)
        return resolve_knobs(inst, self.subgroup_size, self.device, room)

    def builder_before(self, inst: Instruction) -> LoweringBuilder:
        return LoweringBuilder.before_inst(inst, self.session)
