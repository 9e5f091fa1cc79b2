"""Schedule knobs as the instructions declare them: names, ranges and the tuner's space.

A schedule says *how* a kernel computes, never *what*: any value in a knob's
range gives the same results (bit for bit where the order of the arithmetic
stays the same: a class lists the knobs that change it in `order_changing`).
Each collective class declares its knobs in its body (`knobs`, built from
the pieces here), the defaults that do not depend on shapes
(`fixed_defaults`) and, for the products, the matmul its lowering computes
(`matmul()` -> MatmulShape), from which tinyc/schedule/defaults.py derives
the rest. Functions have the two knobs of FUNCTION_KNOBS.

The tuner's search space is declared next to each knob (`space`), as
Triton's `autotune` lists its configurations: values inside the range worth
measuring. docs/schedules.md documents every knob (tinyc.schedule.knobs
prints the table from the classes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tinyc.ir.attr_checks import SUBGROUP_SIZES, attr_text, is_int_attr

if TYPE_CHECKING:
    from tinyc.ir.types import MemrefType, ScalarType


@dataclass(frozen=True)
class IntRange:
    """Integers lo..hi (inclusive)."""

    lo: int
    hi: int

    def problem(self, value: Any) -> str | None:
        if not is_int_attr(value):
            return f"must be an integer, got {attr_text(value)}"
        if not self.lo <= value <= self.hi:
            return f"must lie in {self.describe()}, got {value}"
        return None

    def describe(self) -> str:
        return str(self.lo) if self.lo == self.hi else f"{self.lo}..{self.hi}"


@dataclass(frozen=True)
class Choice:
    """One of a few values."""

    values: tuple[Any, ...]

    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) != isinstance(self.values[0], bool) or value not in self.values:
            return f"must be one of {self.describe()}, got {attr_text(value)}"
        return None

    def describe(self) -> str:
        return ", ".join(attr_text(v) for v in self.values)


@dataclass(frozen=True)
class PairRange:
    """[a, b] with a and b in their ranges."""

    first: IntRange
    second: IntRange

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            return f"must be an array of 2 integers, got {attr_text(value)}"
        for index, (part, name) in enumerate(((self.first, "first"), (self.second, "second"))):
            problem = part.problem(value[index])
            if problem is not None:
                return f"{name} entry {problem}"
        return None

    def describe(self) -> str:
        return f"[{self.first.describe()}, {self.second.describe()}]"


Range = IntRange | Choice | PairRange


@dataclass(frozen=True)
class Knob:
    """A named lowering decision: what it controls, the values it accepts, what to try."""

    name: str
    doc: str
    range: Range
    space: tuple[Any, ...]   # the tuner's candidates, all inside `range`

    def problem(self, value: Any) -> str | None:
        found = self.range.problem(value)
        return None if found is None else f"'{self.name}' {found}"


def knobs(*declared: Knob) -> dict[str, Knob]:
    """A class's `knobs`: by name, in the order declared."""
    return {k.name: k for k in declared}


def knob_problems(opname: str, declared: dict[str, Knob], attrs: dict[str, Any]) -> list[str]:
    """Device-independent problems of schedule attributes on an instruction with `declared` knobs."""
    if not declared:
        return [f"{opname} takes no schedule attributes"] if attrs else []
    from tinyc.diagnostics import did_you_mean

    problems = []
    for name, value in attrs.items():
        knob = declared.get(name)
        if knob is None:
            problems.append(f"unknown schedule knob '{name}' on {opname}"
                            f"{did_you_mean(name, tuple(declared))}; knobs: {', '.join(declared)}")
            continue
        problem = knob.problem(value)
        if problem is not None:
            problems.append(f"schedule knob {problem} on {opname}")
    return problems


KNOB_NAMES = ("tile", "k_unroll", "stage", "vector_width")
"""The knobs of every collective, first and in this order (gemm has one more: `swap`)."""


# ---------------------------------------------------------------- pieces of the declarations

TILE_ROWS = IntRange(1, 8)
"""Row blocks per lane: a lane holds rows l + S·b of its tile, b < rows."""

ONE = IntRange(1, 1)

_ROW_SPACE = (1, 2, 3, 4, 6, 8)
_COLUMN_SPACE = (1, 2, 3, 4, 6, 8, 12, 16)
_NO = Choice((False,))


def tile(doc: str, rows: IntRange, cols: IntRange) -> Knob:
    """`tile` = [rows, columns], with the tuner trying the grid inside the ranges."""
    space = tuple([r, c] for r in _ROW_SPACE if rows.lo <= r <= rows.hi
                  for c in _COLUMN_SPACE if cols.lo <= c <= cols.hi)
    return Knob("tile", doc, PairRange(rows, cols), space)


def fixed(name: str, doc: str, value: Any) -> Knob:
    """A knob this lowering has no choice for (documented as a one-value range)."""
    return Knob(name, doc, _NO if value is False else ONE, (value,))


def k_unroll(doc: str, hi: int, space: tuple[int, ...]) -> Knob:
    return Knob("k_unroll", doc, IntRange(1, hi), space)


VECTOR_WIDTHS = Choice((1, 2, 3, 4, 8, 16))
"""OpenCL vloadn widths, 1 for one scalar load per element."""

MATMUL_VECTOR = Knob(
    "vector_width",
    "elements per load where a lane reads consecutive elements: the rows of op(A) = Aᵀ "
    "(read directly or by the staging copy); 1 = one load per element",
    VECTOR_WIDTHS, (1, 2, 4, 8))
MATMUL_STAGE = Knob(
    "stage",
    "copy op(A) = Aᵀ to local memory first, so the product reads it as a .n operand "
    "(transposed A of static size only)",
    Choice((False, True)), (False, True))

NOTHING_TO_STAGE = fixed("stage", "every element is read once: nothing to stage", False)
NEIGHBOURS = fixed("vector_width", "lanes read neighbouring elements (one vector per step)", 1)

ELEMENTWISE = knobs(
    tile("elements per work-item per step: [along mode 0 (S apart), along mode 1]",
         TILE_ROWS, IntRange(1, 8)),
    fixed("k_unroll", "no summation loop", 1), NOTHING_TO_STAGE, NEIGHBOURS)
"""The knobs of the element-wise collectives (axpby, hadamard_product)."""

ONE_PER_LANE = {"tile": [1, 1], "k_unroll": 1, "stage": False, "vector_width": 1}
"""Defaults of the element-wise and reduction lowerings: one element per lane per step,
as measured fastest before these knobs existed (see tinyc/passes/lower_foreach.py)."""


# ---------------------------------------------------------------- functions

FUNCTION_KNOBS: dict[str, Knob] = knobs(
    Knob("subgroup_size", "lanes of a subgroup (the vector width on the CPU)",
         Choice(SUBGROUP_SIZES), (4, 8, 16, 32)),
    Knob("work_group_size", "[X, Y] work-items; X a multiple of the subgroup size",
         PairRange(IntRange(1, 8192), IntRange(1, 8192)), ()))
"""`work_group_size` candidates depend on the subgroup size: see tinyc/tune/space.py."""


# ---------------------------------------------------------------- the products

@dataclass(frozen=True)
class MatmulShape:
    """C (M×N) += op(A) (M×K) op(B) (K×N), as gemm, gemv (N = 1) and ger (K = 1) compute it;
    None marks a size known only at run time. Knob defaults and the fit check read it."""

    M: int | None
    N: int | None
    K: int | None
    c_type: "ScalarType"
    a_type: "ScalarType"
    transpose_a: bool
    a: "MemrefType"          # op(A)'s memref as the instruction names it (before any `expand`)
    transpose_b: bool = False
