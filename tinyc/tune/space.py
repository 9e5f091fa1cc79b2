"""Candidate schedules of one kernel: the knobs' search spaces, normalized, fitted, ranked.

The space is the product of each free knob's `space` (declared beside the
knob in tinyc/schedule/knobs.py); knobs the source or the caller fixed stay
as they are. Candidates are normalized first — a tile larger than a static
problem is clipped, `vector_width` only matters where a lane reads
contiguous rows, `stage` only where A can be staged — so schedules that
compile to the same code are timed once. Schedules that do not fit the
device (resolve.fit_problems) are dropped, the rest ranked by the cost model.

A kernel's candidates vary one collective at a time around the best-ranked
choice of the others, for every free subgroup size: the joint space of a
kernel with several collectives is too large to enumerate.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from tinyc.ir.core import Function
from tinyc.ir.instructions import BlasInstruction
from tinyc.target.device_info import DeviceInfo
from tinyc.ir.knobs import FUNCTION_KNOBS
from tinyc.schedule.defaults import can_stage, matmul_defaults, staged_bytes
from tinyc.schedule.program import instruction_knobs, scheduled_instructions
from tinyc.schedule.resolve import allocas_bytes, fit_problems, resolve_knobs
from tinyc.tune.cost import instruction_cost

PER_INSTRUCTION = 12
"""Configurations of each collective kept per subgroup size (the cost model's best)."""


@dataclass
class Candidate:
    """A kernel schedule to time, with the cost model's estimate (cycles per work-group)."""

    schedule: dict[str, Any]
    cost: float
    label: str = ""
    measured: list[float] = field(default_factory=list)

    def key(self) -> str:
        import json

        return json.dumps(self.schedule, sort_keys=True)


def free_subgroup_sizes(fn: Function, fixed: dict[str, Any], device: DeviceInfo,
                        caller_subgroup_size: int | None) -> list[int | None]:
    """Subgroup sizes to try; [None] when the source, the schedule or the caller fixes it."""
    if (caller_subgroup_size is not None or "subgroup_size" in fn.attrs
            or "work_group_size" in fn.attrs or "subgroup_size" in fixed
            or "work_group_size" in fixed):
        return [None]
    space = FUNCTION_KNOBS["subgroup_size"].space
    return [s for s in space if s in device.subgroup_sizes] or [None]


def _normalize(inst: BlasInstruction, knobs: dict[str, Any], S: int,
               device: DeviceInfo) -> dict[str, Any]:
    """The same schedule in its canonical form (values that make no difference dropped)."""
    out = dict(knobs)
    shape = inst.matmul(bool(out.get("swap")))
    if shape is None:
        return out
    rows, cols = out["tile"]
    if shape.M is not None:
        rows = min(rows, max(1, -(-shape.M // S)))
    if shape.N is not None:
        cols = min(cols, max(1, shape.N))
    out["tile"] = [rows, cols]
    if shape.K is not None:
        out["k_unroll"] = max(1, min(out["k_unroll"], shape.K))
    if not can_stage(shape) or out.get("swap"):
        out["stage"] = False
    if not shape.transpose_a and not out.get("swap"):
        out["vector_width"] = matmul_defaults(shape, S, device, 0, False)["vector_width"]
    return out


def instruction_configs(inst: BlasInstruction, fixed: dict[str, Any], S: int,
                        device: DeviceInfo, room: int) -> list[tuple[float, dict[str, Any]]]:
    """(cost, knobs) of every fitting configuration of one collective, cheapest first."""
    knobs = inst.knobs
    free = [name for name in knobs if name not in fixed]
    seen: set[str] = set()
    out = []
    for values in itertools.product(*(knobs[name].space for name in free)):
        config = {**fixed, **dict(zip(free, values))}
        full = _normalize(inst, resolve_knobs(inst, S, device, room, config), S, device)
        text = repr(sorted(full.items()))
        if text in seen or fit_problems(inst, full, S, device, room):
            continue
        seen.add(text)
        out.append((instruction_cost(inst, full, S, device), full))
    out.sort(key=lambda pair: pair[0])
    return out


def candidates(fn: Function, given: dict[str, Any], device: DeviceInfo,
               caller_subgroup_size: int | None = None) -> list[Candidate]:
    """Ranked candidate schedules of `fn` (checked IR), cheapest estimate first.

    `given` is the caller's schedule of this kernel; its knobs and the
    source's attributes stay fixed. Every candidate names all free knobs.
    """
    targets = scheduled_instructions(fn)
    room0 = device.local_memory_size - allocas_bytes(fn)
    out: dict[str, Candidate] = {}
    for S in free_subgroup_sizes(fn, given, device, caller_subgroup_size):
        size = S or _fixed_subgroup_size(fn, given, caller_subgroup_size)
        per_inst = []
        room = room0
        for key, inst in targets:
            fixed = {**inst.attrs, **instruction_knobs(given, key)}
            configs = instruction_configs(inst, fixed, size, device, room)[:PER_INSTRUCTION]
            if not configs:
                break
            per_inst.append((key, configs))
            best = configs[0][1]
            if best["stage"]:
                room -= staged_bytes(inst.matmul(bool(best.get("swap"))))
        else:
            base = {key: configs[0] for key, configs in per_inst}
            head = {"subgroup_size": S} if S is not None else {}
            for key, configs in per_inst or [("", [])]:
                for cost_knobs in (configs or [None]):
                    choice = dict(base)
                    if cost_knobs is not None:
                        choice[key] = cost_knobs
                    schedule = {**head, **{k: v[1] for k, v in choice.items()}}
                    total = sum(v[0] for v in choice.values())
                    cand = Candidate(schedule, total, f"S={size}")
                    out.setdefault(cand.key(), cand)
    return sorted(out.values(), key=lambda c: c.cost)


def _fixed_subgroup_size(fn: Function, given: dict[str, Any], caller: int | None) -> int:
    for value in (given.get("subgroup_size"), fn.attrs.get("subgroup_size"), caller):
        if isinstance(value, int):
            return value
    wgs = given.get("work_group_size") or fn.attrs.get("work_group_size")
    if wgs:
        return 16 if wgs[0] % 16 == 0 else 8 if wgs[0] % 8 == 0 else 4
    return 16
