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

from typing import Any

from tinyc.ir.core import Instruction, Value
from tinyc.ir.instructions import Alloca, CheckedFlag, LifetimeStop
from tinyc.ir.types import AddressSpace, MatrixUse, MemrefType, coopmatrix_type, memref_type
from tinyc.passes.lowering.lowering_builder import LoweringBuilder
from tinyc.passes.lowering.context import LoweringContext
from tinyc.passes.lowering.tiling import distribute
from tinyc.ir.knobs import TRANSPOSE_SHUFFLES

COPY_COLUMNS = 8
"""Columns of op(A) per copy tile (one lane copies that many contiguous
elements of its column of A). Measured against 16 (f32 and f64, 16-64):
4-12% faster, 16 f64 columns are 32 registers per tile; 2 and 4 were mixed."""


def stage_transposed(ctx: LoweringContext, b: LoweringBuilder, A: Value,
                     hints: dict[str, Any]) -> Value:
    """The alloca holding Aᵀ, copied and made visible to the work-group.

    (Whether to stage is the `stage` knob: tinyc/schedule/defaults.py.)
    """
    t = A.type
    assert isinstance(t, MemrefType)
    K, M = t.shape
    copy = b.named(b.insert(Alloca(memref_type(t.element, (M, K), None, AddressSpace.LOCAL))).result,
                   "a_t")
    S, nsg = ctx.subgroup_size, ctx.num_subgroups
    columns = S if hints.get("transpose") == TRANSPOSE_SHUFFLES else COPY_COLUMNS
    rows, cols = min(M, S), min(K, columns)
    tiles_m, tiles_k = -(-M // rows), -(-K // cols)
    with b.parallel():
        sg = b.subgroup_id(nsg)

        def tile(i: Value) -> None:
            m0 = b.named(b.imul(b.irem(i, tiles_m), rows), "m0")
            k0 = b.named(b.imul(b.idiv(i, tiles_m), cols), "k0")
            edge_m, edge_k = M % rows != 0, K % cols != 0
            if not (edge_m or edge_k):
                _copy_tile(b, A, copy, m0, k0, rows, cols, CheckedFlag.NONE, hints)
                return
            conditions = []
            if edge_m:
                conditions.append(b.le(b.iadd(m0, rows), b.int_const(M)))
            if edge_k:
                conditions.append(b.le(b.iadd(k0, cols), b.int_const(K)))
            with b.if_(b.named(b.all_of(conditions), "full_tile")) as branch:
                with branch.then():
                    _copy_tile(b, A, copy, m0, k0, rows, cols, CheckedFlag.NONE, hints)
                with branch.otherwise():
                    flag = {(True, False): CheckedFlag.ROWS, (False, True): CheckedFlag.COLS,
                            (True, True): CheckedFlag.BOTH}[(edge_m, edge_k)]
                    _copy_tile(b, A, copy, m0, k0, rows, cols, flag, hints)

        distribute(b, b.int_const(tiles_m * tiles_k), sg, nsg, tile)
    b.barrier(local_fence=True)
    return copy


def _copy_tile(b: LoweringBuilder, A: Value, copy: Value, m0: Value, k0: Value, rows: int,
               cols: int, flag: CheckedFlag, hints: dict[str, Any]) -> None:
    """copy[m0:m0+rows, k0:k0+cols] := A[k0:, m0:]ᵀ (the checked parts only where in bounds)."""
    tile_type = coopmatrix_type(A.type.element, rows, cols, MatrixUse.A)  # type: ignore[attr-defined]
    x = b.named(b.coop_load(A, k0, m0, tile_type, True, flag), "a")
    assert isinstance(x.owner, Instruction)
    x.owner.attrs.update(hints)
    b.coop_store(x, copy, m0, k0, flag)


def end_staging(b: LoweringBuilder, copy: Value) -> None:
    """Free the copy's local memory after the matmul."""
    b.insert(LifetimeStop(copy))
