"""Diagnostics about a built program's text, moved to the Python lines that built it.

`tinyc.compile(prog)` verifies the built IR (its errors point at Python lines
already), then compiles the printed text. An error found later — by a pass,
when lowering, in codegen (local memory overflowing, a schedule that does not
fit) — is located in that text, `<builder>:2.3`, which the user never saw.
Printing and parsing keep the IR's structure (the round trip), so the
instructions of the parsed text and of the built IR correspond one to one in
walk order: a location on a line of the text maps to the Python call that
built the instruction (or the parameter, or the function) printed there. The
diagnostic then reads as the verifier's do, with a note showing the line of
the generated program.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Iterator

from tinyc.diagnostics import CompilationError, Diagnostic, Note, Span
from tinyc.ir.core import Function
from tinyc.ir.core import Program as IRProgram


def line_map(built: IRProgram, text: str, name: str) -> dict[int, Span]:
    """Line of the printed text -> the Python span of what was printed there."""
    from tinyc.parser import parse

    try:
        parsed = parse(text, name, built.std)
    except CompilationError:  # the text does not parse back: nothing to map
        return {}
    found: dict[int, Span] = {}
    for mine, theirs in zip(built.functions, parsed.functions):
        if mine.name != theirs.name:
            return {}
        for line, span in _pairs(mine, theirs):
            if span is not None:
                found.setdefault(line, span)
    return found


def _pairs(built: Function, parsed: Function) -> Iterator[tuple[int, Span | None]]:
    if parsed.span is not None:
        yield parsed.span.line, built.span
    for mine, theirs in zip(built.args, parsed.args):
        for span in (theirs.span, theirs.type_span):
            if span is not None:
                for line in range(span.line, span.end_line + 1):
                    yield line, mine.span or built.span
    insts, others = list(built.walk()), list(parsed.walk())
    if len(insts) != len(others):
        return
    for mine, theirs in zip(insts, others):
        if theirs.span is not None and type(mine) is type(theirs):
            yield theirs.span.line, mine.span
        for region_mine, region_theirs in zip(mine.regions, theirs.regions):
            for a, b in zip(region_mine.args, region_theirs.args):
                if b.span is not None:
                    yield b.span.line, a.span or mine.span


def relocated(diagnostics: Iterable[Diagnostic], lines: dict[int, Span], name: str) -> list[Diagnostic]:
    """Each diagnostic located at the Python line that built what it points at, with a note
    showing the generated line; diagnostics elsewhere stay as they are."""
    out = []
    for d in diagnostics:
        span = _moved(d.span, lines, name)
        if span is None:
            out.append(d)
            continue
        notes = [Note(n.message, _moved(n.span, lines, name) or n.span) for n in d.notes]
        notes.append(Note("in the generated program:", d.span))
        out.append(replace(d, span=span, notes=tuple(notes)))   # message, severity, hint, name kept
    return out


def _moved(span: Span | None, lines: dict[int, Span], name: str) -> Span | None:
    if span is None or span.source is None or span.source.name != name:
        return None
    return lines.get(span.line)


def relocate_error(error: CompilationError, built: IRProgram, text: str, name: str) -> CompilationError:
    """`error` with its diagnostics at the Python lines (the same error if none maps)."""
    if not any(d.span is not None and d.span.source is not None and d.span.source.name == name
               for d in error.diagnostics):
        return error
    lines = line_map(built, text, name)
    if not lines:
        return error
    moved = CompilationError(relocated(error.diagnostics, lines, name))
    return moved
