"""A collective's complete schedule on a device: given knobs, defaults, and the fit check.

`resolve_knobs` fills the knobs a schedule leaves unset with the defaults
(defaults.py). `fit_problems` says why a complete schedule does not fit the
device: the accumulator tile must fit in the vector registers, a staged copy
in the local memory left by the kernel's allocas, and staging needs a
transposed A of static size. (Subgroup and work-group sizes are checked
against the device by the work-group-size pass.)
"""

from __future__ import annotations

from typing import Any

from tinyc.ir.core import Function
from tinyc.ir.instructions import BlasInstruction
from tinyc.target.device_info import DeviceInfo
from tinyc.schedule.defaults import can_stage, default_swap, matmul_defaults, staged_bytes


def allocas_bytes(fn: Function) -> int:
    """Local memory of every alloca of the function, as if all were live at once."""
    from tinyc.passes.local_memory import alloca_size

    return sum(alloca_size(inst) for inst in fn.walk() if inst.allocates())


def resolve_knobs(inst: BlasInstruction, S: int, device: DeviceInfo, stage_room: int,
                  knobs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every knob of `inst`: the given `knobs` (default: its attributes), defaults for the rest."""
    source = inst.attrs if knobs is None else knobs
    given = {k: v for k, v in source.items() if k in inst.knobs}
    if inst.fixed_defaults is not None:
        defaults = dict(inst.fixed_defaults)
    else:
        swap = bool(given.get("swap", default_swap(inst, S, device, stage_room)))
        stage = bool(given["stage"]) if "stage" in given else (False if swap else None)
        defaults = matmul_defaults(inst.matmul(swap), S, device, stage_room, stage, swap)
        if "swap" in inst.knobs:
            defaults["swap"] = swap
    return {**{k: v for k, v in defaults.items() if k in inst.knobs},
            **{k: (list(v) if isinstance(v, tuple) else v) for k, v in given.items()}}


def accumulator_registers(inst: BlasInstruction, knobs: dict[str, Any], S: int,
                          device: DeviceInfo) -> int:
    """Vector registers the schedule keeps live across its inner loop."""
    rows, cols = knobs["tile"]
    out = inst.output.type
    w = device.registers_per_value(out.element.size, S)  # type: ignore[attr-defined]
    shape = inst.matmul(bool(knobs.get("swap")))
    if shape is not None:  # a tile larger than the product holds no more
        if shape.M is not None:
            rows = min(rows, -(-shape.M // S))
        if shape.N is not None:
            cols = min(cols, shape.N)
    return inst.accumulators([rows, cols]) * w


def fit_problems(inst: BlasInstruction, knobs: dict[str, Any], S: int, device: DeviceInfo,
                 stage_room: int, tile_given: bool = True) -> list[str]:
    """Why the schedule cannot run well on the device (empty when it fits).

    Registers count only against a tile somebody chose (`tile_given`): a
    default tile that spills (wide complex values on many lanes, where even
    1×1 does not fit) is slow, not wrong, and must not reject a valid program.
    """
    problems = []
    live = accumulator_registers(inst, knobs, S, device)
    if tile_given and live > device.vector_registers:
        w = device.registers_per_value(inst.output.type.element.size, S)  # type: ignore[attr-defined]
        problems.append(
            f"tile {knobs['tile']} keeps {live} vector registers live ({live // w} values of "
            f"{S} lanes × {inst.output.type.element}, {w} register(s) each); the device has "  # type: ignore[attr-defined]
            f"{device.vector_registers} of {device.vector_bytes} bytes")
    shape = inst.matmul(bool(knobs.get("swap")))
    if shape is not None and knobs["stage"]:
        if knobs.get("swap"):
            problems.append("stage=true and swap=true cannot be combined")
        elif not can_stage(shape):
            problems.append("stage=true needs a transposed A of static size in global memory")
        elif staged_bytes(shape) > stage_room:
            problems.append(f"stage=true copies op(A) into {staged_bytes(shape)} bytes of local "
                            f"memory; {max(stage_room, 0)} bytes are left by the kernel's allocas "
                            f"(the device has {device.local_memory_size})")
    return problems
