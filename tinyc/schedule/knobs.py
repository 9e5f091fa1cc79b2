"""The schedule knobs: every lowering decision, named, with its range and search space.

A schedule says *how* a kernel computes, never *what*: any value in a knob's
range gives the same results (bit for bit where the order of the arithmetic
stays the same, see `ORDER_CHANGING`). Each collective instruction has the
four knobs below, each function two. A knob left unset takes the default
that `tinyc/schedule/defaults.py` computes from the shapes and the device.

The tuner's search space is declared here, next to each knob (`space`), as
Triton's `autotune` lists its configurations: values inside the range that
are worth measuring. The cost model (tinyc/tune/cost.py) prunes it further.
docs/schedules.md documents every knob with examples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tinyc.ir.attr_checks import SUBGROUP_SIZES, attr_text, is_int_attr


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


# ---------------------------------------------------------------- per collective

TILE_ROWS = IntRange(1, 8)
"""Row blocks per lane: a lane holds rows l + S·b of its tile, b < rows."""

_ROW_SPACE = (1, 2, 3, 4, 6, 8)
_COLUMN_SPACE = (1, 2, 3, 4, 6, 8, 12, 16)
_NO = Choice((False,))
_ONE = IntRange(1, 1)


def _tile(doc: str, rows: IntRange, cols: IntRange) -> Knob:
    space = tuple([r, c] for r in _ROW_SPACE if rows.lo <= r <= rows.hi
                  for c in _COLUMN_SPACE if cols.lo <= c <= cols.hi)
    return Knob("tile", doc, PairRange(rows, cols), space)


def _fixed(name: str, doc: str, value: Any) -> Knob:
    """A knob this lowering has no choice for (documented as a one-value range)."""
    return Knob(name, doc, _NO if value is False else _ONE, (value,))


VECTOR_WIDTHS = Choice((1, 2, 3, 4, 8, 16))
"""OpenCL vloadn widths, 1 for one scalar load per element."""

_MATMUL_VECTOR = Knob(
    "vector_width",
    "elements per load where a lane reads consecutive elements: the rows of op(A) = Aᵀ "
    "(read directly or by the staging copy); 1 = one load per element",
    VECTOR_WIDTHS, (1, 2, 4, 8))
TRANSPOSE_LOADS = "loads"
TRANSPOSE_SHUFFLES = "shuffles"
_MATMUL_TRANSPOSE = Knob(
    "transpose",
    "how a tile whose lanes' rows are contiguous in memory (op(A) = Aᵀ read directly or "
    "by the staging copy; C under `swap`) is read or written: \"loads\", per-lane vector "
    "loads of `vector_width`; \"shuffles\", loads contiguous across lanes and a register "
    "transpose by subgroup shuffles (S×S blocks of 4- and 8-byte real elements; the staging "
    "copy then works in S×S tiles)",
    Choice((TRANSPOSE_LOADS, TRANSPOSE_SHUFFLES)), (TRANSPOSE_LOADS, TRANSPOSE_SHUFFLES))
_MATMUL_STAGE = Knob(
    "stage",
    "copy op(A) = Aᵀ to local memory first, so the product reads it as a .n operand "
    "(transposed A of static size only)",
    Choice((False, True)), (False, True))


def _k_unroll(doc: str, hi: int, space: tuple[int, ...]) -> Knob:
    return Knob("k_unroll", doc, IntRange(1, hi), space)


_ELEMENTWISE: dict[str, Knob] = {k.name: k for k in (
    _tile("elements per work-item per step: [along mode 0 (S apart), along mode 1]",
          TILE_ROWS, IntRange(1, 8)),
    _fixed("k_unroll", "no summation loop", 1),
    _fixed("stage", "every element is read once: nothing to stage", False),
    _fixed("vector_width", "lanes read neighbouring elements (one vector per step)", 1))}
"""axpby and hadamard_product."""

COLLECTIVE_KNOBS: dict[str, dict[str, Knob]] = {
    "gemm": {k.name: k for k in (
        _tile("register tile of C per subgroup step: [row blocks of S rows, columns]",
              TILE_ROWS, IntRange(1, 32)),
        _k_unroll("K step: columns of op(A) per multiply-add step (the K loop unrolled by it)",
                  16, (1, 2, 4, 8, 16)),
        _MATMUL_STAGE, _MATMUL_VECTOR, _MATMUL_TRANSPOSE,
        Knob("swap", "compute Cᵀ = op(B)ᵀ op(A)ᵀ and store it transposed (then `tile`, "
                     "`stage` and `vector_width` apply to that product, whose rows are C's "
                     "columns); stage must be false", Choice((False, True)), (False, True)))},
    "gemv": {k.name: k for k in (
        _tile("register tile of c per subgroup step: [row blocks of S rows, 1]",
              TILE_ROWS, _ONE),
        _k_unroll("K step: columns of op(A) per multiply-add step", 16, (1, 2, 4, 8, 16)),
        _MATMUL_STAGE, _MATMUL_VECTOR, _MATMUL_TRANSPOSE)},
    "ger": {k.name: k for k in (
        _tile("register tile of C per subgroup step: [row blocks of S rows, columns]",
              TILE_ROWS, IntRange(1, 32)),
        _fixed("k_unroll", "K is 1 in a rank-1 update", 1),
        _fixed("stage", "a is a vector read once per tile: nothing to stage", False),
        _fixed("vector_width", "a is read across lanes (contiguous), b as uniform values", 1))},
    "axpby": _ELEMENTWISE,
    "hadamard_product": _ELEMENTWISE,
    "sum": {k.name: k for k in (
        _tile("[independent partial sums per lane, 1] (more than 1 changes the order of the "
              "additions)", TILE_ROWS, _ONE),
        _k_unroll("elements added to each partial sum per loop step (in order)", 8,
                  (1, 2, 4, 8)),
        _fixed("stage", "every element is read once: nothing to stage", False),
        _fixed("vector_width", "lanes read neighbouring elements (one vector per step)", 1))},
    "cumsum": {k.name: k for k in (
        _tile("[chunks of S elements scanned per loop step along mode 0, 1] (the carry "
              "runs through them in order)", TILE_ROWS, _ONE),
        _fixed("k_unroll", "a scan step depends on the previous one", 1),
        _fixed("stage", "every element is read once: nothing to stage", False),
        _fixed("vector_width", "lanes read neighbouring elements (one vector per step)", 1))},
}
"""The knobs of each collective instruction, by opname."""

KNOB_NAMES = ("tile", "k_unroll", "stage", "vector_width")
"""The knobs of every collective (gemm and gemv have `transpose` too, gemm `swap`)."""

ORDER_CHANGING: dict[str, tuple[str, ...]] = {"sum": ("tile",)}
"""Knobs that change the order of floating-point additions (results then agree
with the default's to NumPy tolerances, not bit for bit)."""


# ---------------------------------------------------------------- per function

FUNCTION_KNOBS: dict[str, Knob] = {
    "subgroup_size": Knob("subgroup_size", "lanes of a subgroup (the vector width on the CPU)",
                          Choice(SUBGROUP_SIZES), (4, 8, 16, 32)),
    "work_group_size": Knob("work_group_size",
                            "[X, Y] work-items; X a multiple of the subgroup size",
                            PairRange(IntRange(1, 8192), IntRange(1, 8192)), ()),
}
"""`work_group_size` candidates depend on the subgroup size: see tinyc/tune/space.py."""


def collective_knobs(opname: str) -> dict[str, Knob]:
    return COLLECTIVE_KNOBS[opname]


def knob_problems(opname: str, attrs: dict[str, Any]) -> list[str]:
    """Device-independent problems of schedule attributes on a collective."""
    knobs = COLLECTIVE_KNOBS.get(opname)
    if knobs is None:
        return [f"{opname} takes no schedule attributes"] if attrs else []
    from tinyc.diagnostics import did_you_mean

    problems = []
    for name, value in attrs.items():
        knob = knobs.get(name)
        if knob is None:
            problems.append(f"unknown schedule knob '{name}' on {opname}"
                            f"{did_you_mean(name, tuple(knobs))}; knobs: {', '.join(knobs)}")
            continue
        problem = knob.problem(value)
        if problem is not None:
            problems.append(f"schedule knob {problem} on {opname}")
    return problems


def markdown_table() -> str:
    """The knob reference of docs/schedules.md (tests/schedule/test_docs.py keeps them equal)."""
    rows = ["| collective | knob | range | tuner tries | what it sets |", "|---|---|---|---|---|"]
    for opname, knobs in COLLECTIVE_KNOBS.items():
        for knob in knobs.values():
            tries = ", ".join(attr_text(v) for v in knob.space)
            if len(knob.space) > 8:
                tries = f"{len(knob.space)} values"
            rows.append(f"| {opname} | `{knob.name}` | {knob.range.describe()} | {tries} "
                        f"| {knob.doc} |")
    for knob in FUNCTION_KNOBS.values():
        tries = ", ".join(attr_text(v) for v in knob.space) or "[S, 1] (CPU)"
        rows.append(f"| (function) | `{knob.name}` | {knob.range.describe()} | {tries} "
                    f"| {knob.doc} |")
    return "\n".join(rows)
