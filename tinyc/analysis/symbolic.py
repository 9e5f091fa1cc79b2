"""Integer expressions over launch sizes and loop variables (their bounds: symbolic_bounds.py).

An index in a kernel is an expression of the group id, loop variables,
constants, scalar arguments and sizes of arguments. `Expr` is a polynomial
(integer coefficients) over atoms:

    Sym   a launch symbol: known when a call comes (the batch, a scalar argument,
          a `?` size of an argument, a group's member count, a member's `?` size)
    Var   a variable of the kernel with bounds (group id, loop variables, lanes)
    Node  what a polynomial cannot say: min, max, division, remainder, abs

`upper(e, bounds)` and `lower(e, bounds)` (symbolic_bounds.py) give expressions over Syms only
that bound e for every value its Vars take: the innermost variable first is
replaced by its bound (its upper one where its coefficient is positive, its
lower one where negative, both under a max when the sign is unknown), so
`g*4 + i` with i in [0, 3] and g in [0, N-1] has the upper bound 4N - 1, and a
tile `o + s` with s <= min(16, n - o) has n. Sums distribute into min and max
so such bounds stay exact. `interval(e, values)` evaluates a Sym-only
expression for a launch; a Sym may take an interval (a member's size ranges
over the group's members).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Callable, Iterable, Mapping

Interval = tuple[int, int]


@dataclass(frozen=True)
class Sym:
    """A value known at launch: kind ("batch", "scalar", "dim", "count", "member_dim", "const")
    and what names it (parameter index, mode, ...). `low` bounds it from below for every launch."""

    kind: str
    key: tuple = ()
    low: int | None = None

    def sort_key(self) -> tuple:
        return (0, self.kind, self.key)

    def __repr__(self) -> str:
        return f"{self.kind}{list(self.key) if self.key else ''}"


@dataclass(frozen=True)
class Var:
    """A kernel variable; `depth` orders nesting (inner variables have larger depths)."""

    ident: int
    depth: int
    name: str = ""

    def sort_key(self) -> tuple:
        return (1, self.depth, self.ident)

    def __hash__(self) -> int:  # (bounds look variables up at every step; equal Vars share it)
        return self.ident

    def __repr__(self) -> str:
        return f"%{self.name or self.ident}"


@dataclass(frozen=True)
class Node:
    """A non-polynomial operation: "min", "max" (any number of args), "div", "rem" (C
    semantics: truncation), "floordiv" (rounding down), "abs"."""

    op: str
    args: tuple["Expr", ...]

    def sort_key(self) -> tuple:
        return (2, self.op, tuple(a.sort_key() for a in self.args))

    def __repr__(self) -> str:
        return f"{self.op}({', '.join(map(repr, self.args))})"


Atom = Sym | Var | Node
Monomial = tuple  # sorted atoms


class Expr:
    """A polynomial over atoms with integer coefficients; immutable and hashable."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: Mapping[Monomial, int]):
        self.terms: dict[Monomial, int] = {m: c for m, c in terms.items() if c}
        self._hash: int | None = None

    # -- construction -------------------------------------------------------------
    @staticmethod
    def const(value: int) -> "Expr":
        value = int(value)
        return from_terms({(): value} if value else {})

    @staticmethod
    def atom(atom: Atom) -> "Expr":
        return from_terms({(atom,): 1})

    def __add__(self, other: "Expr | int") -> "Expr":
        other = other if other.__class__ is Expr else _expr(other)
        terms = dict(self.terms)
        for m, c in other.terms.items():
            total = terms.get(m, 0) + c
            if total:
                terms[m] = total
            else:
                del terms[m]  # (c is not 0: m was in self's terms)
        return from_terms(terms)

    __radd__ = __add__

    def __neg__(self) -> "Expr":
        return from_terms({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: "Expr | int") -> "Expr":
        return self + (-_expr(other))

    def __rsub__(self, other: "Expr | int") -> "Expr":
        return _expr(other) - self

    def __mul__(self, other: "Expr | int") -> "Expr":
        other = _expr(other)
        terms: dict[Monomial, int] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                # (a constant factor keeps the other monomial as it is, sorted)
                m = m2 if not m1 else m1 if not m2 else tuple(sorted(m1 + m2, key=_sort_key))
                terms[m] = terms.get(m, 0) + c1 * c2
        return Expr(terms)

    __rmul__ = __mul__

    # -- inspection ----------------------------------------------------------------
    @property
    def constant(self) -> int | None:
        """The value if the expression is a constant, else None."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and () in self.terms:
            return self.terms[()]
        return None

    def atoms(self) -> Iterable[Atom]:
        """Every atom, nested ones (inside nodes) included."""
        for m in self.terms:
            for a in m:
                yield a
                if isinstance(a, Node):
                    for arg in a.args:
                        yield from arg.atoms()

    def variables(self) -> set[Var]:
        """Every Var, nested ones included (`atoms`, written out: bounds ask at every step)."""
        found: set[Var] = set()
        for m in self.terms:
            for a in m:
                if a.__class__ is Var:
                    found.add(a)
                elif a.__class__ is Node:
                    for arg in a.args:
                        found |= arg.variables()
        return found

    def symbols(self) -> set[Sym]:
        return {a for a in self.atoms() if isinstance(a, Sym)}

    def sort_key(self) -> tuple:
        return tuple(sorted((tuple(_sort_key(a) for a in m), c) for m, c in self.terms.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and self.terms == other.terms

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.terms.items()))
        return self._hash

    def __repr__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda t: tuple(_sort_key(a) for a in t[0])):
            body = "*".join(map(repr, m))
            parts.append(str(c) if not m else body if c == 1 else f"-{body}" if c == -1 else f"{c}*{body}")
        return " + ".join(parts).replace("+ -", "- ")

    def substitute(self, atom: Atom, value: "Expr") -> "Expr":
        """The expression with `atom` (also inside nodes) replaced by `value`."""
        result = Expr({})
        for m, c in self.terms.items():
            term = Expr.const(c)
            for a in m:
                if a == atom:
                    term = term * value
                elif isinstance(a, Node):
                    term = term * node(a.op, *(arg.substitute(atom, value) for arg in a.args))
                else:
                    term = term * Expr.atom(a)
            result = result + term
        return result


def _sort_key(atom: Atom) -> tuple:
    return atom.sort_key()


def from_terms(terms: dict[Monomial, int]) -> Expr:
    """An Expr of terms that hold no zero coefficient (Expr() filters them out)."""
    e = _new(Expr)
    e.terms, e._hash = terms, None
    return e


_new = object.__new__


def _expr(value: "Expr | int") -> Expr:
    return value if isinstance(value, Expr) else Expr.const(value)


ZERO = Expr.const(0)
ONE = Expr.const(1)


def node(op: str, *args: Expr) -> Expr:
    """min/max/div/rem/abs, folded where the arguments are constants or agree."""
    values = [a.constant for a in args]
    if all(v is not None for v in values):
        return Expr.const(_apply(op, values))  # type: ignore[arg-type]
    if op in ("min", "max"):
        flat: list[Expr] = []
        for a in args:  # min(min(a, b), c) = min(a, b, c)
            inner = only_node(a)
            flat.extend(inner.args if inner is not None and inner.op == op else (a,))
        unique = sorted(set(flat), key=lambda e: e.sort_key())
        if len(unique) == 1:
            return unique[0]
        return Expr.atom(Node(op, tuple(unique)))
    if op in ("div", "floordiv") and args[1].constant == 1:
        return args[0]
    return Expr.atom(Node(op, tuple(args)))


def only_node(e: Expr) -> Node | None:
    """The node if the expression is exactly one node."""
    if len(e.terms) == 1:
        (m, c), = e.terms.items()
        if c == 1 and len(m) == 1 and isinstance(m[0], Node):
            return m[0]
    return None


def _apply(op: str, values: list[int]) -> int:
    if op == "min":
        return min(values)
    if op == "max":
        return max(values)
    if op == "abs":
        return abs(values[0])
    a, b = values
    if b == 0:
        raise ZeroDivisionError
    if op == "floordiv":
        return a // b
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)
    return q if op == "div" else a - q * b


# -- expression facts -------------------------------------------------------------------------
def simplify(e: Expr) -> Expr:
    """e with its terms moved into its one min or max (x - min(a, x) = max(x - a, 0)), so that
    evaluating it over intervals loses nothing to the repeated x."""
    held = [(m, c) for m, c in e.terms.items() if len(m) == 1 and isinstance(m[0], Node)
            and m[0].op in ("min", "max")]
    if len(held) != 1:
        return e
    (m, c), = held
    rest, n = e - Expr({m: c}), m[0]
    op = n.op if c > 0 else ("max" if n.op == "min" else "min")
    return node(op, *(simplify(a * c + rest) for a in n.args))


def sign_of(e: Expr) -> int | None:
    """+1 or -1 (or 0) if every value of e has that sign; None if unknown.

    Syms of kinds with a known lower bound (`low`) count as non-negative when it is >= 0."""
    k = e.constant
    if k is not None:
        return (k > 0) - (k < 0)
    signs = set()
    for m, c in e.terms.items():
        if not all(isinstance(a, Sym) and a.low is not None and a.low >= 0 for a in m):
            return None
        signs.add(1 if c > 0 else -1)
    return signs.pop() if len(signs) == 1 else None


def lowest(e: Expr) -> int | None:
    """A number <= every value of a Sym-only e, from the Syms' `low` alone (None if e may
    be unbounded below): a divisor max(%n, 1) is at least 1, a size %n at least 0."""
    total = 0
    for m, c in e.terms.items():
        if not m:
            total += c
            continue
        lows = [_lowest_atom(a) for a in m]
        if c < 0 or any(x is None or x < 0 for x in lows):
            return None
        total += c * prod(lows)  # type: ignore[arg-type]
    return total


def _lowest_atom(a: Atom) -> int | None:
    if isinstance(a, Sym):
        return a.low
    if isinstance(a, Var):
        return None
    lows = [lowest(x) for x in a.args]
    if a.op == "max":
        known = [x for x in lows if x is not None]
        return max(known) if known else None
    if a.op == "min":
        return None if None in lows else min(lows)  # type: ignore[type-var]
    if a.op == "abs":
        return 0
    dividend, divisor = lows  # div, floordiv, rem of a non-negative dividend by a positive divisor
    if dividend is None or dividend < 0 or divisor is None or divisor < 1:
        return None
    if a.op == "rem" or a.args[1].constant is None:
        return 0
    return dividend // divisor


# -- evaluation ------------------------------------------------------------------------------
def interval(e: Expr, values: Mapping[Sym, Interval]) -> Interval:
    """The range of a Sym-only expression when each Sym takes its interval (KeyError: a Sym
    without a value)."""
    lo = hi = 0
    for m, c in e.terms.items():
        t = (c, c)
        for a in m:
            t = _times(t, _atom_interval(a, values))
        lo, hi = lo + t[0], hi + t[1]
    return lo, hi


def _times(a: Interval, b: Interval) -> Interval:
    corners = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(corners), max(corners)


def _atom_interval(a: Atom, values: Mapping[Sym, Interval]) -> Interval:
    if isinstance(a, Sym):
        return values[a]
    if isinstance(a, Var):
        raise KeyError(a)
    args = [interval(x, values) for x in a.args]
    if a.op == "min":
        return min(x[0] for x in args), min(x[1] for x in args)
    if a.op == "max":
        return max(x[0] for x in args), max(x[1] for x in args)
    if a.op == "abs":
        (lo, hi), = args
        return (0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))
    (alo, ahi), (blo, bhi) = args
    if blo <= 0 <= bhi:
        if a.op == "rem" and blo == bhi == 0:
            raise ZeroDivisionError
        if a.op in ("div", "floordiv"):
            return min(alo, -ahi, 0), max(ahi, -alo, 0)  # |a / b| <= |a| for |b| >= 1
    if a.op in ("div", "floordiv"):
        corners = [_apply(a.op, [x, y]) for x in (alo, ahi) for y in (blo, bhi) if y]
        return min(corners), max(corners)
    k = max(abs(blo), abs(bhi)) - 1  # rem: |r| < |b|, sign of a
    return (max(-k, min(alo, 0)), min(k, max(ahi, 0)))


def product(values: Iterable[Expr]) -> Expr:
    """The product of expressions (1 for none)."""
    return prod(values, start=ONE)
