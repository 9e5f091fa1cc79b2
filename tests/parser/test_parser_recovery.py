"""More than the first error: resynchronisation, where a missing `: type` is reported,
notes at definitions out of scope, and "did you mean" only for close matches."""

from __future__ import annotations

import pytest

from parser_testlib import error_of, errors_of, where
from tinyc.diagnostics import did_you_mean


def wrap(body: str) -> str:
    return "func @f(%a: f32, %i: index, %M: memref<f32x8x8>) {\n" + body + "\n}\n"


def test_independent_syntax_errors_are_all_reported():
    text = wrap("  %x = arith.add %a, %a\n"       # line 2: missing ': f32'
                "  %y = gemn.n.t %a\n"              # line 3: misspelled instruction
                "  %z = load %M[%i, %i] f32\n"      # line 4: missing ':'
                "  %w = constant 1.0 : float")      # line 5: unknown type
    found = [(d.line, d.message) for d in errors_of(text)]
    assert found == [
        (2, "expected ':' after '%a' at the end of the line"),
        (3, "unknown instruction 'gemn' (did you mean 'gemm'?)"),
        (4, "unexpected 'f32', expected ':'"),
        (5, "unknown type 'float' (did you mean 'f32'?)"),
    ]


def test_errors_in_several_functions_and_a_lexical_error():
    text = ("func @f(%a: f23) {}\n"
            "func @g() {\n  %s = \"oops\n  %x = constant 1 : i32\n}\n"
            "func @h() {\n  %y = constant 2 : i33\n}\n")
    found = [(d.line, d.column) for d in errors_of(text)]
    assert found == [(1, 13), (3, 8), (7, 21)]


def test_at_most_twenty_errors_are_reported():
    text = wrap("\n".join("  %x = arith.add %a, %a" for _ in range(30)))
    diagnostics = errors_of(text)
    assert len(diagnostics) == 20
    assert "too many errors (20)" in diagnostics[-1].notes[0].message


def test_a_region_opened_on_a_broken_line_is_skipped_whole():
    """The body of a `for` whose head is broken must not close the function early."""
    text = wrap("  for %k = %i %i {\n"
                "    %x = arith.add %a, %a : f32\n"
                "  }\n"
                "  %y = arith.ad %a, %a : f32")
    found = [(d.line, d.message) for d in errors_of(text)]
    assert found == [(2, "unexpected '%i', expected ','"),
                     (5, "unknown instruction 'arith.ad' (did you mean 'arith.add'?)")]


@pytest.mark.parametrize("body, location", [
    ("  %n = size %M[0]\n  %x = arith.add %a, %a : f32", (2, 18, 18)),
    ("  %x = load %M[%i, %i]", (2, 23, 23)),
    ("  %x = cast %a", (2, 15, 15)),
])
def test_a_missing_type_is_reported_on_the_instruction_line(body, location):
    d = error_of(wrap(body))
    assert where(d) == location
    assert d.message.startswith("expected ':'") and "at the end of the line" in d.message


def test_a_value_used_outside_its_region_points_at_its_definition():
    text = wrap("  %z = constant 0 : index\n"
                "  %n = constant 4 : index\n"
                "  for %k = %z, %n {\n"
                "    %inner = arith.add %a, %a : f32\n"
                "  }\n"
                "  %out = arith.add %inner, %a : f32")
    d = error_of(text)
    assert d.message == "undefined value '%inner'" and d.line == 7
    [note] = d.notes
    assert note.span.line == 5 and "is defined here" in note.message
    assert "does not enclose this use" in note.message


@pytest.mark.parametrize("word, candidates, expected", [
    ("math.log", ["math.exp", "math.native_exp"], None),
    ("float", ["f32", "f64", "i32"], "f32"),
    ("double", ["f32", "f64"], "f64"),
    ("flaot", ["f32", "f64"], "f32"),
    ("gemn", ["gemm", "gemv", "ger"], "gemm"),
    ("arith.ad", ["arith.add", "arith.and"], "arith.add"),
    ("f23", ["f32", "f16"], "f32"),
    ("%x", ["%a", "%y"], None),
    ("%alpah", ["%alpha", "%beta"], "%alpha"),
    ("xyzzy", ["gemm", "axpby"], None),
    ("align", ["alignment", "unroll"], "alignment"),
])
def test_did_you_mean_offers_only_close_matches(word, candidates, expected):
    hint = did_you_mean(word, candidates)
    assert hint == (f" (did you mean '{expected}'?)" if expected else "")


def test_a_far_unknown_math_function_gets_no_suggestion_in_a_program():
    d = error_of(wrap("  %x = math.hypot %a : f32"))
    assert d.message == "unknown instruction 'math.hypot'"
