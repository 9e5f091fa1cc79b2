"""The integer values of a kernel as expressions of its launch (tinyc/analysis/symbolic.py).

`IndexValues` follows a function's walk (launch_bounds.py drives it) and
gives each integer value an `Expr` over launch symbols and variables, from
what the instructions say they compute (`integer_facts()`, never their
classes): constants, arithmetic, casts, builtins, `size`, loop variables
with their ranges, and the bounds a guard (`if %i < %n`) puts on a variable
inside its region. A value it cannot express (loaded from memory, a carried
loop value, a float cast) is unknown (None).

Arithmetic is exact on Python integers; what the device computes wraps in
the result type, so every value whose range is not known to fit its type at
compile time carries a `Fit` that the launch checks (an i32 `g * 64` needs
the batch below 2^25). Known ranges: the batch is below 2^31, sizes and
member counts below 2^48, scalar arguments within their types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from tinyc.analysis.symbolic import ONE, ZERO, Expr, Interval, Node, Sym, Var, interval, node, simplify
from tinyc.analysis.symbolic_bounds import ScopedBounds, Unbounded, lower, upper
from tinyc.ir.addressing import IntOp, LoopRange, TileRange
from tinyc.ir.core import Value
from tinyc.ir.types import BoolType, ScalarType, Type

BATCH = Sym("batch", (), 0)
"""The number of work-groups of a launch."""
MAX_BATCH = 2**31 - 1
MAX_SIZE = 2**48
"""No mode, group or stride of an argument reaches this (it would not fit in memory)."""


def type_range(t: Type) -> Interval | None:
    """The values of an integer type (bools: 0 and 1); None for others."""
    if isinstance(t, BoolType):
        return (0, 1)
    if isinstance(t, ScalarType) and t.is_int:
        bits = 64 if t.name == "index" else t.bits
        return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return None


def static_range(sym: Sym) -> Interval:
    """What a launch symbol can be, whatever the launch."""
    if sym.kind == "batch":
        return (0, MAX_BATCH)
    if sym.kind == "scalar":
        return sym.key[1]
    return (0, MAX_SIZE)


@dataclass(frozen=True)
class Fit:
    """A value the device computes in `type`: its exact value must fit there."""

    value: Expr
    type: Type
    where: Any  # the instruction


@dataclass(frozen=True)
class Comparison:
    """`a op b` (op: lt, le, gt, ge, eq, ne), as a guard can use it."""

    a: Expr
    op: str
    b: Expr


_WRAPPING = frozenset({"add", "sub", "mul", "neg", "abs", "shl", "cast", "div"})
"""Operations whose exact result may not fit the result type (div: the smallest value by -1)."""

DEPTH = 5
"""How far a guard's bound is followed into the bounds of earlier variables."""

NEGATED = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}


_UNSEEN = object()
"""(`of`: a value not looked up yet)"""


def _loaded_by(where: Any) -> str:
    line = f" at line {where.span.line}" if getattr(where, "span", None) is not None else ""
    return f"it depends on a value loaded from memory (`{where.opname}`{line})"


class IndexValues:
    """Integer values, variables and their bounds, scoped by region (module docs)."""

    def __init__(self, work_group: tuple[int, int] | None, subgroup_size: int | None,
                 scalar: Callable[[Value], Sym | None], size: Callable[[Value, int], Expr | None]):
        self.values: dict[Value, Expr | None] = {}
        self.unknown: dict[Value, Any] = {}  # why a value is not known (for notes; `why` words it)
        self.fits: dict[Value, tuple[Fit, ...]] = {}  # what a value's computation must fit
        self.comparisons: dict[Value, tuple[Comparison, ...]] = {}  # bools: all must hold
        self.scopes: list[dict[Var, tuple[Expr | None, Expr | None]]] = [{}]
        self._scoped = ScopedBounds(self.bounds)
        self._outer_memos: list[dict] = []   # per pushed scope: the memo when it was pushed
        self._scalar, self._size = scalar, size
        self._next = 0
        self.group_id = self.variable("group_id", ZERO, Expr.atom(BATCH) - 1)
        self._builtins = self._builtin_table(work_group, subgroup_size)
        self.uses_group_size = False

    # -- variables -----------------------------------------------------------------
    def variable(self, name: str, low: Expr | None, high: Expr | None) -> Var:
        """A fresh variable with bounds in the current scope. Variables are ordered as they
        are made, so a variable's bounds only use earlier ones (bounds eliminate the latest
        first: symbolic.py)."""
        self._next += 1
        v = Var(self._next, self._next, name)
        self.scopes[-1][v] = (simplify(low) if low is not None else None,
                              simplify(high) if high is not None else None)
        return v

    def holds_always(self, e: Expr) -> bool:
        """Whether a launch expression is >= 0 for every launch (symbols at their static ranges)."""
        try:
            return interval(simplify(e), _STATIC)[0] >= 0
        except (KeyError, ZeroDivisionError):
            return False

    def bounds(self, v: Any) -> tuple[Expr | None, Expr | None]:
        for scope in reversed(self.scopes):
            if v in scope:
                return scope[v]
        return (None, None)

    def push(self) -> None:
        self.scopes.append({})
        self._outer_memos.append(self._scoped.memo)   # (shared until a guard refines a bound)

    def pop(self) -> None:
        self.scopes.pop()
        self._scoped.memo = self._outer_memos.pop()

    def upper(self, e: Expr) -> Expr:
        return upper(e, self._scoped)

    def lower(self, e: Expr) -> Expr:
        return lower(e, self._scoped)

    # -- values --------------------------------------------------------------------------
    def of(self, value: Value | int) -> Expr | None:
        """The expression of an integer value (an int is a constant); None if unknown."""
        if isinstance(value, int):
            return Expr.const(value)
        found = self.values.get(value, _UNSEEN)
        if found is not _UNSEEN:
            return found
        sym = self._scalar(value)  # a scalar argument of the kernel
        found = Expr.atom(sym) if sym is not None else None
        self.values[value] = found
        return found

    def why(self, value: Value | int) -> str:
        """Why a value is not known (it is loaded from memory, carried by a loop, ...)."""
        reason = self._reason(value)
        return reason if isinstance(reason, str) else _loaded_by(reason)

    def _reason(self, value: Value | int) -> Any:
        """`why` as kept: a loading instruction's reason is worded only if a note says it."""
        if isinstance(value, Value) and value in self.unknown:
            return self.unknown[value]
        return "it is not an integer the compiler follows"

    def loaded(self, values: tuple, where: Any) -> None:
        """Results read from memory: their values depend on the data (`where` loads them)."""
        for v in values:
            self.values[v] = None
            self.unknown[v] = where

    def fits_of(self, values: list[Value | int]) -> tuple[Fit, ...]:
        found: dict[Fit, None] = {}
        for v in values:
            if isinstance(v, Value):
                found.update(dict.fromkeys(self.fits.get(v, ())))
        return tuple(found)

    def define(self, result: Value, op: IntOp, where: Any) -> None:
        """The value of `result`, computed as `op` says."""
        args = [a for a in op.args if isinstance(a, Value)]
        value = self._compute(result, op)
        self.values[result] = value
        if value is None and result not in self.unknown:
            reason = next((self._reason(a) for a in args if self.of(a) is None), None)
            self.unknown[result] = reason if reason is not None else \
                f"`{getattr(where, 'opname', '?')}` computes it"
        fits = self.fits_of(args) if self.fits else ()
        if value is not None and op.op in _WRAPPING and not self._fits_statically(value, result.type):
            fits = fits + (Fit(value, result.type, where),)
        if fits:
            self.fits[result] = fits

    def _fits_statically(self, value: Expr, t: Type) -> bool:
        limits = type_range(t)
        if limits is None:
            return True
        if value.constant is not None:
            return limits[0] <= value.constant <= limits[1]
        try:
            lo, hi = interval(self.lower(value), _STATIC), interval(self.upper(value), _STATIC)
        except (Unbounded, KeyError, ZeroDivisionError):
            return False
        return limits[0] <= lo[0] and hi[1] <= limits[1]

    def _compute(self, result: Value, op: IntOp) -> Expr | None:
        name, args = op.op, op.args
        if name == "constant":
            return Expr.const(int(args[0]))
        if name in ("lt", "le", "gt", "ge", "eq", "ne"):
            a, b = self.of(args[0]), self.of(args[1])
            if a is not None and b is not None:
                self.comparisons[result] = (Comparison(a, name, b),)
            return None
        if name == "size":
            return self._size(args[0], args[1])
        if name in self._builtins:
            return self._builtins[name]()
        values = [self.of(a) for a in args]
        if any(v is None for v in values):
            return None
        if isinstance(result.type, BoolType):
            return self._logical(result, name, args)
        if name == "add":
            return simplify(values[0] + values[1])
        if name == "sub":
            return simplify(values[0] - values[1])
        if name == "mul":
            return simplify(values[0] * values[1])
        if name == "neg":
            return simplify(-values[0])
        if name == "cast":
            return values[0]  # (its Fit says whether the type holds it)
        if name in ("min", "max", "div", "rem", "abs"):
            try:
                return node(name, *values)
            except ZeroDivisionError:  # undefined on the device: unknown
                self.unknown[result] = "its divisor is 0"
                return None
        if name == "shl" and values[1].constant is not None and 0 <= values[1].constant < 64:
            return values[0] * (1 << values[1].constant)
        if name == "and":  # with a non-negative constant mask: between 0 and the mask
            mask = values[1].constant if values[1].constant is not None else values[0].constant
            if mask is not None and mask >= 0:
                return Expr.atom(self.variable("masked", ZERO, Expr.const(mask)))
        return None

    def _logical(self, result: Value, name: str, args: tuple) -> None:
        """`and` of two guards holds both (for the region where it is true)."""
        if name == "and":
            parts = [self.comparisons.get(a) for a in args]
            if all(p is not None for p in parts):
                self.comparisons[result] = parts[0] + parts[1]  # type: ignore[operator]
        return None

    # -- values an `if` chooses -------------------------------------------------------------
    def yielded(self, values: tuple | None) -> tuple:
        """Per value a region yields (in its scope, where its guard holds): (its expression,
        its bounds over the launch symbols or None, why there are none, what it must fit)."""
        if values is None:
            return ()
        found = []
        for v in values:
            e = self.of(v) if isinstance(v, (Value, int)) else None
            fits = self.fits_of([v])
            if e is None:
                found.append((None, None, self.why(v), fits))
                continue
            try:
                found.append((e, (self.lower(e), self.upper(e)), "", fits))
            except Unbounded as exc:
                found.append((e, None, f"no bound for it: {exc}", fits))
        return tuple(found)

    def choose(self, results: list, branches: list[tuple], condition: Value | None) -> None:
        """The results of an `if`. `if %a < %b {yield %a} else {yield %b}` is min(a, b) (and the
        like: max, <=, >, >=); any other result is a variable between the lowest and the highest
        bound of what the regions yield; unknown if a region's value has no bound."""
        test = self.comparisons.get(condition, ()) if condition is not None else ()
        for j, result in enumerate(results):
            if not (isinstance(result.type, ScalarType) and result.type.is_int):
                continue
            parts = [b[j] if j < len(b) else (None, None, "a region yields no value for it", ())
                     for b in branches]
            fits = tuple(dict.fromkeys(f for p in parts for f in p[3]))
            if fits:
                self.fits[result] = fits
            picked = _min_or_max(test, [p[0] for p in parts])
            if picked is not None:
                self.values[result] = picked
                continue
            missing = next((p for p in parts if p[1] is None), None)
            if len(parts) != 2 or missing is not None:
                self.values[result] = None
                self.unknown[result] = missing[2] if missing else "an `if` without two regions computes it"
                continue
            low = node("min", *(p[1][0] for p in parts))
            high = node("max", *(p[1][1] for p in parts))
            self.values[result] = Expr.atom(self.variable(result.name or "chosen", low, high))

    # -- builtins ----------------------------------------------------------------------
    def _builtin_table(self, work_group: tuple[int, int] | None,
                       subgroup_size: int | None) -> dict[str, Callable[[], Expr | None]]:
        def known(k: int | None, name: str) -> Expr:
            """A constant once the work-group shape is chosen; before (`tinyc check`) a symbol."""
            return Expr.const(k) if k is not None else Expr.atom(Sym("work_group", (name,), 1))

        def const(k: int | None, name: str = "") -> Callable[[], Expr | None]:
            value = known(k, name)
            return lambda: value

        def lane(name: str, count: int | None, what: str) -> Callable[[], Expr | None]:
            bound = known(count, what) - 1
            return lambda: Expr.atom(self.variable(name, ZERO, bound))

        def batch() -> Expr:
            self.uses_group_size = True
            return Expr.atom(BATCH)

        x, y = work_group if work_group is not None else (None, None)
        sg = subgroup_size
        per_x = x // sg if x is not None and sg else None
        total = per_x * y if per_x is not None and y is not None else None
        return {
            "group_id": lambda: Expr.atom(self.group_id), "group_size": batch,
            "group_id_y": const(0), "group_id_z": const(0), "num_groups_y": const(1), "num_groups_z": const(1),
            "subgroup_size": const(sg, "subgroup_size"), "num_subgroups": const(total, "num_subgroups"),
            "num_subgroups_x": const(per_x, "num_subgroups_x"), "num_subgroups_y": const(y, "num_subgroups_y"),
            "num_subgroups_z": const(1),
            "subgroup_id": lane("subgroup_id", total, "num_subgroups"),
            "subgroup_id_x": lane("subgroup_id_x", per_x, "num_subgroups_x"),
            "subgroup_id_y": lane("subgroup_id_y", y, "num_subgroups_y"), "subgroup_id_z": const(0),
            "subgroup_local_id": lane("subgroup_local_id", sg, "subgroup_size"),
        }

    # -- regions -------------------------------------------------------------------------
    def enter_ranges(self, ranges: tuple) -> None:
        """Define the region arguments a loop states ranges for (LoopRange, TileRange)."""
        for r in ranges:
            if isinstance(r, LoopRange):
                lo, hi = self.of(r.lower), self.of(r.upper)
                last = hi - 1 if hi is not None else None
                step = self.of(r.step) if r.step is not None else None
                k = step.constant if step is not None else None
                if last is not None and lo is not None and k is not None and k > 1:
                    # the last value the step reaches, and never beyond hi - 1 (its interval
                    # may be wider when lo appears twice: `for i = g % 3, 3, 3`)
                    last = node("min", last, lo + node("floordiv", last - lo, Expr.const(k)) * k)
                var = self.variable(r.var.name or "i", lo, last)
                self.values[r.var] = Expr.atom(var)
                self.fits[r.var] = self.fits_of([r.lower, r.upper])
                if lo is not None and hi is not None:  # the body runs: the range is not empty
                    self._refine(Comparison(lo, "lt", hi))
            elif isinstance(r, TileRange):
                offset, hi = self.values.get(r.offset), self.of(r.upper)
                high = node("min", Expr.const(r.tile), hi - offset) if hi is not None and offset is not None \
                    else Expr.const(r.tile)
                var = self.variable(r.var.name or "s", ONE, high)
                self.values[r.var] = Expr.atom(var)

    def region_arguments(self, args: list, described: set) -> None:
        """Region arguments without a stated range (values a loop carries)."""
        for a in args:
            if id(a) not in described:
                self.values[a] = None
                self.unknown[a] = "a loop carries it from one iteration to the next"

    def guard(self, condition: Value, holds: bool) -> None:
        """Bounds a condition puts on the innermost variable it compares, in this scope."""
        found = self.comparisons.get(condition, ())
        if not holds:
            found = tuple(Comparison(c.a, NEGATED[c.op], c.b) for c in found) if len(found) == 1 else ()
        for c in found:
            self._refine(c)

    def _refine(self, c: Comparison, depth: int = 0) -> None:
        """k*x + rest op 0 for x the latest variable, or a node holding it (%l / 4), with k a
        non-zero constant: x's bounds in this scope. A new lower bound must stay below the
        old upper bound (and the other way round), which can bound earlier variables too:
        a tile size >= 32 and <= 70 - i puts i <= 38."""
        d, op = c.a - c.b, c.op
        variables = d.variables()
        if not variables:
            return
        v = max(variables, key=lambda x: x.ident)  # the latest: the others are in its bounds' terms
        subject, k = next(((m[0], c) for m, c in d.terms.items() if len(m) == 1 and
                           (m[0] == v or isinstance(m[0], Node) and v in Expr.atom(m[0]).variables())),
                          (None, 0))
        if subject is None:
            return
        rest = d - Expr.atom(subject) * k
        if v in rest.variables():
            return
        if k < 0:  # k*x + rest op 0  <=>  -k*x - rest op' 0
            k, rest, op = -k, -rest, {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}.get(op, op)
        K = Expr.const(k)
        floor = lambda x: node("floordiv", x, K)  # noqa: E731
        at_most = {"lt": floor(-rest - 1), "le": floor(-rest), "eq": floor(-rest)}.get(op)
        at_least = {"gt": -floor(rest - 1), "ge": -floor(rest), "eq": -floor(rest)}.get(op)  # ceil(-x) = -floor(x)
        if isinstance(subject, Node) and depth < DEPTH:
            self._refine_parts(subject, at_most, at_least, depth)
        low, high = old_low, old_high = self.bounds(subject)
        if at_most is not None:
            high = node("min", high, at_most) if high is not None else at_most
        if at_least is not None:
            low = node("max", low, at_least) if low is not None else at_least
        self.scopes[-1][subject] = (low, high)
        self._scoped.memo = {}   # bounds derived before may rest on the old bounds of `subject`
        if depth < DEPTH:  # what the new bound says of the variables in the old opposite bound
            if at_least is not None and old_high is not None:
                for part in _parts(old_high, "min"):
                    self._refine(Comparison(at_least, "le", part), depth + 1)
            if at_most is not None and old_low is not None:
                for part in _parts(old_low, "max"):
                    self._refine(Comparison(part, "le", at_most), depth + 1)


    def _refine_parts(self, n: Node, at_most: Expr | None, at_least: Expr | None, depth: int) -> None:
        """What a bound of a node says of its arguments: min(a, b) >= L puts a and b above L;
        max(a, b) <= U below U; max(a, 0) >= 1 puts a above 1 (the only argument that can be),
        min(a, 4) <= 2 puts a below 2; floor(x / k) >= L puts x above k·L, <= U below k·U + k - 1."""
        if n.op == "floordiv":
            x, k = n.args
            if k.constant is not None and k.constant > 0:
                if at_least is not None:
                    self._refine(Comparison(x, "ge", at_least * k), depth + 1)
                if at_most is not None:
                    self._refine(Comparison(x, "le", at_most * k + (k.constant - 1)), depth + 1)
            return
        if n.op not in ("min", "max"):
            return
        for limit, op, every in ((at_least, "ge", n.op == "min"), (at_most, "le", n.op == "max")):
            if limit is None:
                continue
            args = n.args
            if not every:  # one argument must: the one that is not a constant failing the bound
                k = limit.constant
                fails = [a for a in args if a.constant is not None and k is not None
                         and (a.constant < k if op == "ge" else a.constant > k)]
                args = tuple(a for a in args if a not in fails) if len(fails) == len(args) - 1 else ()
            for a in args:
                self._refine(Comparison(a, op, limit), depth + 1)


def _min_or_max(test: tuple, chosen: list) -> Expr | None:
    """min(a, b) or max(a, b) when an `if` on the one comparison `test` yields a or b as
    min or max would (then-value first); else None."""
    if len(test) != 1 or len(chosen) != 2 or any(c is None for c in chosen):
        return None
    c = test[0]
    smaller = {"lt": c.a, "le": c.a, "gt": c.b, "ge": c.b}.get(c.op)
    if smaller is None:
        return None
    larger = c.b if smaller is c.a else c.a
    then, otherwise = chosen
    if then == smaller and otherwise == larger:
        return node("min", smaller, larger)
    if then == larger and otherwise == smaller:
        return node("max", smaller, larger)
    return None


def _parts(e: Expr, op: str) -> tuple[Expr, ...]:
    """The arguments of e if it is one `op` node, else (e,)."""
    if len(e.terms) == 1:
        (m, k), = e.terms.items()
        if k == 1 and len(m) == 1 and isinstance(m[0], Node) and m[0].op == op:
            return m[0].args
    return (e,)


class _StaticRanges(dict):
    """Every launch symbol at its static range (for checks at compile time)."""

    def __missing__(self, sym: Sym) -> Interval:
        return static_range(sym)


_STATIC = _StaticRanges()
