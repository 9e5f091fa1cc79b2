"""Every value, instruction, operand and type annotation points at its source text."""

from __future__ import annotations

from tinyc.diagnostics import Span
from tinyc.parser import parse

TEXT = """\
func @k(%alpha: f32,
        %A: group<memref<f32x16x8>x?>, %n: index) {
  %0 = builtin.group_id : index
  %1 = load %A[%0] : memref<f32x16x8>
  %2 = subview %1[%0:4, 2:%n] : memref<f32x4x?,strided<1,16>>
  gemm.n.t %alpha, %1, %1, %alpha, %1
  %r, %s = for %i = %0, %n, %0 init(%x = %alpha, %y = %alpha) -> (f32, f32) {
    yield (%y, %x)
  }
}
"""


def pos(span: Span) -> tuple[int, int, int, int]:
    return span.line, span.column, span.end_line, span.end_column


def text_of(span: Span) -> str:
    """The source text a single-line span covers."""
    assert span.line == span.end_line
    return TEXT.splitlines()[span.line - 1][span.column - 1: span.end_column]


def program():
    return parse(TEXT, "k.ir")


def test_argument_spans():
    alpha, A, n = program().functions[0].args
    assert text_of(alpha.span) == "%alpha" and pos(alpha.span) == (1, 9, 1, 14)
    assert text_of(alpha.type_span) == "f32"
    assert text_of(A.type_span) == "group<memref<f32x16x8>x?>"
    assert text_of(n.span) == "%n"
    assert alpha.span.source.name == "k.ir" and alpha.span.source.text == TEXT


def test_instruction_result_operand_and_type_spans():
    body = program().functions[0].body.instructions
    load = body[1]
    assert text_of(load.span) == "%1 = load %A[%0] : memref<f32x16x8>"
    assert text_of(load.result.span) == "%1"
    assert [text_of(s) for s in load.operand_spans] == ["%A", "%0"]
    assert text_of(load.type_span) == "memref<f32x16x8>"
    gid = body[0]
    assert text_of(gid.type_span) == "index" and gid.operand_spans == []


def test_subview_operand_spans_follow_the_ir_order():
    subview = program().functions[0].body.instructions[2]
    assert [v.name for v in subview.operands] == ["1", "0", "n"]
    assert [text_of(s) for s in subview.operand_spans] == ["%1", "%0", "%n"]
    assert text_of(subview.type_span) == "memref<f32x4x?,strided<1,16>>"


def test_instruction_without_results():
    gemm = program().functions[0].body.instructions[3]
    assert text_of(gemm.span) == "gemm.n.t %alpha, %1, %1, %alpha, %1"
    assert pos(gemm.operand_spans[4]) == (6, 36, 6, 37)
    assert gemm.type_span is None


def test_multi_line_instruction_and_region_spans():
    loop = program().functions[0].body.instructions[4]
    assert pos(loop.span) == (7, 3, 9, 3)
    assert [text_of(r.span) for r in loop.results] == ["%r", "%s"]
    assert [text_of(s) for s in loop.operand_spans] == ["%0", "%n", "%0", "%alpha", "%alpha"]
    assert text_of(loop.type_span) == "(f32, f32)"
    assert [text_of(a.span) for a in loop.body.args] == ["%i", "%x", "%y"]
    assert pos(loop.body.span) == (7, 77, 9, 3)
    yield_ = loop.body.instructions[0]
    assert [text_of(s) for s in yield_.operand_spans] == ["%y", "%x"]


def test_function_span_covers_the_definition():
    fn = program().functions[0]
    assert pos(fn.span) == (1, 1, 10, 1)


def test_operand_span_falls_back_to_the_instruction():
    gemm = program().functions[0].body.instructions[3]
    assert gemm.operand_span(99) is gemm.span
