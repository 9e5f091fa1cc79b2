"""Mixed structured control flow: for, if and yield."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir import attr_checks
from tinyc.ir.checks import (
    check_yield, expect_type, inst_error,
    is_int, is_value_type, operand_error,
    result_error,
)
from tinyc.ir.addressing import Guard, IntegerFacts, LoopRange
from tinyc.ir.core import Instruction, Region, Value, no_addressing, no_integer_facts, no_memory_access
from tinyc.ir.types import Type, bool_, index
from tinyc.lint.rules import empty_range
from tinyc.std import Std

is_int_attr = attr_checks.is_int_attr


def check_seed_loop_type(ctx: "VerifyContext", inst: Instruction, ty: Type, var: str) -> bool:
    """The seed's loop type is index unless written after the loop variable; the newest
    language's follows the bounds. False (after reporting) for a seed program whose loop
    relies on the newest rule."""
    if ty is index or getattr(inst, "loop_type_written", True) or ctx.version.newest_extensions:
        return True
    inst_error(ctx, inst, f"the bounds have type {ty}, but without a type after the loop "
                          f"variable the loop type is index in the seed language; write "
                          f"'{var}: {ty}'{ctx.version.rule()}")
    return False


def loop_type_of(s: "Parsed", bound: Value | None) -> Type:
    """The loop type: as written (seed), else that of the bounds (newest), else index.

    The seed defaults to index; the newest language has no loop type and
    takes the bounds' type, which is index for every seed loop that checks.
    """
    if s.type is not None:
        s.mark(Std.SEED, f"a loop type after the {s.keyword} variable", s.types_span)
        return s.type
    if bound is not None and is_int(bound.type):
        if bound.type is not index:  # how the newest language writes a loop of this type
            s.mark(Std.NEWEST, f"a {s.keyword} loop whose type follows its bounds", s.span)
        return bound.type
    return index

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.lint import LintContext
    from tinyc.parser.instructions import Parsed


class For(Instruction):
    """A sequential loop; operands are from, to, [step], then the initial carried values.

    The body's arguments are the loop variable and the carried values; the
    results are the carried values after the last iteration.
    """

    opname = "for"
    keywords = ("for",)
    region_yields = True
    syntax = ('new_value (":" integer_type)? "=" LOCAL_ID "," LOCAL_ID ("," LOCAL_ID)? for_init? '
              'region (dictionary | fn_attributes)?')
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """The loop variable runs from `from` up to (excluding) `to` by the step; the
        carried values are not described."""
        return IntegerFacts(ranges=(LoopRange(self.loop_var, self.lower, self.upper, self.step),))

    def __init__(self, loop_var: Value, lower: Value, upper: Value, step: Value | None,
                 carried: Sequence[Value], init: Sequence[Value], body: Region | None = None,
                 loop_type: Type = index, attrs: dict | None = None, span: Span | None = None,
                 result_names: Sequence[str | None] | None = None):
        region = body if body is not None else Region()
        region.args = [loop_var, *carried]
        for v in region.args:
            v.owner = region
        bounds = [lower, upper] + ([step] if step is not None else [])
        super().__init__([*bounds, *init], [v.type for v in carried], [region], span,
                         result_names=result_names)
        self.has_step = step is not None
        self.loop_type = loop_type
        self.attrs = dict(attrs or {})

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "For":
        """`init(%c=%x, ...) -> (types)` pairs carried values with their types."""
        init = s.part("for_init")
        pairs = init.parts if init is not None else []
        types = init.types if init is not None else []
        if len(types) != len(pairs):
            s.error(f"for carries {len(pairs)} values but {len(types)} "
                    f"type{'s are' if len(types) != 1 else ' is'} given after '->'",
                    init.types_span)
        n = min(len(types), len(pairs))
        carried = [Value(t) for t in types[:n]]
        lower, upper, *step = s.values
        loop_type = loop_type_of(s, lower)
        loop_var = Value(loop_type)
        body = s.region(0, [loop_var, *carried])
        attributes = s.attributes
        newest_attributes = s.part("fn_attributes")
        if newest_attributes is not None:
            s.mark(Std.NEWEST, "'attributes' after the loop body", newest_attributes.span)
            attributes = newest_attributes.attributes
        elif attributes:
            s.mark(Std.SEED, "loop attributes without 'attributes'")
        if is_int_attr(attributes.get("unroll")):
            s.mark(Std.NEWEST, "an integer unroll count")
        loop = cls(loop_var, lower, upper, step[0] if step else None, carried,
                   [p.values[0] for p in pairs[:n]], body, loop_type, attributes)
        loop.loop_type_written = s.type is not None
        return loop

    @property
    def lower(self) -> Value:
        return self.operands[0]

    @property
    def upper(self) -> Value:
        return self.operands[1]

    def lint(self, ctx: "LintContext") -> None:
        empty_range(ctx, self, [(self.lower, self.upper)])

    @property
    def step(self) -> Value | None:
        return self.operands[2] if self.has_step else None

    @property
    def init(self) -> list[Value]:
        return self.operands[3 if self.has_step else 2:]

    @property
    def body(self) -> Region:
        return self.regions[0]

    @property
    def loop_var(self) -> Value:
        return self.body.args[0]

    @property
    def carried(self) -> list[Value]:
        return self.body.args[1:]

    def format(self, p: "Printer") -> str:
        """The seed writes a loop type other than index, the newest takes it from the bounds."""
        ty = "" if self.loop_type is index or p.newest else f":{self.loop_type}"
        bounds = ", ".join(p.v(v) for v in self.operands[: 3 if self.has_step else 2])
        text = f"for {p.v(self.loop_var)}{ty} = {bounds}"
        if self.carried:
            inits = ", ".join(f"{p.v(c)}={p.v(i)}" for c, i in zip(self.carried, self.init))
            types = ", ".join(str(r.type) for r in self.results)
            text += f" init({inits}) -> ({types})"
        text += " " + p.region(self.body)
        if self.attrs:
            if not p.newest and is_int_attr(self.attrs.get("unroll")):
                p.cannot(self, f"the unroll count {self.attrs['unroll']}")
            text += (" attributes " if p.newest else " ") + p.attrs(self.attrs)
        return text

    def verify(self, ctx: "VerifyContext") -> None:
        """Integer loop type for variable and bounds; carried values typed and yielded."""
        ty = self.loop_type
        if not is_int(ty):
            inst_error(ctx, self, f"the loop type must be an integer type, got {ty}")
        elif check_seed_loop_type(ctx, self, ty, "for %i"):
            if self.loop_var.type is not ty:
                ctx.error(f"for: the loop variable must have the loop type {ty}, got "
                          f"{self.loop_var.type}", self.loop_var.span or self.span)
            bounds = ["lower bound", "upper bound", "step"][: 3 if self.has_step else 2]
            for i, role in enumerate(bounds):
                expect_type(ctx, self, i, role, ty, " (the loop type)")
            self._check_step(ctx)
        types = [r.type for r in self.results]
        init_at = 3 if self.has_step else 2
        if len(self.init) != len(types) or len(self.carried) != len(types):
            inst_error(ctx, self, f"the loop has {len(self.init)} initial values for "
                                  f"{len(self.carried)} carried values and {len(types)} results")
            return
        for k, t in enumerate(types):
            if not is_value_type(t):
                result_error(ctx, self, f"carried value {k} must have bool, scalar or coopmatrix "
                                        f"type, got {t}")
            else:
                expect_type(ctx, self, init_at + k, f"initial value {k}", t,
                            f" (the type of carried value {k})")
        last = self.body.instructions[-1] if self.body.instructions else None
        if isinstance(last, Yield):
            check_yield(ctx, last, types, "the for loop carries", "carried value")
        elif types:
            inst_error(ctx, self, f"the loop carries {len(types)} value{'s' if len(types) > 1 else ''}, "
                                  f"so its body must end with a yield")
        problems = attr_checks.unknown_names(self.attrs, attr_checks.FOR_ATTRIBUTES, "for")
        unroll = self.attrs.get("unroll")
        if "unroll" in self.attrs and not isinstance(unroll, bool) and not is_int_attr(unroll):
            problems.append(f"unroll must be true, false or a positive unroll count, got "
                            f"{attr_checks.attr_text(unroll)}")
        elif is_int_attr(unroll) and not 0 < unroll < 2 ** 32:
            problems.append(f"the unroll count must be positive (and below 2^32), got {unroll}")
        for problem in problems:
            inst_error(ctx, self, problem)


    def _check_step(self, ctx: "VerifyContext") -> None:
        """A constant step must be positive: the loop counts up while `iv < to`, so a step
        of 0 (or less) would never end. (A step computed at run time that is not
        positive runs no iteration; see docs/decisions.md.)"""
        step = self.step
        owner = step.owner if step is not None else None
        if getattr(owner, "opname", None) != "constant" or step.type is not self.loop_type:
            return
        value = owner.value
        if isinstance(value, int) and not isinstance(value, bool) and value <= 0:
            operand_error(ctx, self, 2, f"the step of a for loop must be positive, got {value} "
                                        f"(the loop would never end)")


class If(Instruction):
    """Two-way branch; with results, both regions end in a yield."""

    opname = "if"
    keywords = ("if",)
    region_yields = True
    syntax = 'LOCAL_ID ("->" (return_types | "(" ")"))? region ("else" region)?'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """The first region runs when the condition holds, the second when it does not; the
        results are what the region that ran yields."""
        return IntegerFacts(guard=Guard(self.cond, 0, 1), chooses=True)

    def __init__(self, cond: Value, result_types: Sequence[Type], then: Region | None = None,
                 otherwise: Region | None = None, span: Span | None = None,
                 result_names: Sequence[str | None] | None = None):
        super().__init__([cond], result_types,
                         [then if then is not None else Region(),
                          otherwise if otherwise is not None else Region()],
                         span, result_names=result_names)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "If":
        otherwise = s.region(1) if s.region_count > 1 else None
        return cls(s.values[0], s.types, s.region(0), otherwise)

    @property
    def cond(self) -> Value:
        return self.operands[0]

    @property
    def then(self) -> Region:
        return self.regions[0]

    @property
    def otherwise(self) -> Region:
        return self.regions[1]

    def format(self, p: "Printer") -> str:
        text = f"if {p.v(self.cond)}"
        if self.results:
            text += " -> (" + ", ".join(str(r.type) for r in self.results) + ")"
        text += " " + p.region(self.then)
        if self.otherwise.instructions:
            text += " else " + p.region(self.otherwise)
        return text

    def verify(self, ctx: "VerifyContext") -> None:
        """A bool condition; with results, both regions end in a matching yield."""
        expect_type(ctx, self, 0, "condition", bool_)
        types = [r.type for r in self.results]
        for k, t in enumerate(types):
            if not is_value_type(t):
                result_error(ctx, self, f"result {k} must have bool, scalar or coopmatrix type, got {t}")
        n = len(types)
        for region, name in ((self.then, "then"), (self.otherwise, "else")):
            last = region.instructions[-1] if region.instructions else None
            if isinstance(last, Yield):
                check_yield(ctx, last, types, "the if returns", "result")
            elif n and name == "else" and last is None:
                inst_error(ctx, self, f"the if returns {n} value{'s' if n > 1 else ''}, so it needs "
                                      f"an else region that ends with a yield")
            elif n:
                inst_error(ctx, self, f"the if returns {n} value{'s' if n > 1 else ''}, so its "
                                      f"{name} region must end with a yield")


class Yield(Instruction):
    """Ends a for/if (or cooperative_matrix_apply) region, handing values to the next iteration or the results."""

    opname = "yield"
    keywords = ("yield",)
    syntax = '"(" values? ")"'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, values: Sequence[Value] = (), span: Span | None = None):
        super().__init__(values, span=span)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Yield":
        return cls(s.operands)

    def format(self, p: "Printer") -> str:
        return "yield (" + ", ".join(p.v(v) for v in self.operands) + ")"

    def verify(self, ctx: "VerifyContext") -> None:
        """Only bool, scalar and coopmatrix values can be yielded (count: see for / if)."""
        for k, value in enumerate(self.operands):
            if not is_value_type(value.type):
                operand_error(ctx, self, k, f"value {k} must have bool, scalar or coopmatrix "
                                            f"type, got {value.type}")


