"""How a coopmatrix is spread over the work-items of a subgroup of size S.

The spec leaves the layout to the implementation; `cooperative_matrix_extract`
and `_insert` address a work-item's own vector of components, so the layout
is visible to programs and defined here once (codegen, the verifier and the
reference interpreter read it):

- matrix_a and matrix_acc, R×C: work-item l holds rows l + S·b for
  b < ceil(R/S), every column; component b·C + j is row l + S·b, column j.
  Rows ≥ R are padding (no matrix entry).
- matrix_b, R×C: every work-item holds all R·C entries; component i·C + j is
  row i, column j (the CPU keeps these uniform values scalar).

For matrix_a/acc with R a multiple of S this is the reference compiler's
layout too (docs/dev/coopmatrix_layout.rst there, for 32-bit components).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinyc.ir.attr_checks import SUBGROUP_SIZES
from tinyc.ir.types import CoopMatrixType, MatrixUse

if TYPE_CHECKING:
    from tinyc.ir.verifier import VerifyContext


def row_blocks(t: CoopMatrixType, subgroup_size: int) -> int:
    """Rows a work-item holds: ceil(R/S) for matrix_a/acc, all R for matrix_b."""
    if t.use is MatrixUse.B:
        return t.rows
    return -(-t.rows // subgroup_size)


def vector_length(t: CoopMatrixType, subgroup_size: int) -> int:
    """Components each work-item holds (the range of extract/insert indices)."""
    return row_blocks(t, subgroup_size) * t.cols


def component_position(t: CoopMatrixType, subgroup_size: int, lane: int, k: int) -> tuple[int, int]:
    """(row, column) of component k of work-item `lane`; row ≥ R is padding."""
    block, col = divmod(k, t.cols)
    if t.use is MatrixUse.B:
        return block, col
    return lane + subgroup_size * block, col


# ---------------------------------------------------------------- the subgroup size a check knows

def known_subgroup_size(ctx: "VerifyContext") -> int | None:
    """The function's `subgroup_size` attribute when it is a valid size, else None."""
    fn = ctx.function
    sgs = fn.attrs.get("subgroup_size") if fn is not None else None
    valid = isinstance(sgs, int) and not isinstance(sgs, bool) and sgs in SUBGROUP_SIZES
    return sgs if valid else None
