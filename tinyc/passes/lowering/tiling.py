"""Tile shapes and the distribution of tiles over subgroups.

The numbers here are the knobs to tune by measurement; everything else in the
lowering follows from them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tinyc.ir.core import Value
from tinyc.ir.types import ScalarType
from tinyc.passes.lowering.builder import LoweringBuilder, static

VECTOR_BYTES = 64
"""One AVX-512 register. The CPU runtime turns each per-work-item value of a
subgroup into one vector of S lanes, so a value of type T costs
⌈S·size(T)/64⌉ registers."""

ACC_REGISTERS = 8
"""Registers for the accumulator tile. Measured on the CPU device (batched
f32 gemm.n.n): a 16x8 tile beats 16x16 by 1.6x at 16³, and at 64³ 64x2 and
64x4 tiles (8-16 registers) beat 32x8 and 16x16 by 20-50%. More row blocks
with few columns win: each A vector load feeds n FMAs, each B component is a
broadcast, and spills set in early."""

ACC_REGISTERS_GATHERED = 16
"""The accumulator budget when A is read transposed (not staged, see
staging.py): each lane then reads its row of op(A) along a column of A
(vloadn plus register shuffles; before those, a gather per component), the
dominant cost, so a tile spans as many columns as fit (16x16 beat 64x2 by 3x
at 64³ gemm.t.n f32 with gathers) to read each element once per N_t columns."""

MAX_ROW_BLOCKS = 8
"""Row blocks of S rows in one tile, counted in registers per block."""

MIN_COLUMNS = 2
"""n = 1 tiles lose (64x1 was 2x slower than 64x2 at 64³ f32)."""

K_STEP_REGISTERS = 32
"""Bounds K_t by M_t/S·K_t registers of the A tile; 2 <= K_t <= 8 (the K_t
in that range measured within noise; longer steps only grow the IR)."""


@dataclass(frozen=True)
class GemmTiles:
    """Accumulator tile m × n and the K step k of one matmul."""

    m: int
    n: int
    k: int


def registers_per_vector(t: ScalarType, subgroup_size: int) -> int:
    """AVX-512 registers holding one component of a coopmatrix row block."""
    return max(1, -(-t.size * subgroup_size // VECTOR_BYTES))


def choose_gemm_tiles(M: int | None, N: int | None, K: int | None, subgroup_size: int,
                      c_type: ScalarType, a_type: ScalarType,
                      transpose_a: bool = False) -> GemmTiles:
    """Tile sizes for C (M×N, K summed); None marks a size known only at run time.

    Rows go across lanes (coopmatrix layout: lane l holds rows l + S·b), so
    M_t is a number of row blocks of S rows. With A read directly a tile
    takes as many row blocks as the budgets allow (see ACC_REGISTERS); with
    A transposed one block and many columns (ACC_REGISTERS_GATHERED). A
    static size that fits in one tile becomes the tile size itself: no
    bounds checks, the padding rows beyond M are the codegen's. A static
    size that a tile size divides avoids checked edge tiles. A run-time M
    gets at most two blocks, as small problems are the common case.
    """
    S = subgroup_size
    w_c = registers_per_vector(c_type, S)
    if transpose_a:
        max_blocks, budget = 1, ACC_REGISTERS_GATHERED
    else:
        max_blocks, budget = max(1, MAX_ROW_BLOCKS // w_c), ACC_REGISTERS
    if M is None:
        m = min(2, max_blocks) * S
    elif M <= max_blocks * S:
        m = M
    else:
        fitting = [b for b in range(max_blocks, 0, -1) if M % (b * S) == 0]
        m = (fitting[0] if fitting and 2 * fitting[0] >= max_blocks else max_blocks) * S
    blocks = -(-m // S)

    n_max = max(MIN_COLUMNS, budget // (blocks * w_c))
    if N is None:
        n = n_max
    elif N <= n_max:
        n = N
    else:
        lowest = max(MIN_COLUMNS, (n_max + 1) // 2)
        divisors = [d for d in range(n_max, lowest - 1, -1) if N % d == 0]
        n = divisors[0] if divisors else n_max

    w_a = registers_per_vector(a_type, S)
    k_max = max(2, min(8, K_STEP_REGISTERS // (blocks * w_a)))
    k = k_max if K is None else max(1, min(K, k_max))
    return GemmTiles(m, n, k)


def distribute(b: LoweringBuilder, count: Value, subgroup: Value, num_subgroups: int,
               body: Callable[[Value], None], hint: str | None = "tile") -> None:
    """Run `body(t)` for t in [0, count), round-robin over the subgroups.

    With a static count of at most one tile per subgroup the loop becomes an
    `if` (or nothing), so small problems give straight-line code.
    """
    n = static(count)
    if n is not None and n <= num_subgroups:
        if n == num_subgroups:
            body(subgroup)
        elif n > 0:
            with b.if_(b.lt(subgroup, count)) as branch, branch.then():
                body(subgroup)
        return
    with b.for_(subgroup, count, b.int_const(num_subgroups, count.type),
                loop_type=count.type) as (t, _, _):
        if hint is not None:
            b.named(t, hint)
        body(t)
