"""verify-schedule: complete every collective's schedule and check that it fits the device.

Runs after work-group-size (the subgroup size is then fixed). Each
scheduled collective gets all its knobs as attributes — the given ones and
the defaults for the rest (tinyc/schedule/defaults.py) — so the lowering
reads one complete schedule and `--print-after verify-schedule` shows it. A
schedule that does not fit the device (registers, local memory, staging of
an operand that cannot be staged) is a CompilationError at the instruction.
The complete schedule of each function is recorded in `options.used` for
`--emit lowered` and the autotuner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinyc.diagnostics import CompilationError, Diagnostic
from tinyc.ir.core import Function
from tinyc.target.device_info import device_of
from tinyc.schedule.defaults import staged_bytes
from tinyc.schedule.resolve import allocas_bytes, fit_problems, resolve_knobs
from tinyc.schedule.program import scheduled_instructions

if TYPE_CHECKING:
    from tinyc.passes import PassOptions


def verify_schedule(fn: Function, options: "PassOptions") -> None:
    """Fill in default knobs, check the fit, record the schedule used."""
    device = device_of(options)
    S = int(fn.attrs.get("subgroup_size", 16))
    record: dict = {"subgroup_size": S,
                    "work_group_size": list(fn.attrs.get("work_group_size", [S, 1]))}
    room = device.local_memory_size - allocas_bytes(fn)
    errors = []
    for key, inst in scheduled_instructions(fn):
        knobs = resolve_knobs(inst, S, device, room)
        problems = fit_problems(inst, knobs, S, device, room, tile_given="tile" in inst.attrs)
        errors += [Diagnostic(f"{inst.opname}: the schedule does not fit the device: {p}", inst.span)
                   for p in problems]
        if knobs["stage"] and not problems:  # (only a matmul stages)
            room -= staged_bytes(inst.matmul(bool(knobs.get("swap"))))
        inst.attrs.update(knobs)
        record[key] = dict(knobs)
    if errors:
        raise CompilationError(errors)
    if options.used is not None:
        options.used[fn.name] = record
