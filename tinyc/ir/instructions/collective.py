"""Collective instructions that are not BLAS-like: alloca and the work-group loops.

The work-group executes them together (foreach and foreach_tile spread their
iterations over the work-items; parallel runs its region on each). The
BLAS-like collectives are in blas.py, products.py and updates.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir import attr_checks
from tinyc.ir.checks import expect_type, inst_error, is_int, result_error
from tinyc.ir.addressing import IntegerFacts, LoopRange, TileRange
from tinyc.ir.core import Instruction, Kind, Region, Value, no_addressing, no_integer_facts, no_memory_access
from tinyc.ir.instructions.control import check_seed_loop_type, loop_type_of
from tinyc.ir.types import DYNAMIC, AddressSpace, MemrefType, Type, index
from tinyc.lint.rules import empty_range
from tinyc.std import Std

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.lint import LintContext
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


class Alloca(Instruction):
    """Work-group local scratch memory, freed at the end of its region."""

    opname = "alloca"
    kind = Kind.COLLECTIVE
    keywords = ("alloca",)
    syntax = 'dictionary? ":" memref_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def allocates(self) -> bool:
        """Its result is local memory of its own."""
        return True

    def __init__(self, type: Type, attrs: dict | None = None, span: Span | None = None,
                 name: str | None = None):
        super().__init__((), (type,), span=span, result_names=[name])
        self.attrs = dict(attrs or {})

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Alloca":
        return cls(s.type, s.attributes)

    def format(self, p: "Printer") -> str:
        attrs = f" {p.attrs(self.attrs)}" if self.attrs else ""
        return f"alloca{attrs} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A local memref of static size; alignment fits the element type."""
        t = self.result.type
        if not isinstance(t, MemrefType):
            result_error(ctx, self, f"result type must be a memref, got {t}")
            return
        if DYNAMIC in t.shape or DYNAMIC in t.stride:
            result_error(ctx, self, f"the size of {t} must be known at compile time "
                                    f"(no '?' in shape or stride)")
        if t.space is not AddressSpace.LOCAL:
            result_error(ctx, self, f"the result must be in the local address space, got {t}")
        problems = attr_checks.unknown_names(self.attrs, attr_checks.ALLOCA_ATTRIBUTES, "alloca")
        if "alignment" in self.attrs:
            problems += attr_checks.alignment_problems(self.attrs["alignment"], t.element)
        for problem in problems:
            inst_error(ctx, self, problem)


class RangeLoop(Instruction):
    """Operands: the lower bounds, then the upper bounds of a multi-dimensional range; one SPMD
    region (foreach, foreach_tile)."""

    abstract = True
    kind = Kind.COLLECTIVE
    region_kind = Kind.SPMD

    @property
    def dims(self) -> int:
        return len(self.operands) // 2

    @property
    def lower(self) -> list[Value]:
        return self.operands[: self.dims]

    @property
    def upper(self) -> list[Value]:
        return self.operands[self.dims:]

    @property
    def body(self) -> Region:
        return self.regions[0]

    def lint(self, ctx: "LintContext") -> None:
        empty_range(ctx, self, list(zip(self.lower, self.upper)))


class Foreach(RangeLoop):
    """A multi-dimensional loop whose iterations are spread over the work-items.

    Operands are the lower bounds then the upper bounds; the body is an SPMD
    region whose arguments are the loop variables.
    """

    opname = "foreach"
    keywords = ("foreach",)
    syntax = '"(" new_values ")" (":" integer_type)? "=" "(" values ")" "," "(" values ")" region'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """Each loop variable runs from its lower bound up to (excluding) its upper bound."""
        return IntegerFacts(ranges=tuple(LoopRange(var, lo, hi)
                                         for var, lo, hi in zip(self.body.args, self.lower, self.upper)))

    def __init__(self, loop_vars: Sequence[Value], lower: Sequence[Value], upper: Sequence[Value],
                 body: Region | None = None, loop_type: Type = index, span: Span | None = None):
        region = body if body is not None else Region()
        region.args = list(loop_vars)
        for v in loop_vars:
            v.owner = region
        super().__init__([*lower, *upper], regions=[region], span=span)
        self.loop_type = loop_type

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Foreach":
        names, lower_part, upper_part = s.parts
        lower, upper, n_vars = lower_part.values, upper_part.values, len(s.names)
        if not n_vars == len(lower) == len(upper):
            s.error(f"foreach has {n_vars} loop variables, {len(lower)} lower and {len(upper)} "
                    "upper bounds; the three lists must have the same length",
                    names.span.join(upper_part.span))
        n = min(len(lower), len(upper))
        loop_type = loop_type_of(s, lower[0] if lower else None)
        loop_vars = [Value(loop_type) for _ in range(n_vars)]
        loop = cls(loop_vars, lower[:n], upper[:n], s.region(0, loop_vars), loop_type)
        loop.loop_type_written = s.type is not None
        return loop

    def format(self, p: "Printer") -> str:
        loop_vars = ", ".join(p.v(v) for v in self.body.args)
        ty = "" if self.loop_type is index or p.newest else f":{self.loop_type}"
        lower = ", ".join(p.v(v) for v in self.lower)
        upper = ", ".join(p.v(v) for v in self.upper)
        return f"foreach ({loop_vars}){ty} = ({lower}), ({upper}) {p.region(self.body)}"

    def verify(self, ctx: "VerifyContext") -> None:
        """As many lower and upper bounds as loop variables, all of the integer loop type."""
        n_vars, n_bounds = len(self.body.args), len(self.operands)
        if n_vars == 0 or n_bounds != 2 * n_vars:
            inst_error(ctx, self, f"the loop has {n_vars} variables and {n_bounds} bounds; it needs "
                                  f"one lower and one upper bound per variable")
            return
        ty = self.loop_type
        if not is_int(ty):
            inst_error(ctx, self, f"the loop type must be an integer type, got {ty}")
            return
        if not check_seed_loop_type(ctx, self, ty, "foreach (%i, ...)"):
            return
        for k, var in enumerate(self.body.args):
            if var.type is not ty:
                ctx.error(f"foreach: loop variable {k} must have the loop type {ty}, got {var.type}",
                          var.span or self.span)
        for k in range(n_vars):
            expect_type(ctx, self, k, f"lower bound {k}", ty, " (the loop type)")
            expect_type(ctx, self, n_vars + k, f"upper bound {k}", ty, " (the loop type)")


class ForeachTile(RangeLoop):
    """A loop over tiles of a range, one tile per subgroup at a time (newest language).

    Operands are the lower bounds then the upper bounds; `tile_shape` holds
    the constant tile shape. The body is an SPMD region whose arguments are
    the tile offsets, then the tile sizes (the shape, clipped at the range's
    end). Offsets are dynamically uniform: a subgroup runs the body for one
    tile with all its work-items.
    """

    opname = "foreach_tile"
    keywords = ("foreach_tile",)
    versions = {"foreach_tile": Std.NEWEST}
    syntax = ('"(" new_values ")" "=" "(" values ")" "," "(" values ")" '
              '"as" "(" new_values ")" "<=" "(" INTEGER ("," INTEGER)* ")" region')
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """Tile offsets step by the tile shape below the upper bounds; a tile's size is at
        least 1 and at most the shape, clipped at the upper bound."""
        dims = range(min(len(self.offsets), len(self.sizes), len(self.tile_shape), self.dims))
        ranges = [LoopRange(self.offsets[k], self.lower[k], self.upper[k], self.tile_shape[k]) for k in dims]
        ranges += [TileRange(self.sizes[k], self.offsets[k], self.upper[k], self.tile_shape[k]) for k in dims]
        return IntegerFacts(ranges=tuple(ranges))

    def __init__(self, offsets: Sequence[Value], sizes: Sequence[Value], lower: Sequence[Value],
                 upper: Sequence[Value], tile_shape: Sequence[int], body: Region | None = None,
                 span: Span | None = None):
        region = body if body is not None else Region()
        region.args = [*offsets, *sizes]
        for v in region.args:
            v.owner = region
        super().__init__([*lower, *upper], regions=[region], span=span)
        self.tile_shape = list(tile_shape)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "ForeachTile":
        """Offsets and sizes take the type of their mode's lower bound."""
        names, lower_part, upper_part, sizes_part = s.parts[:4]
        lower, upper = lower_part.values, upper_part.values
        n_vars, n_sizes = len(names.names_here), len(sizes_part.names_here)
        shape = [s.nonnegative(k, "tile shape entry") for k in range(len(s.literals))]
        if not n_vars == len(lower) == len(upper) == n_sizes == len(shape):
            s.error(f"foreach_tile has {n_vars} tile offsets, {len(lower)} lower and {len(upper)} "
                    f"upper bounds, {n_sizes} tile sizes and a tile shape of {len(shape)} modes; "
                    f"all must have the same length", s.span)
        types = [v.type if is_int(v.type) else index for v in lower]
        types += [index] * (max(n_vars, n_sizes) - len(types))
        offsets = [Value(types[k]) for k in range(n_vars)]
        sizes = [Value(types[k]) for k in range(n_sizes)]
        n = min(len(lower), len(upper))
        return cls(offsets, sizes, lower[:n], upper[:n], shape, s.region(0, offsets + sizes))

    @property
    def offsets(self) -> list[Value]:
        return self.body.args[: len(self.body.args) // 2]

    @property
    def sizes(self) -> list[Value]:
        return self.body.args[len(self.body.args) // 2:]

    def format(self, p: "Printer") -> str:
        if not p.newest:
            p.cannot(self, "'foreach_tile'")
        offsets = ", ".join(p.v(v) for v in self.offsets)
        sizes = ", ".join(p.v(v) for v in self.sizes)
        lower = ", ".join(p.v(v) for v in self.lower)
        upper = ", ".join(p.v(v) for v in self.upper)
        shape = ", ".join(map(str, self.tile_shape))
        return (f"foreach_tile ({offsets}) = ({lower}), ({upper}) as ({sizes}) <= ({shape}) "
                f"{p.region(self.body)}")

    def subgroup_multiples(self, std: Std) -> list[tuple[int, str]]:
        """The first mode of the tile shape is a multiple of the subgroup size."""
        return [(self.tile_shape[0], "the first mode of the tile shape")] if self.tile_shape else []

    def verify(self, ctx: "VerifyContext") -> None:
        """Lists of one length; a from/to pair of one integer type; a positive tile shape."""
        n = self.dims
        if n == 0 or len(self.body.args) != 2 * n or len(self.tile_shape) != n:
            inst_error(ctx, self, f"the loop has {len(self.offsets)} tile offsets, {n} lower and "
                                  f"upper bounds, {len(self.sizes)} tile sizes and a tile shape of "
                                  f"{len(self.tile_shape)} modes; it needs the same number of each")
            return
        for k in range(n):
            lo = self.lower[k].type
            if not is_int(lo):
                inst_error(ctx, self, f"lower bound {k} must have an integer type, got {lo}",
                           [self.lower[k]])
                continue
            expect_type(ctx, self, n + k, f"upper bound {k}", lo, f" (the type of lower bound {k})")
            for var, what in ((self.offsets[k], "tile offset"), (self.sizes[k], "tile size")):
                if var.type is not lo:
                    ctx.error(f"foreach_tile: {what} {k} must have type {lo}, got {var.type}",
                              var.span or self.span)
        for k, size in enumerate(self.tile_shape):
            if size < 1:
                inst_error(ctx, self, f"the tile shape must be positive, got {size} in mode {k}")


class Parallel(Instruction):
    """Runs its SPMD region on every work-item of the work-group."""

    opname = "parallel"
    kind = Kind.COLLECTIVE
    region_kind = Kind.SPMD
    keywords = ("parallel",)
    syntax = "region"
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, body: Region | None = None, span: Span | None = None):
        super().__init__(regions=[body if body is not None else Region()], span=span)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Parallel":
        return cls(s.region())

    @property
    def body(self) -> Region:
        return self.regions[0]

    def format(self, p: "Printer") -> str:
        return f"parallel {p.region(self.body)}"
