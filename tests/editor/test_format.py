"""`tinyc fmt`'s layout (tinyc.editor.format): canonical, idempotent, meaning kept, comments kept."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from tinyc.diagnostics import CompilationError
from tinyc.editor.format import format_source
from tinyc.editor.tokens import editor_tokens
from tinyc.compiler import check_source
from tinyc.parser import parse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ir_equality import assert_same_ir  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SAMPLES = sorted((REPO / "samples").glob("*.ir"))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_samples_are_formatted(sample):
    text = sample.read_text()
    assert format_source(text) == text


def _respaced(text: str, rng: random.Random) -> str:
    """`text` with the white space between tokens redrawn; blank lines and the line
    breaks before comments (trailing or on their own line) are kept."""
    tokens = editor_tokens(text)
    out = [tokens[0].text]
    for prev, token in zip(tokens, tokens[1:]):
        gap = text[prev.end:token.start]
        if gap.count("\n") >= 2:
            out.append("\n\n" + rng.choice(["", "\t", "    "]))
        elif token.is_comment or prev.is_comment:
            out.append(gap if token.is_comment else "\n" + rng.choice(["", "  ", "\t"]))
        else:
            out.append(rng.choice([" ", "  ", "\t", "\n", " \n   ", "\r\n  "]))
        out.append(token.text)
    return "".join(out) + "\n"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_layout_does_not_depend_on_the_input_layout(sample):
    text = sample.read_text()
    rng = random.Random(sample.name)
    for _ in range(20):
        messy = _respaced(text, rng)
        formatted = format_source(messy)
        assert formatted == text
        assert_same_ir(parse(messy), parse(formatted))


MESSY = """\
  ; leading comment


func @f(%a: f32, ; the a
        %B: memref<f32x4x?, strided<1, ?>> {alignment = 16}, %G: group<memref<f32 x 8> x ?, offset : ?>) attributes{subgroup_size=16}{ ; body
  %c = constant [1.0,2.0]:c32   ; complex


  %x,%y=foreach(%i,%j):i32=(%a,%a),(%a,%a){ }
  %s = subview %B[0:2, %i] : memref<f32x2>   ; trailing
  %e = expand %B[0->2x%n] : memref<f32x2x2x?>
  %p = if %cond -> (f32, i32) { yield (%a, %b) } else { ; else
    yield (%a,
      ; own line inside
      %b) }
  gemm.n.t.atomic %a, %a, ; mid
     %a, %a, %a
  barrier.global.local
  %q = for %k=%a,%b,%c init(%u=%v,%w=%z)->(f32,f32){yield (%u,%w)} {unroll=true, "x"=[1,[2,3],{"a"=1}]}
} ; end
; between
func @g() {}
func @h() {
}
; tail
"""

CANONICAL = """\
; leading comment

func @f(%a: f32,  ; the a
        %B: memref<f32x4x?,strided<1,?>> {alignment=16},
        %G: group<memref<f32x8>x?, offset: ?>) attributes {subgroup_size=16} {  ; body
  %c = constant [1.0, 2.0] : c32  ; complex

  %x, %y = foreach (%i, %j) : i32 = (%a, %a), (%a, %a) {
  }
  %s = subview %B[0:2, %i] : memref<f32x2>  ; trailing
  %e = expand %B[0 -> 2 x %n] : memref<f32x2x2x?>
  %p = if %cond -> (f32, i32) {
    yield (%a, %b)
  } else {  ; else
    yield (%a,
        ; own line inside
        %b)
  }
  gemm.n.t.atomic %a, %a,  ; mid
      %a, %a, %a
  barrier.global.local
  %q = for %k = %a, %b, %c init(%u = %v, %w = %z) -> (f32, f32) {
    yield (%u, %w)
  } {unroll=true, "x"=[1, [2, 3], {"a"=1}]}
}  ; end

; between
func @g() {
}

func @h() {
}

; tail
"""


def test_canonical_layout_of_a_messy_file():
    assert format_source(MESSY) == CANONICAL
    assert format_source(CANONICAL) == CANONICAL


def test_comments_are_kept_word_for_word():
    comments = [t.text.rstrip() for t in editor_tokens(MESSY) if t.is_comment]
    assert [t.text for t in editor_tokens(format_source(MESSY)) if t.is_comment] == comments


def test_long_headers_get_one_argument_per_line_short_ones_one_line():
    short = "func @f(%a: f32,\n        %b: f32) {\n}\n"
    assert format_source(short) == "func @f(%a: f32, %b: f32) {\n}\n"
    args = ", ".join(f"%argument{i}: memref<f32x16x16x?>" for i in range(4))
    long = format_source(f"func @long({args}) {{}}")
    lines = long.splitlines()
    assert lines[0] == "func @long(%argument0: memref<f32x16x16x?>,"
    assert all(line.startswith(" " * len("func @long(") + "%argument") for line in lines[1:4])
    assert max(map(len, lines)) <= 100


def test_glued_tokens_that_would_merge_get_a_space():
    # `%n` and `x` glued would read `%nx`
    text = "func @f(%A: memref<f32x8x?>, %n: index) {\n  %e = expand %A[1 -> %n x 4] : memref<f32x8x?x4>\n}\n"
    formatted = format_source(text)
    assert "%n x 4" in formatted
    assert_same_ir(parse(text), parse(formatted))


def test_formatted_programs_still_check():
    for sample in SAMPLES:
        check_source(format_source(_respaced(sample.read_text(), random.Random(1))))


@pytest.mark.parametrize("text", ["", "\n\n", "; only a comment\n", "\ufeff"])
def test_empty_and_comment_only_files(text):
    formatted = format_source(text)
    assert formatted == ("; only a comment\n" if "comment" in text else "")


def test_syntax_errors_are_reported_not_formatted():
    with pytest.raises(CompilationError) as err:
        format_source("func @f() {\n  %x = constant 1.0 f32\n}\n", "bad.ir")
    assert str(err.value).startswith("bad.ir:2.")
