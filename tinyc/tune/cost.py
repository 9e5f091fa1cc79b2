"""The tuner's cost model: an analytic estimate of a schedule's time per work-group.

It only ranks candidates before any is measured (TVM's auto-scheduler prunes
with a learned model; ours is a roofline of each candidate), so it counts,
per instruction, in units of SIMD instructions on the CPU device:

- **compute**: vector FMAs = row blocks (padding included) · N · K · registers
  per value, two per cycle;
- **loads**: A's row blocks and one broadcast of B per column and k per row
  tile, two per cycle; **shuffles**: a tile whose lanes' rows are contiguous
  (Aᵀ read directly, the staging copy, C's store under `swap`) costs
  `transposed_register_cost` per register (the `transpose` and `vector_width`
  knobs), one per cycle; time is the largest of the three bounds;
- **lines of Bᵀ**: with op(B) = Bᵀ a tile's broadcasts of one k come from one
  cache line, shared by line/columns tiles: each tile fetches it again;
- **registers**: the accumulators, A's registers of two steps and the
  broadcasts of B of one K step (which the CPU compiler hoists to the top of
  an unrolled step: a 2×8 tile spilled at k_unroll 8 and ran 1.5x slower than
  at 2) beyond the register file are spilled, a store and a load each per step;
- **overheads**: loop control per K step (fewer with a larger `k_unroll`),
  C's epilogue per tile, the staging copy and its barrier.

Element-wise and reduction collectives cost their elements over the vector
width plus loop control per step, which larger tiles amortize.
"""

from __future__ import annotations

from typing import Any

from tinyc.ir.instructions import BlasInstruction
from tinyc.target.device_info import DeviceInfo
from tinyc.ir.knobs import MatmulShape
from tinyc.schedule.defaults import can_stage, one_register, shuffled_columns

FMA_PER_CYCLE = 2
LOADS_PER_CYCLE = 2
SHUFFLES_PER_CYCLE = 1
LINE_BYTES = 64
LINE_REFETCH_CYCLES = 4
"""A line of Bᵀ fetched again from the second-level cache for each tile that needs it:
fitted to gemm.n.t 64³ f32, where 64x4 tiles took 0.70-0.75x the time of 64x2."""
LOOP_CYCLES = 4          # compare, branch and induction update of one K step
DYNAMIC_GUESS = 32       # a size known only at run time, for counting


def _size(value: int | None) -> int:
    return DYNAMIC_GUESS if value is None else value


def transposed_register_cost(shape: MatmulShape, knobs: dict[str, Any], S: int,
                             device: DeviceInfo) -> float:
    """Instructions to read (or write) one register of a tile whose lanes' rows are
    contiguous in memory: per-lane vector loads and the vectorizer's packing (measured
    about two instructions per element with vload2, more with gathers), or S loads
    across lanes and a butterfly of shuffles and selects (2·log2(S) per register; far
    more when a value spans several registers, see defaults.one_register)."""
    if shuffled_columns(shape, knobs, S) is not None:
        element = shape.c_type if knobs.get("swap") else shape.a_type
        per_register = 1 + 2 * max(1, S.bit_length() - 1)
        return per_register if one_register(element, S, device) else 50.0 * per_register
    return 24.0 if knobs["vector_width"] <= 1 else 16.0


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
    tiles = tiles_m * tiles_n
    fmas = blocks_total * N * K * w_c
    staged = bool(knobs["stage"]) and can_stage(shape)
    transposed = transposed_register_cost(shape, knobs, S, device)
    a_registers = blocks_total * tiles_n * K * w_a
    shuffles = 0.0
    if shape.transpose_a and not staged:
        shuffles += a_registers * transposed
    loads = a_registers + tiles_m * N * K          # A's registers, one broadcast per B element
    cycles = max(fmas / FMA_PER_CYCLE, loads / LOADS_PER_CYCLE, shuffles / SHUFFLES_PER_CYCLE)
    if shape.transpose_b:   # a line of Bᵀ (one k, consecutive columns) serves line/cols tiles
        line = max(1, LINE_BYTES // shape.c_type.size)
        cycles += tiles * K * max(0.0, 1 - cols / line) * LINE_REFETCH_CYCLES
    # live in the K loop: the accumulators, A's registers of two steps and the broadcasts of
    # B, which the CPU compiler hoists to the top of an unrolled K step
    live = rows * cols * w_c + rows * w_a * min(k_t, 2) + k_t * cols * w_c
    spilled = max(0, live - device.vector_registers)
    cycles += spilled * 2 * tiles * K / k_t / LOADS_PER_CYCLE
    cycles += tiles * (K / k_t) * LOOP_CYCLES
    stores = tiles * rows * cols * w_c
    cycles += stores * (transposed / SHUFFLES_PER_CYCLE if knobs.get("swap") else 2)  # epilogue
    if staged:
        copied = blocks_total * K * w_a
        cycles += copied * (transposed / SHUFFLES_PER_CYCLE + 1) + 200   # copy and barrier
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
