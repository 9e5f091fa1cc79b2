"""The tuner's cost model: an analytic estimate of a schedule's time per work-group.

It only ranks candidates before any is measured (TVM's auto-scheduler prunes
with a learned model; ours is a roofline of each candidate), so it counts,
per instruction, in units of SIMD instructions on the CPU device:

- **compute**: vector FMAs = row blocks (padding included) · N · K · registers
  per value, two per cycle;
- **loads**: A's row blocks (a gather per element when A is read transposed
  without staging, fewer with wider `vector_width`), one broadcast of B per
  column and k per row tile, two per cycle; time is the larger of the two,
  the bandwidth or the compute bound of the candidate;
- **registers**: values live in the inner loop beyond the register file are
  spilled, a store and a load each per k step;
- **overheads**: loop control per K step (fewer with a larger `k_unroll`),
  C's epilogue per tile, the staging copy and its barrier.

Element-wise and reduction collectives cost their elements over the vector
width plus loop control per step, which larger tiles amortize.
"""

from __future__ import annotations

from typing import Any

from tinyc.ir.instructions import BlasInstruction
from tinyc.target.device_info import DeviceInfo
from tinyc.schedule.defaults import can_stage

FMA_PER_CYCLE = 2
LOADS_PER_CYCLE = 2
LOOP_CYCLES = 4          # compare, branch and induction update of one K step
DYNAMIC_GUESS = 32       # a size known only at run time, for counting


def _size(value: int | None) -> int:
    return DYNAMIC_GUESS if value is None else value


def matmul_cost(inst: BlasInstruction, knobs: dict[str, Any], S: int, device: DeviceInfo) -> float:
    """Estimated cycles of one work-group's matmul (see the module docstring)."""
    shape = inst.matmul(bool(knobs.get("swap")))
    M, N, K = _size(shape.M), _size(shape.N), _size(shape.K)
    rows, cols = knobs["tile"]
    blocks_total = -(-M // S)
    rows = min(rows, blocks_total)
    cols = min(cols, N)
    k_t = max(1, min(knobs["k_unroll"], K))
    w_c = device.registers_per_value(shape.c_type.size, S)
    w_a = device.registers_per_value(shape.a_type.size, S)
    tiles_m = -(-blocks_total // rows)
    tiles_n = -(-N // cols)
    fmas = blocks_total * N * K * w_c
    staged = bool(knobs["stage"]) and can_stage(shape)
    if shape.transpose_a and not staged:
        width = max(1, knobs["vector_width"])
        a_per_block = w_a * (2 + 8 / width)   # per-lane row reads and shuffles
    else:
        a_per_block = w_a
    loads = blocks_total * tiles_n * K * a_per_block + tiles_m * N * K
    cycles = max(fmas / FMA_PER_CYCLE, loads / LOADS_PER_CYCLE)
    live = rows * cols * w_c + rows * w_a * min(k_t, 2) + 1
    spilled = max(0, live - device.vector_registers)
    tiles = tiles_m * tiles_n
    cycles += spilled * 2 * tiles * K / LOADS_PER_CYCLE
    cycles += tiles * (K / k_t) * LOOP_CYCLES
    cycles += tiles * rows * cols * w_c * (8 if knobs.get("swap") else 2)  # epilogue: scale, store
    if staged:
        copy = blocks_total * K * w_a
        cycles += copy * (2 + 8 / max(1, knobs["vector_width"])) + 200   # copy and barrier
    return cycles


def elementwise_cost(inst: BlasInstruction, knobs: dict[str, Any], S: int,
                     device: DeviceInfo) -> float:
    """Elements over the vector width, loop control per step, spills of large tiles."""
    out = inst.output.type
    shape = [_size(None if s < 0 else s) for s in out.shape] or [1]  # type: ignore[attr-defined]
    elements = 1
    for s in shape:
        elements *= s
    rows, cols = knobs["tile"]
    w = device.registers_per_value(out.element.size, S)  # type: ignore[attr-defined]
    vectors = elements / S * w
    per_step = max(1, rows * cols)
    steps = vectors / per_step
    live = per_step * w * 3
    spilled = max(0, live - device.vector_registers)
    k = knobs.get("k_unroll", 1)
    return vectors * 2 + steps * LOOP_CYCLES / max(1, k) + spilled * steps


def instruction_cost(inst: BlasInstruction, knobs: dict[str, Any], S: int,
                     device: DeviceInfo) -> float:
    if inst.matmul() is not None:
        return matmul_cost(inst, knobs, S, device)
    return elementwise_cost(inst, knobs, S, device)
