"""Bad statements and shapes: a ValueError or TypeError naming the statement and the label
or tensor, with carets under it (no device needed: these fail before anything compiles)."""

from __future__ import annotations

import pytest

from tinyc.contractions.statement_check import check, check_shapes
from tinyc.contractions.statements import parse

SHAPES = {"K": (3, 56, 56), "Q": (56, 9, None), "A": (3, 9, 9, None), "Q2": (56, 9, None)}


def error_of(statements, shapes=SHAPES):
    with pytest.raises((ValueError, TypeError)) as info:
        check(parse(statements), check_shapes(shapes))
    return info.value


def caret_under(err, text):
    """The excerpt's carets stand under `text` in the statement line."""
    lines = str(err).splitlines()
    line, carets = lines[-2], lines[-1]
    start = carets.index("^")
    return line[start:start + carets.count("^")] == text


@pytest.mark.parametrize("statement, message, under", [
    ("T[k,q,e] K[d,l,k]", "expected '=', '+=' or '-=' after the target, found 'K'", "K"),
    ("T[k,q,e] = K[d,l,k] * (Q[l,a,e])", "parentheses are not part of the notation", "("),
    ("T[k,q,e] = K[d,l,k] * Q[l,a,e] $", "unexpected character '$'", "$"),
    ("T[k,q,e] = 2 * dt", "each term needs a tensor", "2 * dt"),
    ("T[k,k] = K[d,l,k]", "label 'k' repeats in T[...]", "k"),
    ("T[k,q,e] = K[d,l,k] Q[l,a,e]", "unexpected 'Q' after the last term", "Q"),
    ("T[k,q,e] = K[d,l,", "expected a label", None),
    ("Q2[k,q,e] = Q[k,q,e] / Q[k,q,e]", "cannot divide by the tensor Q", "Q"),
    ("Q2[k,q,e] = Q[k,q,e] / 0", "division by zero", "0"),
    ("[k] = Q[k]", "a statement starts with its target tensor", "["),
    ("Q2[k,q,e] = dt**x * Q[k,q,e]", "expected a positive integer exponent after '**', found 'x'", "x"),
    ("Q2[k,q,e] = dt**0 * Q[k,q,e]", "expected a positive integer exponent after '**', found '0'", "0"),
    ("Q2[k,q,e] = Q[k,q,e]**2", "unexpected '**' after the last term", "**"),
])
def test_syntax_errors_name_the_statement_and_point_at_the_token(statement, message, under):
    err = error_of([statement])
    assert isinstance(err, ValueError)
    assert str(err).startswith("statement 1: ") and message in str(err)
    assert statement in str(err)
    if under is not None:
        assert caret_under(err, under), str(err)


def test_the_statement_number_counts_from_one():
    err = error_of(["Q2[k,q,e] = Q[k,q,e]", "Q2[k,q,e] += K[d,l,k] * Q[l,q]"])
    assert str(err).startswith("statement 2: Q has 3 modes (shape (56, 9, None)) but Q[l,q] names 2")
    assert caret_under(err, "Q[l,q]")


@pytest.mark.parametrize("statements, kind, message, under", [
    (["Q2[k,q,e] = K[d,l,k] * A[d,l,q,e] + Q[k,q,e]"], ValueError,
     "label 'l' is 56 in K (mode 1) but 9 in A (mode 1)", "l"),
    (["Q2[k,q,e] = X[k,q,e] + K[d,l,k] * Q[l,q,e] * A[d,q,q2,e]"], ValueError,
     "X has no shape: give it in shapes=", "X[k,q,e]"),
    (["Q2[k,q,e] = T[k,q,e]", "T[k,q,e] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e]"], ValueError,
     "T is read before statement 2 assigns it", "T[k,q,e]"),
    (["T[k,q,e] += K[d,l,k] * Q[l,a,e] * A[d,a,q,e]", "Q2[k,q,e] = T[k,q,e]"], ValueError,
     "T is accumulated into before any statement assigns it", "T[k,q,e]"),
    (["Q2[k,q,e] = dt * K[d,l,k] * Q[l,a,e] * A[d,a,q,e] + dt[k] * Q[k,q,e]"], TypeError,
     "dt is a scalar (used without brackets elsewhere), not a tensor", "dt[k]"),
    (["Q2[k,q,e] = K * K[d,l,k] * Q[l,a,e] * A[d,a,q,e]"], TypeError,
     "K is a tensor; write it with its labels, K[...]", "K"),
    (["Q2[k,q,e] = K[d,l,k] * Q[l,a,e] * A[d,a,q,f]"], ValueError,
     "the batch modes (None in shapes=) of Q and A have the labels 'e' and 'f'", "f"),
    (["Q2[k,q,e] = K[e,l,k] * Q[l,a,e] * A[e,a,q,e]"], ValueError,
     "label 'e' repeats in A[...]", "e"),
    (["Q2[k,q,e] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e] + K[e,l,k] * Q[l,q,e]"], ValueError,
     "label 'e' is the batch mode of Q but mode 0 of K (size 3)", "e"),
    (["T[k,q] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e]", "Q2[k,q,e] = Q[k,q,e]"], ValueError,
     "label 'e' is the batch mode (None in shapes=) and would be summed", "T[k,q]"),
    (["Q2[k,q,x] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e]"], ValueError,
     "have the labels 'e' and 'x'", "x"),
    (["T[k,x] = K[d,l,k]", "Q2[k,q,e] = Q[k,q,e] * A[d,a,q,e]"], ValueError,
     "label 'x' of T appears in no term, so its size is unknown", "x"),
    (["K[d,l,k] = K[d,l,k] * K[d,l,k]", "Q2[k,q,e] = Q[l,a,e] * A[d,a,q,e]"], ValueError,
     "K has no batch mode (None in shapes=), so every work-group of the batch would write it", "K[d,l,k]"),
    (["dt[k,q,e] = Q[k,q,e] + dt * Q[k,q,e] + K[d,l,k] * A[d,a,q,e]"], TypeError,
     "dt is a tensor; write it with its labels, dt[...]", "dt"),
])
def test_check_errors_name_the_statement_and_the_label(statements, kind, message, under):
    err = error_of(statements)
    assert isinstance(err, kind), repr(err)
    assert message in str(err), str(err)
    assert str(err).startswith("statement ")
    if under is not None:
        assert caret_under(err, under), str(err)


def test_a_scalar_that_a_later_statement_assigns_is_a_tensor():
    err = error_of(["Q2[k,q,e] = T * Q[k,q,e] + K[d,l,k] * A[d,a,q,e]", "T[k] = K[d,l,k]"])
    assert isinstance(err, TypeError) and "T is a tensor" in str(err)


@pytest.mark.parametrize("shapes, kind, message", [
    ([("K", (3,))], TypeError, "shapes= must be a dict"),
    ({"K": 3}, TypeError, "the shape of K must be a tuple"),
    ({"K": (3, 1.5)}, TypeError, "the shape of K holds 1.5"),
    ({"K": (3, 0)}, ValueError, "sizes must be at least 1"),
    ({"K": (None, 3, None)}, ValueError, "K has 2 None modes"),
    ({"2K": (3,)}, ValueError, "'2K' is not a tensor name"),
])
def test_bad_shapes(shapes, kind, message):
    with pytest.raises(kind, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_shapes(shapes)


def test_a_shape_no_statement_uses_is_an_error():
    err = error_of(["Q2[k,q,e] = Q[k,q,e]"], {**SHAPES})
    assert "shapes=: no statement uses K" in str(err)


def test_statements_that_write_only_temporaries_are_an_error():
    """Every target missing from shapes= is a temporary: the kernel would write nothing
    (it compiled to an empty loop, with an unused-value warning, and its call refused Q2)."""
    shapes = {"K": (3, 56, 56), "Q": (56, 9, None), "A": (3, 9, 9, None)}
    err = error_of(["T[k,q,e] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e]", "Q2[k,q,e] = Q[k,q,e] + dt * T[k,q,e]"],
                   shapes)
    assert str(err).startswith("statement 2: no statement writes an argument: Q2, T are temporaries")
    assert "give Q2's shape in shapes=" in str(err)
    assert caret_under(err, "Q2[k,q,e]")


@pytest.mark.parametrize("bad", ["Q2[k,q,e] = Q[k,q,e]", ["Q2[k,q,e] = Q[k,q,e]", 3], []])
def test_statements_must_be_a_list_of_strings(bad):
    with pytest.raises((TypeError, ValueError)):
        parse(bad)


def test_signs_numbers_and_scalar_factors_are_parsed():
    [s] = parse(["X[i] -= -2 * a / b**2 * Y[i] + 0.5e1 * Z[i,j] / c - 3**2 * W[i]"])
    assert s.accumulate
    numbers = [t.number for t in s.terms]
    assert numbers == [2.0, -5.0, 9.0]   # -= negates every term
    first = s.terms[0]
    assert [(x.name, x.inverse) for x in first.scalars] == [("a", False), ("b", True), ("b", True)]
    assert [str(a) for a in s.terms[1].tensors] == ["Z[i,j]"]
    assert [(x.name, x.inverse) for x in s.terms[1].scalars] == [("c", True)]
