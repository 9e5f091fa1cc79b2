"""Staging of a transposed matmul operand in local memory.

The coopmatrix layout puts rows across lanes, so a row block of op(A) = Aᵀ
is a strided gather per component in a column-major A. The matmul of a
`.t` operand with static sizes therefore copies op(A) once into local
memory, tile by tile (each lane loads one contiguous column of A, see
coopmatrix.py, and stores it as a row of the copy, so stores are coalesced),
and multiplies the copy as a `.n` operand:

    %a_t = alloca : memref<T x M x K, local>
    parallel { for t { %x = cooperative_matrix_load.t %A[k0, m0]
                       cooperative_matrix_store %x, %a_t[m0, k0] } }
    barrier.local
    parallel { ... the matmul, reading %a_t ... }
    lifetime_stop %a_t

The barrier makes the copy visible to every subgroup; the local-memory pass
places the alloca and adds the barriers that reusing its bytes needs.
"""

from __future__ import annotations

from tinyc.ir.core import Function, Value
from tinyc.ir.instructions import Alloca, CheckedFlag, LifetimeStop
from tinyc.ir.types import DYNAMIC, AddressSpace, MatrixUse, MemrefType, coopmatrix_type, memref_type
from tinyc.passes.local_memory import alloca_size
from tinyc.passes.lowering.builder import LoweringBuilder
from tinyc.passes.lowering.context import LoweringContext
from tinyc.passes.lowering.tiling import distribute

STAGE_MAX_BYTES = 32768
"""Largest staged copy. Measured on batched gemm.t.n (f32 and f64, 16×16 to
64×64, all within this bound, where the direct tiling reads op(A) for 2-8
tile columns): staging was 1.2-1.8x as fast as reading op(A) directly."""

COPY_COLUMNS = 8
"""Columns of op(A) per copy tile (one lane copies that many contiguous
elements of its column of A). Measured against 16 (f32 and f64, 16-64):
4-12% faster, 16 f64 columns are 32 registers per tile; 2 and 4 were mixed."""


def should_stage(ctx: LoweringContext, A: Value, transpose: bool, column_tiles: int | None) -> bool:
    """Whether to stage op(A) = Aᵀ: static sizes, global memory, a bounded copy, reuse.

    `column_tiles` is the number of tile columns the matmul would read op(A)
    for without staging (None when known only at run time). With one, every
    element is read once and the copy only adds work (measured 1.0-1.2x
    slower on 8×8 f32); with more, staging wins (see STAGE_MAX_BYTES).
    """
    t = A.type
    if not transpose or not isinstance(t, MemrefType) or t.space is not AddressSpace.GLOBAL:
        return False
    if DYNAMIC in t.shape or 0 in t.shape or column_tiles == 1:
        return False
    size = t.shape[0] * t.shape[1] * t.element.size
    return size <= STAGE_MAX_BYTES and _allocas_bytes(ctx.fn) + size <= ctx.local_memory_size


def _allocas_bytes(fn: Function) -> int:
    """Local memory of every alloca of the function, as if all were live at once."""
    return sum(alloca_size(inst) for inst in fn.walk() if isinstance(inst, Alloca))


def stage_transposed(ctx: LoweringContext, b: LoweringBuilder, A: Value) -> Value:
    """The alloca holding Aᵀ, copied and made visible to the work-group."""
    t = A.type
    assert isinstance(t, MemrefType)
    K, M = t.shape
    copy = b.named(b.insert(Alloca(memref_type(t.element, (M, K), None, AddressSpace.LOCAL))).result,
                   "a_t")
    S, nsg = ctx.subgroup_size, ctx.num_subgroups
    rows, cols = min(M, S), min(K, COPY_COLUMNS)
    tiles_m, tiles_k = -(-M // rows), -(-K // cols)
    with b.parallel():
        sg = b.subgroup_id(nsg)

        def tile(i: Value) -> None:
            m0 = b.named(b.imul(b.irem(i, tiles_m), rows), "m0")
            k0 = b.named(b.imul(b.idiv(i, tiles_m), cols), "k0")
            edge_m, edge_k = M % rows != 0, K % cols != 0
            if not (edge_m or edge_k):
                _copy_tile(b, A, copy, m0, k0, rows, cols, CheckedFlag.NONE)
                return
            conditions = []
            if edge_m:
                conditions.append(b.le(b.iadd(m0, rows), b.int_const(M)))
            if edge_k:
                conditions.append(b.le(b.iadd(k0, cols), b.int_const(K)))
            with b.if_(b.named(b.all_of(conditions), "full_tile")) as branch:
                with branch.then():
                    _copy_tile(b, A, copy, m0, k0, rows, cols, CheckedFlag.NONE)
                with branch.otherwise():
                    flag = {(True, False): CheckedFlag.ROWS, (False, True): CheckedFlag.COLS,
                            (True, True): CheckedFlag.BOTH}[(edge_m, edge_k)]
                    _copy_tile(b, A, copy, m0, k0, rows, cols, flag)

        distribute(b, b.int_const(tiles_m * tiles_k), sg, nsg, tile)
    b.barrier(local_fence=True)
    return copy


def _copy_tile(b: LoweringBuilder, A: Value, copy: Value, m0: Value, k0: Value, rows: int,
               cols: int, flag: CheckedFlag) -> None:
    """copy[m0:m0+rows, k0:k0+cols] := A[k0:, m0:]ᵀ (the checked parts only where in bounds)."""
    tile_type = coopmatrix_type(A.type.element, rows, cols, MatrixUse.A)  # type: ignore[attr-defined]
    x = b.named(b.coop_load(A, k0, m0, tile_type, True, flag), "a")
    b.coop_store(x, copy, m0, k0, flag)


def end_staging(b: LoweringBuilder, copy: Value) -> None:
    """Free the copy's local memory after the matmul."""
    b.insert(LifetimeStop(copy))
