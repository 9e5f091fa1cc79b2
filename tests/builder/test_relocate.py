"""Errors that `tinyc.compile(prog)` finds after verifying a built program (in a pass, when
lowering) point at the user's Python file and line that built the instruction, not at
`<builder>:2.3`; a note shows the line of the generated program (spec: a diagnostic's location
and excerpt)."""

from __future__ import annotations

import inspect

import pytest

import tinyc
from tinyc.builder import Program, f32, memref
from tinyc.diagnostics import CompilationError

HERE = __file__


def test_a_pass_error_points_at_the_python_line():
    prog = Program()
    fn = prog.function("k", A=memref(f32, 16, 16))
    line = inspect.currentframe().f_lineno + 1
    fn.alloca(memref(f32, 1024, 1024, local=True))   # 4 MiB: more than any work-group's local memory
    with pytest.raises(CompilationError) as info:
        tinyc.compile(prog)
    [d] = info.value.diagnostics
    assert "does not fit in local memory" in d.message
    assert d.span.source.name == HERE and d.line == line
    text = str(info.value)
    assert text.startswith(f"{HERE}:{line}.5-")
    assert "fn.alloca(memref(f32, 1024, 1024, local=True))" in text.splitlines()[1]
    assert "<builder>:2." in text and "note: in the generated program:" in text
    assert "%0 = alloca : memref<f32x1024x1024,local>" in text


def test_notes_point_at_python_lines_too():
    from tinyc.compiler import target_device

    quarter = target_device(None)[1].local_memory_size // 16    # f32 elements in a quarter of it
    prog = Program()
    fn = prog.function("k", A=memref(f32, 16, 16))
    first = inspect.currentframe().f_lineno + 1
    t = fn.alloca(memref(f32, 3 * quarter, local=True))
    second = inspect.currentframe().f_lineno + 1
    u = fn.alloca(memref(f32, 2 * quarter, local=True))
    fn.lifetime_stop(t)
    fn.lifetime_stop(u)
    with pytest.raises(CompilationError) as info:
        tinyc.compile(prog)
    [d] = info.value.diagnostics
    assert (d.span.source.name, d.line) == (HERE, second)
    held = [n for n in d.notes if "holds" in n.message]
    assert held and (held[0].span.source.name, held[0].span.line) == (HERE, first)
    assert d.notes[-1].span.source.name == "<builder>"


def test_errors_in_text_sources_stay_where_they_are():
    with pytest.raises(CompilationError) as info:
        tinyc.compile("func @k() {\n  %0 = alloca : memref<f32x1024x1024,local>\n}\n", name="k.ir")
    [d] = info.value.diagnostics
    assert (d.span.source.name, d.line) == ("k.ir", 2) and not d.notes


def test_relocation_maps_every_printed_line_of_a_program():
    """Parameters, nested regions and instructions: each printed line maps to its builder call."""
    from tinyc.builder.relocate import line_map

    prog = Program()
    fn = prog.function("k", A=memref(f32, 8, None), B=memref(f32, 8))
    A, B = fn.params
    lines = {}
    with fn.for_(0, 4) as loop:
        lines["subview"] = inspect.currentframe().f_lineno + 1
        column = fn.subview(A, (slice(None), loop.var))
        lines["axpby"] = inspect.currentframe().f_lineno + 1
        fn.axpby(1.0, B, 1.0, column)
    text = prog.checked_source()
    mapped = line_map(prog.ir, text, "<builder>")
    printed = text.splitlines()
    for what, line in lines.items():
        at = next(k for k, t in enumerate(printed, 1) if what in t)
        assert mapped[at].line == line and mapped[at].source.name == HERE
    assert mapped[1].line == fn.function.span.line  # the signature: the prog.function(...) call


def test_warnings_point_at_the_python_line_too():
    import warnings

    prog = Program()
    fn = prog.function("k", A=memref(f32, 16, 16))
    A, = fn.params
    line = inspect.currentframe().f_lineno + 1
    fn.constant(2.0, f32)                              # never used: a warning
    fn.gemm(1.0, A, A, 0.0, A)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = tinyc.compile(prog)
    [d] = program.warnings
    assert d.severity == "warning" and "never used" in d.message
    assert (d.span.source.name, d.line) == (HERE, line)
    shown = [str(w.message) for w in caught if "never used" in str(w.message)]
    assert shown and shown[0].startswith(f"{HERE}:{line}.") and "[-W" in shown[0]
