"""Offsets, compiler spans and LSP positions of one text, converted exactly.

The compiler counts lines at `\\n` and columns in characters, 1-based with
inclusive ends. The Language Server Protocol counts lines at `\\n`, `\\r\\n`
or `\\r`, characters 0-based in UTF-16 code units (or UTF-8 / UTF-32 if the
client and server agree), with exclusive ends. Everything is converted
through absolute offsets into the text, so the two never drift apart. It sits
at the bottom, beside diagnostics (which give their LSP ranges with it) and
below the editor support.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tinyc.diagnostics import Span

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"

_LSP_BREAK = re.compile(r"\r\n|\n|\r")


def _units(text: str, encoding: str) -> int:
    """Length of `text` in the encoding's code units."""
    if encoding == UTF32 or text.isascii():
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", errors="surrogatepass"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class LineIndex:
    """Line starts of a text under both line conventions."""

    def __init__(self, text: str):
        self.text = text
        self._compiler: list[int] | None = None
        self._lsp: list[int] | None = None
        self._lsp_ends: list[int] | None = None

    @property
    def compiler_lines(self) -> list[int]:
        if self._compiler is None:
            starts = [0]
            position = self.text.find("\n")
            while position >= 0:
                starts.append(position + 1)
                position = self.text.find("\n", position + 1)
            self._compiler = starts
        return self._compiler

    @property
    def lsp_lines(self) -> list[int]:
        if self._lsp is None:
            starts, ends = [0], []
            for m in _LSP_BREAK.finditer(self.text):
                ends.append(m.start())
                starts.append(m.end())
            ends.append(len(self.text))
            self._lsp, self._lsp_ends = starts, ends
        return self._lsp

    # ------------------------------------------------------------ compiler spans

    def offset(self, line: int, column: int) -> int:
        """Offset of the compiler's 1-based (line, column), clamped into the text."""
        starts = self.compiler_lines
        if line < 1:
            return 0
        if line > len(starts):
            return len(self.text)
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return min(start + max(column - 1, 0), end)

    def span_offsets(self, span: Span) -> tuple[int, int]:
        """[start, end) offsets of a span (its end column is inclusive)."""
        start = self.offset(span.line, span.column)
        end = max(self.offset(span.end_line, span.end_column + 1), start)
        return start, end

    # ------------------------------------------------------------ LSP positions

    def position(self, offset: int, encoding: str = UTF16) -> tuple[int, int]:
        """(line, character) of an offset, LSP style."""
        offset = min(max(offset, 0), len(self.text))
        starts = self.lsp_lines
        line = bisect.bisect_right(starts, offset) - 1
        assert self._lsp_ends is not None
        offset = min(offset, self._lsp_ends[line])  # never inside a \r\n
        return line, _units(self.text[starts[line]:offset], encoding)

    def lsp_offset(self, line: int, character: int, encoding: str = UTF16) -> int:
        """Offset of an LSP (line, character); past the end of a line is its end."""
        starts = self.lsp_lines
        assert self._lsp_ends is not None
        if line < 0:
            return 0
        if line >= len(starts):
            return len(self.text)
        start, end = starts[line], self._lsp_ends[line]
        row = self.text[start:end]
        if encoding == UTF32 or row.isascii():
            return start + min(max(character, 0), len(row))
        units = 0
        for index, ch in enumerate(row):
            if units >= character:
                return start + index
            units += _units(ch, encoding)
        return end

    def lsp_range(self, start: int, end: int, encoding: str = UTF16) -> dict:
        """An LSP Range (as a dict) of [start, end) offsets."""
        (sl, sc), (el, ec) = self.position(start, encoding), self.position(end, encoding)
        return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}

    def span_range(self, span: Span, encoding: str = UTF16) -> dict:
        """An LSP Range (as a dict) of a compiler span."""
        return self.lsp_range(*self.span_offsets(span), encoding)


@lru_cache(maxsize=8)
def line_index(text: str) -> LineIndex:
    """A LineIndex shared by every span of one text (e.g. all diagnostics of a file)."""
    return LineIndex(text)
