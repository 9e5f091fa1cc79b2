"""Where in the user's Python code an instruction was built.

Built instructions carry a `Span` into the Python file that called the
builder, so a verifier error on built IR prints that file, line and call
with carets, like an error in `.ir` text does.
"""

from __future__ import annotations

import contextlib
import linecache
import os
import sys

from tinyc.diagnostics import Source, Span

_HERE = os.path.dirname(os.path.abspath(__file__))
_SKIP_FILES = {os.path.abspath(contextlib.__file__),
               os.path.join(os.path.dirname(_HERE), "ir", "insertion.py")}
_SOURCES: dict[str, Source] = {}


def _source(filename: str) -> Source:
    """The file's text as a Source (cached per file; empty when it cannot be read)."""
    found = _SOURCES.get(filename)
    if found is None:
        found = Source("".join(linecache.getlines(filename)), filename)
        if found.text:
            _SOURCES[filename] = found
    return found


def _inside_builder(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_HERE + os.sep) or path in _SKIP_FILES


def caller_span(depth: int = 2) -> Span | None:
    """The span of the call expression in the first frame outside tinyc.builder."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return None
    while frame is not None and _inside_builder(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    code, line = frame.f_code, frame.f_lineno or 1
    column, end_line, end_column = 1, line, 0
    try:  # the exact call expression (Python 3.11+)
        positions = list(code.co_positions())[frame.f_lasti // 2]
        if positions[0] == line and positions[2] is not None and positions[3] is not None:
            column, end_line, end_column = positions[2] + 1, positions[1] or line, positions[3]
    except (AttributeError, IndexError, TypeError):
        pass
    source = _source(code.co_filename)
    if end_column < column:
        end_line, end_column = line, max(len(source.line(line)), column)
    return Span(line, column, end_line, end_column, source)
