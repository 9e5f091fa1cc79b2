"""The pass pipeline: named passes run in order over each function.

A pass is a plain function `(fn: Function, options: PassOptions) -> None`
that rewrites the function in place. `PIPELINE` lists them in order; the
driver prints the IR after any of them on request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from tinyc.ir.core import Function, Program
from tinyc.passes.apply_schedule import apply_schedule
from tinyc.passes.barriers import insert_barriers
from tinyc.passes.check_shapes import check_shapes
from tinyc.passes.local_memory import assign_local_memory
from tinyc.passes.lower_collectives import lower_collectives
from tinyc.passes.lower_foreach import LOWERS as FOREACH_LOWERS
from tinyc.passes.lower_foreach import lower_foreach
from tinyc.passes.lowering.private_memory import elide_private_barriers
from tinyc.passes.lowering.registry import LOWERINGS
from tinyc.passes.verify_schedule import verify_schedule
from tinyc.passes.work_group_size import choose_work_group_size
from tinyc.std import Version


@dataclass
class PassOptions:
    """What passes may know about the target."""

    subgroup_size: int | None = None   # forced by the caller (tinyc.compile(subgroup_size=))
    device_info: Any = None            # sizes supported by the device, local memory size
    version: Version | None = None     # the program's language version (tinyc.std)
    warnings: list = field(default_factory=list)  # Diagnostics of severity "warning"
    check_bounds: bool = False         # the bounds-checked variant (kernel(..., check_bounds=True))
    schedule: Any = None               # tinyc.schedule.Schedule given by the caller
    tuned: dict | None = None          # kernel -> schedule found by the autotuner
    used: dict | None = None           # out: kernel -> the complete schedule used


Pass = Callable[[Function, PassOptions], None]

PIPELINE: list[tuple[str, Pass]] = [
    ("apply-schedule", apply_schedule),
    ("work-group-size", choose_work_group_size),
    ("verify-schedule", verify_schedule),
    ("insert-barriers", insert_barriers),
    ("lower-collectives", lower_collectives),
    ("lower-foreach", lower_foreach),
    ("elide-barriers", elide_private_barriers),
    ("local-memory", assign_local_memory),
]


LOWERED: frozenset[type] = frozenset(LOWERINGS) | frozenset(FOREACH_LOWERS)
"""Instruction classes the passes replace by others, so codegen needs no emitter for them."""


def run_pipeline(program: Program, subgroup_size: int | None = None, device_info: Any = None,
                 print_after: Callable[[str, Program], None] | None = None,
                 check_bounds: bool = False, schedule: Any = None, tuned: dict | None = None,
                 used: dict | None = None) -> list:
    """Run every pass on every function; `print_after(name, program)` after each.

    `check_bounds` (the bounds-checked variant) runs check-shapes first.
    `schedule`/`tuned` are the given and the tuned schedule (apply-schedule);
    `used` receives each kernel's complete schedule (verify-schedule).
    Returns the warnings the passes gave (Diagnostics), e.g. an option that
    an attribute in the source overrides."""
    options = PassOptions(subgroup_size, device_info, program.version, check_bounds=check_bounds,
                          schedule=schedule, tuned=tuned, used=used)
    passes = ([("check-shapes", check_shapes)] if check_bounds else []) + PIPELINE
    for name, run in passes:
        for fn in program.functions:
            run(fn, options)
        if print_after is not None:
            print_after(name, program)
    return options.warnings
