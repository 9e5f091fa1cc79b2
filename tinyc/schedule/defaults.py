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
from tinyc.ir.knobs import TRANSPOSE_LOADS, TRANSPOSE_SHUFFLES, MatmulShape
from tinyc.ir.types import DYNAMIC, AddressSpace, ScalarType
from tinyc.target.device_info import DeviceInfo

ACC_REGISTERS = 16
"""Registers for the accumulator tile (of 32). Measured on the CPU device
(batched f32 gemm.n.n): a 16x8 tile beats 16x16 by 1.6x at 16³, and at 64³
64x2 and 64x4 tiles (8-16 registers) beat 32x8 and 16x16 by 20-50%. More
row blocks with few columns win: each A vector load feeds n FMAs, each B
component is a broadcast, and spills set in early. Tiles of all the rows
(up to MAX_ROW_BLOCKS) then take as many columns as 16 registers hold: on
AMD EPYC (AVX-512), gemm.t.t 64³ f32 with 64x4 tiles took 0.87x the time of
64x2, f64 with 64x2 (8 lanes) 0.77x that of 32x4; gemm.n.n alike within noise."""

MAX_COLUMNS = 8
"""Columns of a tile at most (but where Aᵀ is gathered): 16x16 tiles took 1.02-1.06x
the time of 16x8 at 16³ (f32 gemm.n.n and gemm.n.t)."""

TRANSPOSED_B_COLUMNS = 4
"""Columns a tile takes at least (as the accumulator budget allows, up to
TRANSPOSED_B_REGISTERS) when op(B) = Bᵀ is read: a tile's broadcasts of one k
then come from one cache line of B, which fewer tiles share, so B's lines need
not stay in the first-level cache beside A's. Measured on batched gemm.n.t 64³
(AVX-512, AMD EPYC): 64x4 tiles 0.70-0.75x the time of 64x2 (f32); f64 likewise."""

TRANSPOSED_B_REGISTERS = 16
"""The accumulator budget (of 32) of a tile that reads op(B) = Bᵀ."""

K_STEP_BROADCASTS = 16
"""Registers (of 32) for the broadcasts of B of one K step (k_unroll · columns), which
the CPU compiler hoists to the top of the unrolled step: beyond the register file
they spill (a 32x8 f32 tile at k_unroll 8, 64 broadcasts, ran 1.5x slower than at
2; 64x4 at k_unroll 8 1.06x slower than at 2 or 4). A K that fits in one step of
the usual bound stays one step (no loop): the fused kernel's two K = 8 products
ran 1.04-1.09x slower as loops of k_unroll 2."""

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


SWAP_SHUFFLE_MAX_K = 32
"""Under `swap`, C's store by shuffles needs tiles of S columns and one row block: 16
broadcasts per 16 FMAs in the K loop. That pays where the store is a large part of the
work: gemm.t.t 32³ ran 0.82x (f32) the time of 64x4-type tiles stored by vstoren, but
at 64³ those tiles were 0.83-0.91x the time of the shuffled ones (f32 and f64)."""

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
    transpose = default_transpose(shape, S, stage, swap, device)
    if swap and transpose == TRANSPOSE_SHUFFLES:
        if (K is not None and K <= SWAP_SHUFFLE_MAX_K
                and S * w_c <= _scaled(TRANSPOSED_B_REGISTERS, device)):
            # C's store is S×S blocks transposed in registers: one block of S columns per tile
            return {"tile": [1, S], "k_unroll": 1, "stage": False,
                    "vector_width": _vector_width(shape, swap), "transpose": transpose}
        transpose = TRANSPOSE_LOADS
    if shape.transpose_a and not stage and not swap:
        max_blocks, budget = 1, _scaled(ACC_REGISTERS_GATHERED, device)
    elif shape.transpose_b and (N is None or N >= TRANSPOSED_B_COLUMNS):
        budget = _scaled(TRANSPOSED_B_REGISTERS, device)
        max_blocks = max(1, min(_scaled(MAX_ROW_BLOCKS, device) // w_c,
                                budget // (w_c * TRANSPOSED_B_COLUMNS)))
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
    if not (shape.transpose_a and not stage and not swap):
        n_max = min(n_max, MAX_COLUMNS)
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
    gathered = shape.transpose_a and not stage and not swap   # A's reads set the K step
    straight = K is not None and K <= k_max   # one step, no K loop: leave it so
    while (not gathered and not straight and k_max > 1
           and k_max * n * w_c > _scaled(K_STEP_BROADCASTS, device)):
        k_max //= 2
    k = k_max if K is None else max(1, min(K, k_max))
    return {"tile": [blocks, n], "k_unroll": k, "stage": stage,
            "vector_width": _vector_width(shape, swap), "transpose": transpose}


def _vector_width(shape: MatmulShape, swap: bool) -> int:
    width = max(2, (SWAP_STORE_BYTES if swap else VECTOR_LOAD_BYTES) // shape.a_type.size)
    return max(v for v in (1, 2, 3, 4, 8, 16) if v <= width)


def transposes_in_registers(element: ScalarType, columns: int | None, S: int) -> bool:
    """Whether a tile of `columns` columns of `element` can be transposed by shuffles
    (tinyc/spirv/codegen/coopmatrix_transpose.py: S×S blocks of 4- or 8-byte reals)."""
    return (not element.is_complex and element.size in (4, 8) and S > 1
            and (columns is None or columns >= S))


def shuffled_columns(shape: MatmulShape, knobs: dict[str, Any], S: int) -> int | None:
    """How many columns of the tile a lane reads contiguously (op(A) = Aᵀ's K step, the
    staging copy's S, Cᵀ's columns under `swap`) — when the `transpose` knob's shuffles
    apply to them (else None: the knob makes no difference)."""
    if knobs.get("transpose") != TRANSPOSE_SHUFFLES:
        return None
    if knobs.get("swap"):
        element, columns = shape.c_type, knobs["tile"][1]
    elif shape.transpose_a:
        element = shape.a_type
        columns = min(S, shape.K or S) if knobs.get("stage") else knobs["k_unroll"]
    else:
        return None
    return columns if transposes_in_registers(element, columns, S) else None


def one_register(element: ScalarType, S: int, device: DeviceInfo) -> bool:
    """Whether a value of S lanes of `element` fills at most one vector register: the CPU
    compiler turns the shuffles of such values into in-register permutations (gemm.t.n f32 at
    32 lanes, two registers per value, ran 57x slower transposed by shuffles)."""
    return S * element.size <= device.vector_bytes


def default_transpose(shape: MatmulShape, S: int, stage: bool, swap: bool,
                      device: DeviceInfo) -> str:
    """"shuffles" for the staging copy of a transposed A and for C's store under `swap`
    where a value is one register; "loads" elsewhere (op(A) = Aᵀ read directly would need
    K steps of S columns).

    Measured on batched gemm.t.n and gemm.t.t (32³ and 64³, f32 and f64, AMD EPYC
    AVX-512): the staging copy by shuffles 0.70-0.90x the time of per-lane vload2
    reads; gemm.t.t with C stored by shuffles from 16x16 (f32) or 8x8 (f64) tiles
    0.69-0.96x the time of vstore4 rows."""
    element, columns = (shape.c_type, shape.N) if swap else (shape.a_type, shape.K)
    if (swap or stage) and transposes_in_registers(element, columns, S) \
            and one_register(element, S, device):
        return TRANSPOSE_SHUFFLES
    return TRANSPOSE_LOADS


def default_swap(inst: BlasInstruction, S: int, device: DeviceInfo, stage_room: int) -> bool:
    """gemm.t.t computes Cᵀ = B·A (both operands read as `.n`) and stores it transposed —
    by shuffles from tiles of S columns where K <= SWAP_SHUFFLE_MAX_K — unless Aᵀ can be
    staged by shuffles at a larger K: then it is staged as for gemm.t.n (Bᵀ read like
    gemm.n.t). Measured on gemm.t.t f32 64³: staged 64x4 tiles 0.87-0.88x the time of
    swapped ones stored by vstoren (f64 alike within noise)."""
    plain = inst.matmul()
    if not ("swap" in inst.knobs and plain is not None and plain.transpose_a and plain.transpose_b):
        return False
    swapped = inst.matmul(True)
    w_c = device.registers_per_value(swapped.c_type.size, S)
    if (default_transpose(swapped, S, False, True, device) == TRANSPOSE_SHUFFLES
            and swapped.K is not None and swapped.K <= SWAP_SHUFFLE_MAX_K
            and S * w_c <= _scaled(TRANSPOSED_B_REGISTERS, device)):
        return True
    stageable = (can_stage(plain) and staged_bytes(plain) <= min(STAGE_MAX_BYTES, stage_room)
                 and default_transpose(plain, S, True, False, device) == TRANSPOSE_SHUFFLES)
    return not stageable


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
