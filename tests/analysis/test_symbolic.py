"""Bounds of index expressions (symbolic.py, symbolic_bounds.py), checked against enumeration.

Every bound the analysis states must hold for every value the variables take:
small random expressions over a few bounded variables are enumerated
exhaustively and compared with `upper`/`lower` evaluated with `interval`.
Hand-picked cases check that the bounds are also tight where kernels need
them (4·g + i, a tile clipped at the end of its range).
"""

from __future__ import annotations

import itertools
import random

import pytest

from tinyc.analysis.symbolic import ONE, ZERO, Expr, Sym, Var, interval, lowest, node, simplify
from tinyc.analysis.symbolic_bounds import Unbounded, lower, upper

N = Sym("batch", (), 0)
n = Sym("dim", (0, 0), 0)


def bounds_of(table):
    return lambda v: table.get(v, (None, None))


def test_polynomials_cancel():
    g, i = Var(1, 1, "g"), Var(2, 2, "i")
    e = Expr.atom(g) * 4 + Expr.atom(i) - Expr.atom(g) * 4
    assert e == Expr.atom(i)
    assert (Expr.atom(n) - 1 - (Expr.atom(n) - 1)).constant == 0
    assert ((Expr.atom(g) + 1) * (Expr.atom(g) - 1)) == Expr.atom(g) * Expr.atom(g) - 1


def test_group_times_four_plus_lane():
    """g*4 + i with i < 4 and g < N reaches 4N - 1, not more."""
    g, i = Var(1, 1, "g"), Var(2, 2, "i")
    table = {g: (ZERO, Expr.atom(N) - 1), i: (ZERO, Expr.const(3))}
    e = Expr.atom(g) * 4 + Expr.atom(i)
    assert upper(e, bounds_of(table)) == Expr.atom(N) * 4 - 1
    assert lower(e, bounds_of(table)) == ZERO


def test_a_tile_clipped_at_the_end_stays_inside():
    """o + s - 1 with s <= min(16, n - o) and o < n: at most n - 1."""
    o, s = Var(1, 1, "o"), Var(2, 2, "s")
    table = {o: (ZERO, Expr.atom(n) - 1), s: (ONE, node("min", Expr.const(16), Expr.atom(n) - Expr.atom(o)))}
    high = upper(Expr.atom(o) + Expr.atom(s) - 1, bounds_of(table))
    for size in range(0, 40):
        assert interval(high, {n: (size, size)})[1] <= max(size - 1, 15 if size == 0 else size - 1)
    assert interval(simplify(Expr.atom(n) - 1 - high), {n: (37, 37)})[0] >= 0


def test_unknown_signs_take_both_ends():
    i, a = Var(1, 1, "i"), Sym("scalar", (0, (-10, 10)), -10)
    table = {i: (ZERO, Expr.const(5))}
    e = Expr.atom(a) * Expr.atom(i)
    high = upper(e, bounds_of(table))
    for value in range(-10, 11):
        assert interval(high, {a: (value, value)})[1] == max(0, 5 * value)


def test_a_variable_without_bounds_is_unbounded():
    v = Var(1, 1, "v")
    with pytest.raises(Unbounded):
        upper(Expr.atom(v) + 1, bounds_of({}))


def test_simplify_moves_terms_into_min_and_max():
    x = Expr.atom(n)
    e = x - 1 - node("min", Expr.const(15), x - 1)
    assert simplify(e) == node("max", x - 16, ZERO)
    assert interval(simplify(e), {n: (0, 100)})[0] == 0


@pytest.mark.parametrize("op, pairs", [
    ("div", [(7, 2), (-7, 2), (7, -2), (0, 5)]), ("rem", [(7, 2), (-7, 2), (7, -3)]),
    ("floordiv", [(7, 2), (-7, 2), (-8, 4)]), ("min", [(3, -4)]), ("max", [(3, -4)]),
])
def test_nodes_fold_as_c_and_python_do(op, pairs):
    import math

    for a, b in pairs:
        got = node(op, Expr.const(a), Expr.const(b)).constant
        want = {"div": int(a / b) if b else None, "rem": int(math.fmod(a, b)), "floordiv": a // b,
                "min": min(a, b), "max": max(a, b)}[op]
        assert got == want, (op, a, b)


def test_a_remainder_by_a_size_at_least_one_is_below_it():
    """rem(g, max(n, 1)) lies in [0, max(n, 1) - 1]: a batch entry split by a dynamic size
    (generated kernels with two batch labels) indexes that mode within its size."""
    g = Var(1, 1, "g")
    table = {g: (ZERO, Expr.atom(N) - 1)}
    split = node("rem", Expr.atom(g), node("max", Expr.atom(n), ONE))
    high, low = upper(split, bounds_of(table)), lower(split, bounds_of(table))
    for size in (1, 5, 300):
        assert interval(high, {N: (10**6, 10**6), n: (size, size)})[1] == size - 1
        assert interval(low, {N: (10**6, 10**6), n: (size, size)})[0] == 0


@pytest.mark.parametrize("divisor", [Expr.atom(n), Expr.atom(n) - 1, node("min", Expr.atom(n), ONE)])
def test_a_remainder_by_a_size_that_may_be_zero_is_unbounded(divisor):
    g = Var(1, 1, "g")
    with pytest.raises(Unbounded, match="may be 0"):
        upper(node("rem", Expr.atom(g), divisor), bounds_of({g: (ZERO, Expr.atom(N) - 1)}))


@pytest.mark.parametrize("e, least", [
    (Expr.const(-3), -3), (Expr.atom(n), 0), (Expr.atom(n) + 2, 2), (Expr.atom(n) * 3 + 1, 1),
    (node("max", Expr.atom(n), ONE), 1), (node("max", -Expr.atom(n), Expr.const(2)), 2),
    (node("min", Expr.atom(n) + 4, Expr.const(2)), 2), (node("div", Expr.atom(n) + 9, Expr.const(4)), 2),
    (-Expr.atom(n), None), (node("min", -Expr.atom(n), ONE), None),
])
def test_lowest_bounds_an_expression_from_below_over_every_launch(e, least):
    assert lowest(e) == least
    if least is not None:
        assert all(interval(e, {n: (k, k)})[0] >= least for k in range(0, 50))


# -- soundness against enumeration ----------------------------------------------------------------
def _random_expr(rng, atoms, depth=0):
    choice = rng.random()
    if depth > 2 or choice < 0.3:
        return rng.choice(atoms + [Expr.const(rng.randint(-3, 5))])
    a, b = _random_expr(rng, atoms, depth + 1), _random_expr(rng, atoms, depth + 1)
    op = rng.choice(["add", "sub", "mul", "min", "max", "div", "rem", "floordiv"])
    if op in ("div", "rem", "floordiv"):
        size = Expr.atom(n)  # divisors a kernel splits a batch entry by: sizes at least 1
        divisors = [Expr.const(k) for k in (1, 2, 3, 4)] + [node("max", size, ONE), size + 1,
                                                             node("min", size + 1, Expr.const(3))]
        return node(op, a, rng.choice(divisors))
    return {"add": a + b, "sub": a - b, "mul": a * b}.get(op) or node(op, a, b)


def _plug(e, env):
    for var, value in env.items():
        e = e.substitute(var, Expr.const(value))
    return e


@pytest.mark.parametrize("seed", range(80))
def test_bounds_hold_for_every_value(seed):
    rng = random.Random(seed)
    g, i, j = Var(1, 1, "g"), Var(2, 2, "i"), Var(3, 3, "j")
    # j's bounds depend on i (a triangular loop), i's on g
    table = {g: (ZERO, Expr.atom(N) - 1), i: (Expr.atom(g), Expr.atom(g) + 2),
             j: (ZERO, Expr.atom(i))}
    e = _random_expr(rng, [Expr.atom(g), Expr.atom(i), Expr.atom(j), Expr.atom(n)])
    try:
        high, low = upper(e, bounds_of(table)), lower(e, bounds_of(table))
    except Unbounded:
        return
    for batch, size in itertools.product((1, 2, 3), (0, 1, 4)):
        syms = {N: (batch, batch), n: (size, size)}
        hi, lo = interval(high, syms)[1], interval(low, syms)[0]
        for gv in range(batch):
            for iv in range(gv, gv + 3):
                for jv in range(0, iv + 1):
                    value = interval(_plug(e, {g: gv, i: iv, j: jv}), syms)[0]
                    assert lo <= value <= hi, (e, gv, iv, jv, batch, size)
