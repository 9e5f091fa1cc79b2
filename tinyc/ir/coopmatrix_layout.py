"""How a coopmatrix is spread over the work-items of a subgroup of size S, and the rules on S.

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


# ---------------------------------------------------------------- rules on the subgroup size

def known_subgroup_size(ctx: "VerifyContext") -> int | None:
    """The function's `subgroup_size` attribute when it is a valid size, else None."""
    fn = ctx.function
    sgs = fn.attrs.get("subgroup_size") if fn is not None else None
    valid = isinstance(sgs, int) and not isinstance(sgs, bool) and sgs in SUBGROUP_SIZES
    return sgs if valid else None


def newest_rules(ctx: "VerifyContext") -> bool:
    """Whether the file is checked by the newest language's rules (see docs/newest.md)."""
    return getattr(ctx, "std", None) == "newest"


def rows_multiple_problem(rows: int, what: str, subgroup_size: int | None) -> str | None:
    """Newest language: rows of mul_add / reduce operands are a multiple of the subgroup size.

    Without a `subgroup_size` attribute the compiler picks a size dividing every
    matrix_a/acc row count it can, so only rows no supported size divides fail.
    """
    if subgroup_size is not None:
        if rows % subgroup_size:
            return (f"the rows of {what} ({rows}) must be a multiple of the subgroup size "
                    f"({subgroup_size}) in the newest language")
        return None
    if all(rows % s for s in SUBGROUP_SIZES):
        return (f"the rows of {what} ({rows}) must be a multiple of the subgroup size in the "
                f"newest language, and no supported subgroup size "
                f"({', '.join(map(str, SUBGROUP_SIZES))}) divides {rows}")
    return None
