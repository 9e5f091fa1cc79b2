"""Default knob values: the heuristics used where a schedule leaves a knob unset.

The shapes come from the instructions (`matmul()`, tinyc/ir/knobs.py); the
defaults of the element-wise and reduction collectives are fixed on their
classes (`fixed_defaults`). The numbers were measured on the CPU device (RUNTIME-NOTES: an AVX-512
machine, 32 vector registers of 64 bytes); register budgets scale with the
device's register file (`DeviceInfo.vector_registers`), so an AVX2 machine
(16 registers of 32 bytes) gets tiles half as large in registers. The
autotuner (tinyc/tune/) measures instead of guessing; these are what an
untuned compile uses.
"""

from __future__ import annotations

from typing import Any

from tinyc.ir.instructions import BlasInstruction
from tinyc.ir.knobs import MatmulShape
from tinyc.ir.types import DYNAMIC, AddressSpace
from tinyc.target.device_info import DeviceInfo

ACC_REGISTERS = 8
"""Registers for the accumulator tile (of 32). Measured on the CPU device
(batched f32 gemm.n.n): a 16x8 tile beats 16x16 by 1.6x at 16³, and at 64³
64x2 and 64x4 tiles (8-16 registers) beat 32x8 and 16x16 by 20-50%. More
row blocks with few columns win: each A vector load feeds n FMAs, each B
component is a broadcast, and spills set in early."""

ACC_REGISTERS_GATHERED = 16
"""The accumulator budget (of 32) when A is read transposed and not staged:
each lane then reads its row of op(A) along a column of A (vloadn plus
register shuffles), the dominant cost, so a tile spans as many columns as fit
(16x16 beat 64x2 by 3x at 64³ gemm.t.n f32 with gathers)."""

MAX_ROW_BLOCKS = 8
"""Row blocks of S rows in one tile (of 32 registers), counted in registers per block."""

MIN_COLUMNS = 2
"""n = 1 tiles lose (64x1 was 2x slower than 64x2 at 64³ f32)."""

K_STEP_REGISTERS = 32
"""Bounds K_t by M_t/S·K_t registers of the A tile; 2 <= K_t <= 8 (the K_t
in that range measured within noise; longer steps only grow the IR)."""

STAGE_MAX_BYTES = 32768
"""Largest staged copy of op(A) = Aᵀ. Measured on batched gemm.t.n (f32 and
f64, 16×16 to 64×64, all within this bound, where the direct tiling reads
op(A) for 2-8 tile columns): staging was 1.2-1.8x as fast as reading op(A)
directly."""

VECTOR_LOAD_BYTES = 8
"""Bytes per vector load where a lane's row is contiguous (at least 2
components). The CPU vectorizer turns a per-lane `vloadn` into contiguous
loads plus register shuffles, where separate per-lane loads become one gather
per component. Measured on batched gemm.t.n (8-64, f32 and f64, rows of 8
or 16 components): 2 components per vloadn beat 4 and 8 by 10-40% and the
gathers by 1.3-2.3x."""


def _scaled(registers: int, device: DeviceInfo) -> int:
    """A budget measured with 32 registers, for this device's register file."""
    return max(1, registers * device.vector_registers // 32)


SWAP_STORE_BYTES = 16
"""With `swap` the product's rows are C's columns, so each lane stores its row of a
tile into one column of C: a per-lane vector store (vstoren) of the tile's
columns, scattered across lanes. One row block and 4 f32 columns per tile,
16-byte stores: measured on gemm.t.t f32 64³ (AVX2), 15% faster than the
tile of `.n.n` ([2, 2], 8-byte stores) and within 10% of gemm.n.n itself."""


def matmul_defaults(shape: MatmulShape, S: int, device: DeviceInfo, stage_room: int,
                    stage: bool | None = None, swap: bool = False) -> dict[str, Any]:
    """tile, k_unroll, stage and vector_width of a matmul (see the budgets above).

    Rows go across lanes (coopmatrix layout: lane l holds rows l + S·b), so
    the tile's rows are a number of row blocks of S rows. With A read
    directly a tile takes as many row blocks as the budgets allow; with A
    transposed and unstaged one block and many columns. A static size that
    fits in one tile becomes the tile size itself (no bounds checks); a static
    size that a tile size divides avoids edge tiles. A run-time M gets at most
    two blocks, as small problems are the common case. `stage_room` is the
    local memory left for a staged copy; `stage` fixes the staging decision
    (the tile depends on it).
    """
    M, N, K = shape.M, shape.N, shape.K
    w_c = device.registers_per_value(shape.c_type.size, S)
    if stage is None:
        stage = _should_stage(shape, S, device, stage_room)
    if swap:
        max_blocks, budget = 1, max(4 * w_c, _scaled(ACC_REGISTERS, device))
    elif shape.transpose_a and not stage:
        max_blocks, budget = 1, _scaled(ACC_REGISTERS_GATHERED, device)
    else:
        max_blocks = max(1, _scaled(MAX_ROW_BLOCKS, device) // w_c)
        budget = _scaled(ACC_REGISTERS, device)
    if M is None:
        blocks = min(2, max_blocks)
    elif M <= max_blocks * S:
        blocks = -(-M // S)
    else:
        fitting = [b for b in range(max_blocks, 0, -1) if M % (b * S) == 0]
        blocks = fitting[0] if fitting and 2 * fitting[0] >= max_blocks else max_blocks

    n_max = max(MIN_COLUMNS, budget // (blocks * w_c))
    if N is None:
        n = n_max
    elif N <= n_max:
        n = N
    else:
        lowest = max(MIN_COLUMNS, (n_max + 1) // 2)
        divisors = [d for d in range(n_max, lowest - 1, -1) if N % d == 0]
        n = divisors[0] if divisors else n_max

    w_a = device.registers_per_value(shape.a_type.size, S)
    k_max = max(2, min(8, _scaled(K_STEP_REGISTERS, device) // (blocks * w_a)))
    k = k_max if K is None else max(1, min(K, k_max))
    width = max(2, (SWAP_STORE_BYTES if swap else VECTOR_LOAD_BYTES) // shape.a_type.size)
    return {"tile": [blocks, n], "k_unroll": k, "stage": stage,
            "vector_width": max(v for v in (1, 2, 3, 4, 8, 16) if v <= width)}


def default_swap(inst: BlasInstruction) -> bool:
    """gemm.t.t computes Cᵀ = B·A (both operands read as `.n`) and stores it transposed:
    no staging copy, no gathers; only C's store is per-lane vectors (vstoren)."""
    shape = inst.matmul()
    return "swap" in inst.knobs and shape is not None and shape.transpose_a and shape.transpose_b


def can_stage(shape: MatmulShape) -> bool:
    """Staging applies to a transposed A of static size in global memory."""
    a = shape.a
    return (shape.transpose_a and a.space is AddressSpace.GLOBAL and DYNAMIC not in a.shape
            and 0 not in a.shape and a.order == 2)


def staged_bytes(shape: MatmulShape) -> int:
    return shape.a.shape[0] * shape.a.shape[1] * shape.a.element.size


def _should_stage(shape: MatmulShape, S: int, device: DeviceInfo, room: int) -> bool:
    """Stage a transposed A when several tile columns would read it (reuse) and it fits.

    With one tile column every element is read once and the copy only adds
    work (measured 1.0-1.2x slower on 8×8 f32); with more, staging wins (see
    STAGE_MAX_BYTES). The column count is that of the unstaged tiling.
    """
    if not can_stage(shape):
        return False
    size = staged_bytes(shape)
    if size > STAGE_MAX_BYTES or size > room:
        return False
    unstaged_columns = max(MIN_COLUMNS, _scaled(ACC_REGISTERS_GATHERED, device)
                           // device.registers_per_value(shape.c_type.size, S))
    N = shape.N
    columns = unstaged_columns if N is None or N > unstaged_columns else N
    return N is None or -(-N // columns) > 1
