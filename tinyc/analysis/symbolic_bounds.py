"""Bounds of integer expressions over every value their kernel variables take (symbolic.py's
`Expr`): what the launch-bounds analysis states of an index, as expressions of launch symbols.

`upper(e, bounds)` replaces the innermost variable first by its bound (the upper one where its
coefficient is positive, the lower one where negative, both under a max when the sign is
unknown); min, max, div, rem and abs are bounded by their arguments' bounds; a product of
variables by the corners of its factors' bounds. `Unbounded` says why no bound exists.
"""

from __future__ import annotations

from typing import Callable

from tinyc.analysis.symbolic import (
    ZERO, Atom, Expr, Monomial, Node, Var, from_terms, lowest, node, only_node, sign_of, simplify,
)

Bounds = Callable[[Atom], "tuple[Expr | None, Expr | None]"]
"""A variable's (lower, upper) bounds (inclusive), as expressions of earlier variables and
Syms; for a node, what a guard says of it (else (None, None))."""


class ScopedBounds:
    """`Bounds` with a `memo` of the upper bounds derived under them (_upper reads it), kept
    by index_values.IndexValues per scope: a pushed scope shares its parent's memo (what it
    adds, fresh variables, changes no earlier derivation) until a guard refines a bound; the
    memo of a scope is restored when the scopes pushed on it are popped."""

    __slots__ = ("lookup", "memo")

    def __init__(self, lookup: Bounds):
        self.lookup = lookup
        self.memo: dict[Expr, Expr] = {}

    def __call__(self, v: Atom) -> tuple[Expr | None, Expr | None]:
        return self.lookup(v)


class Unbounded(Exception):
    """The expression has no bound the analysis can state."""


def upper(e: Expr, bounds: Bounds) -> Expr:
    """An expression over Syms that is >= e for every value of e's variables (Unbounded if none)."""
    return _upper(e, bounds, 0)


def lower(e: Expr, bounds: Bounds) -> Expr:
    """An expression over Syms that is <= e for every value of e's variables."""
    return -_upper(-e, bounds, 0)


def _upper(e: Expr, bounds: Bounds, depth: int) -> Expr:
    """upper() at a depth of the recursion; remembered in `bounds.memo` when the bounds have
    one (ScopedBounds: the bounds derived under the current scopes, which a
    kernel's many accesses share: a lane kernel asked 8,389 times for 270 expressions)."""
    memo = getattr(bounds, "memo", None)
    if memo is None:
        return _derive_upper(e, bounds, depth)
    found = memo.get(e)
    if found is None:
        found = memo[e] = _derive_upper(e, bounds, depth)
    return found


def _derive_upper(e: Expr, bounds: Bounds, depth: int) -> Expr:
    if depth > 64:
        raise Unbounded("the bounds nest too deeply")
    variables = e.variables()
    if not variables:
        return e
    alone = only_node(e)
    if alone is not None:
        return _node_bound(alone, bounds, True, depth)
    v = max(variables, key=lambda x: (x.depth, x.ident))  # the innermost variable first
    linear = _linear_in(e, v)
    if linear is None:  # v inside a node or in a product with itself: bound those parts first
        return _upper(_bound_parts(e, bounds, depth), bounds, depth + 1)
    coefficient, rest = linear
    low, high = bounds(v)
    sign = sign_of(coefficient)
    if sign is None:
        choices = [low, high]
    else:
        choices = [high if sign > 0 else low]
    if any(c is None for c in choices):
        raise Unbounded(f"{v!r} has no bound")
    options = [_upper(_distribute(coefficient, c, rest), bounds, depth + 1) for c in choices]
    return options[0] if len(options) == 1 else node("max", *options)


def _lower(e: Expr, bounds: Bounds, depth: int) -> Expr:
    return -_upper(-e, bounds, depth + 1)


def _linear_in(e: Expr, v: Var) -> tuple[Expr, Expr] | None:
    """(a, b) with e = a*v + b and v in neither, or None."""
    a: dict[Monomial, int] = {}
    b: dict[Monomial, int] = {}
    for m, c in e.terms.items():
        if any(x.__class__ is Node and any(v in arg.variables() for arg in x.args) for x in m):
            return None
        count = m.count(v)
        if count == 0:
            b[m] = c  # (the monomials of e differ: no two land on one)
        elif count == 1:
            rest = list(m)
            rest.remove(v)
            a[tuple(rest)] = c
        else:
            return None
    return from_terms(a), from_terms(b)


def _distribute(coefficient: Expr, value: Expr, rest: Expr) -> Expr:
    """coefficient*value + rest, with a constant coefficient and the rest pushed inside a
    min or max value (so that a bound like o + min(16, n - o) becomes min(o + 16, n))."""
    inner = only_node(value)
    k = coefficient.constant
    if inner is not None and inner.op in ("min", "max") and k:
        op = inner.op if k > 0 else ("max" if inner.op == "min" else "min")
        return node(op, *(simplify(a * k + rest) for a in inner.args))
    return simplify(coefficient * value + rest)


def _node_bound(n: Node, bounds: Bounds, up: bool, depth: int) -> Expr:
    """An upper (or lower) bound of a node's value; also what a guard says of it (`bounds`
    of the node: `if %q < %m` with %q = %l / 4)."""
    found = _own_node_bound(n, bounds, up, depth)
    low, high = bounds(n)  # type: ignore[arg-type]
    guard = high if up else low
    if guard is None:
        return found
    guard = (_upper if up else _lower)(guard, bounds, depth + 1)
    return node("min" if up else "max", found, guard)


def _own_node_bound(n: Node, bounds: Bounds, up: bool, depth: int) -> Expr:
    bound = _upper if up else _lower
    if n.op in ("min", "max"):  # monotone in every argument
        return node(n.op, *(bound(a, bounds, depth + 1) for a in n.args))
    if n.op in ("div", "floordiv"):
        a, b = n.args
        least = lowest(b)
        if b.variables() or least is None or least < 0 or b.constant == 0:
            raise Unbounded("a division by a variable or by a number that may be negative")
        return node(n.op, bound(a, bounds, depth + 1), b)  # monotone for a non-negative divisor
    if n.op == "rem":
        a, b = n.args
        least = lowest(b) if b.constant is None else abs(b.constant)
        if b.variables() or least is None or least < 1:
            raise Unbounded("a remainder by a variable or by a size that may be 0")
        k = Expr.const(abs(b.constant)) if b.constant is not None else b
        if up:  # the remainder has the dividend's sign and is smaller than |b|
            return node("min", k - 1, node("max", _upper(a, bounds, depth + 1), ZERO))
        return node("max", 1 - k, node("min", _lower(a, bounds, depth + 1), ZERO))
    if n.op == "abs":
        a = n.args[0]
        if up:
            return node("max", _upper(a, bounds, depth + 1), -_lower(a, bounds, depth + 1))
        return node("max", _lower(a, bounds, depth + 1), -_upper(a, bounds, depth + 1), ZERO)
    raise Unbounded(f"no bound for {n.op}")


def _bound_parts(e: Expr, bounds: Bounds, depth: int) -> Expr:
    """An upper bound of e in which every node holding a variable, and every product of
    variables, is replaced by its bound (a node only in a monomial of its own)."""
    result = Expr({})
    for m, c in e.terms.items():
        held = [x for x in m if isinstance(x, Node) and Expr.atom(x).variables()]
        if held:
            if len(m) != 1:
                raise Unbounded("a product with a min, max, division or remainder")
            n = held[0]
            k = n.args[1].constant if n.op == "floordiv" else None
            if k and k > 0 and c % k == 0:  # c*floor(x/k) is c/k*x, less at most c/k*(k - 1)
                x = n.args[0]
                result = result + (x if c > 0 else x - (k - 1)) * (c // k)
                continue
            result = result + _node_bound(n, bounds, c > 0, depth) * c
        elif sum(isinstance(x, Var) for x in m) > 1:
            result = result + _product_bound(m, c, bounds, depth)
        else:
            result = result + Expr({m: c})
    return result


def _product_bound(m: Monomial, c: int, bounds: Bounds, depth: int) -> Expr:
    """An upper bound of a product of variables (v*v, v*w): the largest corner of its
    factors' bounds."""
    corners = [Expr.const(c)]
    for x in m:
        f = Expr.atom(x)
        lo, hi = _lower(f, bounds, depth + 1), _upper(f, bounds, depth + 1)
        corners = [y * z for y in corners for z in (lo, hi)]
    return node("max", *corners)
