"""Transposed coopmatrix loads and stores through a register transpose (the `transpose` knob).

A `.t` load of a column-major memref gives each lane a row that is contiguous
in memory. Read per lane (`vloadn`), the CPU vectorizer has to gather the
lanes' rows into registers one narrow piece at a time (measured about two
instructions per element). With `transpose="shuffles"` every S×S block of
the tile is read instead with S loads that are contiguous *across* lanes
(lane l reads column l of the block's rows), and the block is transposed in
registers by a butterfly of subgroup shuffles (`OpGroupNonUniformShuffleXor`
with constant masks and selects on the lane id), which the CPU compiler turns
into a few in-register permutations per register. A store is the mirror
image: transpose, then S stores contiguous across lanes.

Only full S×S column blocks of 4- or 8-byte real elements take this path;
the remaining columns of a tile keep the per-lane vector loads. Padding rows
(≥ R) are never read or written: their registers are zero.
"""

from __future__ import annotations

from tinyc.ir.types import CoopMatrixType, MatrixUse
from tinyc.spirv.codegen.context import Ctx, IndexLike, MemrefDesc
from tinyc.spirv.codegen.memref import element_address, load_element, store_element
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import Op, Scope
from tinyc.ir.instructions import StoreFlag
from tinyc.ir.knobs import TRANSPOSE_SHUFFLES

def applies(ctx: Ctx, t: CoopMatrixType, hint: object) -> bool:
    """Whether a contiguous-row access of tile type `t` uses the register transpose."""
    S = ctx.subgroup_size
    return (hint == TRANSPOSE_SHUFFLES and t.use is not MatrixUse.B and t.cols >= S > 1
            and not t.component.is_complex and t.component.size in (4, 8))


def butterfly(ctx: Ctx, ty: Id, x: list[Id]) -> list[Id]:
    """Transpose S registers of S lanes: lane l of result r is lane r of x[l].

    log2(S) stages; stage s swaps, between registers c and c|s, the halves of
    the lanes whose bit s differs (two shuffles by xor s and two selects).
    """
    S = len(x)
    out = list(x)
    scope = ctx.scope(Scope.Subgroup)
    s = 1
    while s < S:
        upper = ctx.op(Op.INotEqual, ctx.bool,
                       ctx.op(Op.BitwiseAnd, ctx.i32, ctx.lane_id(), ctx.const32(s)), ctx.const32(0))
        for c in range(S):
            if c & s:
                continue
            a, b = out[c], out[c | s]
            a_swapped = ctx.op(Op.GroupNonUniformShuffleXor, ty, scope, a, ctx.const32(s))
            b_swapped = ctx.op(Op.GroupNonUniformShuffleXor, ty, scope, b, ctx.const32(s))
            out[c] = ctx.op(Op.Select, ty, upper, b_swapped, a)
            out[c | s] = ctx.op(Op.Select, ty, upper, b, a_swapped)
        s <<= 1
    return out


def _position(ctx: Ctx, row_mode: int, col_mode: int, row: IndexLike,
              col: IndexLike) -> list[IndexLike]:
    idx: list[IndexLike] = [0, 0]
    idx[row_mode], idx[col_mode] = row, col
    return idx


def load_block_rows(ctx: Ctx, desc: MemrefDesc, ty: Id, zero: Id, t: CoopMatrixType, block: int,
                    row_mode: int, col_mode: int, row_base: IndexLike,
                    col_base: IndexLike) -> list[Id]:
    """The components of row block `block` for the tile's full S-column blocks.

    Lane l reads column l of each of the S rows (contiguous across lanes),
    then the S registers are transposed so that lane l holds row block·S + l.
    """
    S = ctx.subgroup_size
    out: list[Id] = []
    for jb in range(t.cols // S):
        column = ctx.iadd(ctx.iadd(col_base, jb * S), ctx.lane_id64())
        rows = []
        for i in range(S):
            r = block * S + i
            if r >= t.rows:  # padding: nothing to read
                rows.append(zero)
                continue
            at = _position(ctx, row_mode, col_mode, ctx.iadd(row_base, r), column)
            rows.append(load_element(ctx, desc, element_address(ctx, desc, at)))
        out += butterfly(ctx, ty, rows)
    return out


def store_block_rows(ctx: Ctx, desc: MemrefDesc, ty: Id, t: CoopMatrixType, block: int,
                     values: list[Id], row_mode: int, col_mode: int, row_base: IndexLike,
                     col_base: IndexLike) -> None:
    """Store row block `block`'s full S-column blocks (`values`: the block's components)."""
    S = ctx.subgroup_size
    for jb in range(t.cols // S):
        rows = butterfly(ctx, ty, values[jb * S:(jb + 1) * S])
        column = ctx.iadd(ctx.iadd(col_base, jb * S), ctx.lane_id64())
        for i in range(S):
            r = block * S + i
            if r >= t.rows:
                continue
            at = _position(ctx, row_mode, col_mode, ctx.iadd(row_base, r), column)
            store_element(ctx, desc, element_address(ctx, desc, at), rows[i], StoreFlag.NONE)
