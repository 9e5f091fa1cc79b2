"""Tokenizer for the tensor language, plugged into lark's LALR parser.

Hand-written because the language glues tokens together in ways a
longest-match regex lexer gets wrong: `f32x16x8` is `f32`, `x`, `16`, `x`,
`8`; `gemm.n.t` is a name and two modifiers while `arith.add` is one name;
and since bare words are only ever keywords, an unknown word must reach the
parser as a `WORD` token (so the error can say "unknown instruction 'gemn'
(did you mean 'gemm'?)") instead of failing inside the lexer.

Token shapes (identifiers, numbers, strings) and keywords come from the
terminals of tensor.lark (through the generated `tables.py`), so the grammar
file stays the one description of the syntax.
"""

from __future__ import annotations

import re
from typing import Iterator

from tinyc.parser import tables
from tinyc.parser.lalr import Token

WORD = "WORD"
"""A bare word that is no keyword (a misspelled instruction, type, ...)."""

DOTWORD = "DOTWORD"
"""`.something` that is no known modifier."""

DEF_ID = "DEF_ID"
"""`$name`: a compile-time variable of the preprocessor (newest language)."""

CALC = "CALC"
"""`!calc(...)`: the preprocessor's calculator, its text up to the closing parenthesis."""

_DEF_ID = re.compile(r"\$([0-9]+|[A-Za-z][A-Za-z0-9_]*)")
_CALC = re.compile(r"!calc[ \t]*\(")

ERROR = "ERROR"
"""Text that starts no token, in tolerant mode (for editors); never reaches the parser."""

_SKIP = re.compile(r"(?:[ \t\r\n\f\v\ufeff]+|;[^\n]*)+")  # \ufeff: a byte-order mark
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SEGMENT = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)")
_SHAPE_TAIL = re.compile(r"(?:x[0-9]*)+")
_TYPE_LIKE = re.compile(r"[A-Za-z]+[0-9]+")
_PUNCTUATION = "{}()[]<>,:=?"
_INF_NAN = re.compile(r"[+-]?(?:inf|nan)(?![A-Za-z0-9_])")


class LexError(Exception):
    """A character sequence that starts no token; the parser adds the source."""

    def __init__(self, message: str, line: int, column: int, end_column: int):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.end_column = end_column


class TensorLexer:
    """Turns text into Tokens whose types are the grammar's terminal names."""

    def __init__(self) -> None:
        self.keywords: dict[str, str] = tables.KEYWORDS
        patterns = {name: re.compile(regex) for name, regex in tables.PATTERNS.items()}
        self.local_id = patterns["LOCAL_ID"]
        self.global_id = patterns["GLOBAL_ID"]
        self.numbers = [(name, patterns[name]) for name in ("FLOAT", "INTEGER")]
        self.string = patterns["STRING"]
        # `arith` in `arith.add`: words that join the next `.segment` into one name.
        self.families = {k.split(".")[0] for k in self.keywords if "." in k[1:]}

    def lex(self, text: str, tolerant: bool = False) -> Iterator[Token]:
        """The tokens of `text`; `tolerant` (editors) turns a LexError into an ERROR token."""
        line, line_start, pos, n = 1, 0, 0, len(text)
        while True:
            skip = _SKIP.match(text, pos)
            if skip:
                newlines = text.count("\n", pos, skip.end())
                if newlines:
                    line += newlines
                    line_start = text.rfind("\n", pos, skip.end()) + 1
                pos = skip.end()
            if pos >= n:
                return
            column = pos - line_start + 1
            try:
                scanned = self._scan(text, pos, line, column)
            except LexError as err:
                if not tolerant:
                    raise
                end = min(pos + err.end_column - err.column + 1, n)
                if "\n" in text[pos:end]:
                    end = text.index("\n", pos)
                scanned = [(ERROR, pos, max(end, pos + 1))]
            for kind, start, end in scanned:
                yield Token(kind, text[start:end], start_pos=start, line=line,
                            column=start - line_start + 1, end_line=line,
                            end_column=end - line_start + 1, end_pos=end)
                pos = end

    def _scan(self, text: str, pos: int, line: int, column: int) -> list[tuple[str, int, int]]:
        """The token(s) at `pos` as (terminal, start, end); a word may split into several."""
        char = text[pos]
        nxt = text[pos + 1: pos + 2]
        if char == "%" or char == "@":
            m = (self.local_id if char == "%" else self.global_id).match(text, pos)
            if not m:
                self._fail(f"expected a name after '{char}'", line, column, 1)
            return [("LOCAL_ID" if char == "%" else "GLOBAL_ID", pos, m.end())]
        if char == "$":
            m = _DEF_ID.match(text, pos)
            if not m:
                self._fail("expected a name after '$'", line, column, 1)
            return [(DEF_ID, pos, m.end())]
        if char == "!":
            m = _CALC.match(text, pos)
            if not m:
                self._fail("unexpected '!'; the preprocessor's calculator is written "
                           "'!calc(...)'", line, column, 1)
            end = text.find(")", m.end())
            newline = text.find("\n", m.end())
            if end < 0 or 0 <= newline < end:
                self._fail("'!calc(' is not closed by ')' on its line", line, column,
                           m.end() - pos)
            return [(CALC, pos, end + 1)]
        if char == '"':
            m = self.string.match(text, pos)
            if not m:
                end = text.find("\n", pos)
                width = (len(text) if end < 0 else end) - pos
                self._fail("unterminated string (strings hold printable ASCII except '\"')",
                           line, column, width)
            return [("STRING", pos, m.end())]
        if char == "-" and nxt == ">":
            return [(self.keywords["->"], pos, pos + 2)]
        if char == "<" and nxt == "=" and "<=" in self.keywords:
            return [(self.keywords["<="], pos, pos + 2)]
        m = _INF_NAN.match(text, pos) if char in "+-in" else None
        if m:  # the newest language's `inf`, `-inf`, `nan`
            return [("FLOAT", pos, m.end())]
        if char.isdigit() or (char in "+-." and (nxt.isdigit() or nxt == ".")):
            for name, pattern in self.numbers:
                m = pattern.match(text, pos)
                if m:
                    return [(name, pos, m.end())]
        if char == ".":
            m = _SEGMENT.match(text, pos)
            if m:
                return [(self.keywords.get(m.group(), DOTWORD), pos, m.end())]
        if char.isascii() and (char.isalpha() or char == "_"):
            return self._word(text, pos)
        if char in _PUNCTUATION and char in self.keywords:
            return [(self.keywords[char], pos, pos + 1)]
        shown = char if char.isprintable() else repr(char)[1:-1]
        self._fail(f"unexpected character '{shown}'", line, column, 1)

    def _word(self, text: str, pos: int) -> list[tuple[str, int, int]]:
        """A keyword, a type glued to its shape (`f32x4x?`), or an unknown WORD."""
        m = _WORD.match(text, pos)
        end = m.end()
        word = m.group()
        if word in self.families:
            seg = _SEGMENT.match(text, end)
            if seg:
                end = seg.end()
                word = text[pos:end]
        if word in self.keywords:
            return [(self.keywords[word], pos, end)]
        split = self._split_shape(word)
        if split is None:
            return [(WORD, pos, end)]
        head, tail = split
        tokens = []
        if head:
            tokens.append((self.keywords.get(head, WORD), pos, pos + len(head)))
        at = pos + len(head)
        for piece in re.findall(r"x|[0-9]+", tail):
            kind = self.keywords["x"] if piece == "x" else "INTEGER"
            tokens.append((kind, at, at + len(piece)))
            at += len(piece)
        return tokens

    def _split_shape(self, word: str) -> tuple[str, str] | None:
        """Split `f32x16x8` into (`f32`, `x16x8`); None if the word is no such glue."""
        for i, char in enumerate(word):
            if char != "x" or not _SHAPE_TAIL.fullmatch(word, i):
                continue
            head = word[:i]
            if not head or head in self.keywords or _TYPE_LIKE.fullmatch(head):
                return head, word[i:]
        return None

    @staticmethod
    def _fail(message: str, line: int, column: int, width: int) -> None:
        raise LexError(message, line, column, column + max(width, 1) - 1)
