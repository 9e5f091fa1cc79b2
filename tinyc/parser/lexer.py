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
from tinyc.parser.lalr import LEX_ERROR, Token

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

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SEGMENT = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)")
_SHAPE_TAIL = re.compile(r"(?:x[0-9]*)+")
_TYPE_LIKE = re.compile(r"[A-Za-z]+[0-9]+")
_PUNCTUATION = "{}()[]<>,:=?"
_INF_NAN = re.compile(r"[+-]?(?:inf|nan)(?![A-Za-z0-9_])")
REPLACEMENT = "\ufffd"
"""What a byte that is not UTF-8 decodes to (`tinyc.compiler.source_text`): fine in a
comment, reported like an unexpected character elsewhere."""
_FAST = re.compile(r"(?=.)([ \t\r\f\v\ufeff]*(?:;[^\n]*)?)(?:([%@](?:[0-9]+|[A-Za-z][A-Za-z0-9_]*))"
                   r"|([{}()\[\],:=?>]|<(?!=))"
                   r"|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"
                   r"|(\.[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?![0-9A-Za-z_.]))"
                   r"|(.))?")
"""White space and comments, then the common token, one group per kind (`tokens`): a name,
punctuation, a word with its `.segments` (`arith.add`, `gemm.n.t`: split once per distinct
spelling), a modifier or a plain integer (no FLOAT can start there: no `.`, exponent or `x`
follows), else any other character: there `_scan` takes over. Every group is optional, so
the matches of `findall` over a line follow each other without a gap; `(?=.)` spares the
empty match at the line's end. (A comment runs to the end of the line: white space, then
at most one comment, is all the white space a line can have before a token.)"""


class ErrorToken(Token):
    """Text that starts no token, with the lexer's message (recovering mode only)."""

    __slots__ = ("message",)


def _token(new, terminal: str, value: str, start: int, end: int, line: int, starts: list[int],
           cls: type = Token) -> Token:
    """A Token without keyword arguments on line `line`, which starts at `starts[line - 1]`."""
    token = new(cls)
    token.type = terminal
    token.value = value
    token._offsets = starts
    token.line = token.end_line = line
    token.column = start - starts[line - 1] + 1
    token.end_column = end - starts[line - 1] + 1
    return token


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
        self._words: dict[str, list[tuple[str, int, int]]] = {}  # word -> its tokens (offsets)
        # word -> (its terminal, the word): when it is one token, whose tokens all share the
        # first copy of its text (the one findall makes goes with its line)
        self._whole_words: dict[str, tuple[str, str]] = {}

    def lex(self, text: str, recover: bool = False, tolerant: bool = False) -> Iterator[Token]:
        """Tokens of `text`; a LexError at the first character that starts none.

        `recover`: instead of raising, yield an `ErrorToken` (type LEX_ERROR,
        with the message) for the offending text and go on at the next line,
        so the parser can report it among other errors. `tolerant` (editors):
        an ERROR token for the offending text, and go on right after it.

        The common tokens (names, punctuation, plain words, modifiers, white
        space) come from one regular expression; numbers, strings, `->` and
        words glued to a `.segment` or a shape go through `_scan`. Checking
        40,000 instructions spends most of its time here, so the fast path
        builds tokens inline and remembers how each word splits.
        """
        return iter(self.tokens(text, recover, tolerant))

    def tokens(self, text: str, recover: bool = False, tolerant: bool = False) -> list[Token]:
        """`lex` as a list (the parser takes them all anyway; no generator in the hot loop).

        Line by line: no token spans lines (strings, comments and `!calc(...)` end on theirs),
        so a token's line is the loop's and its columns are offsets from the line's start.
        `_FAST.findall` cuts a line into its common tokens at C speed (a tuple of strings
        each: positions follow from their lengths); at the first other character the rest of
        the line goes through `_scan`, then `findall` again after what it read."""
        new, findall, keywords = object.__new__, _FAST.findall, self.keywords
        words, whole, token_cls = self._words, self._whole_words, Token
        out: list[Token] = []
        append = out.append
        starts: list[int] = []  # where each line starts: the tokens' offsets (Token._offsets)
        add_line = starts.append
        n = len(text)
        line, line_start = 0, 0
        while line_start <= n:
            line += 1
            line_end = text.find("\n", line_start)
            if line_end < 0:
                line_end = n
            pos = line_start
            add_line(line_start)
            before = line_start - 1  # a column is an offset less this
            while pos < line_end:
                column = pos - before  # (the loop counts in columns: no offset to convert per token)
                for space, name, punctuation, word, other, rest in findall(text, pos, line_end):
                    column += len(space)
                    if punctuation:  # (the kinds by how often they come)
                        value = punctuation
                        terminal = keywords.get(punctuation, DOTWORD)
                    elif name:
                        value = name
                        terminal = "LOCAL_ID" if name[0] == "%" else "GLOBAL_ID"
                    elif word:
                        known = whole.get(word)
                        if known is not None:
                            terminal, value = known
                        else:  # glued to a shape or modifiers, or new
                            pieces = words.get(word)
                            if pieces is None:
                                pieces = words[word] = self._pieces(word)
                                if len(pieces) == 1 and pieces[0][2] == len(word):
                                    whole[word] = (pieces[0][0], word)
                            for terminal, a, b in pieces:
                                tok = new(token_cls)
                                tok.type = terminal
                                tok.value = word if b - a == len(word) else word[a:b]
                                tok._offsets = starts
                                tok.line = tok.end_line = line
                                tok.column = column + a
                                tok.end_column = column + b
                                append(tok)
                            column += len(word)
                            continue
                    elif other:  # a modifier or an integer
                        value = other
                        terminal = keywords.get(other, DOTWORD) if other[0] == "." else "INTEGER"
                    elif rest:
                        pos = column + before
                        break
                    else:  # white space or a comment up to the line's end
                        continue
                    tok = new(token_cls)  # (one store a statement: no tuple packed and unpacked)
                    tok.type = terminal
                    tok.value = value
                    tok._offsets = starts
                    tok.line = tok.end_line = line
                    tok.column = column
                    column += len(value)
                    tok.end_column = column
                    append(tok)
                else:
                    break
                try:
                    scanned = self._scan(text, pos, line, pos - line_start + 1)
                except LexError as err:
                    if tolerant:
                        stop = min(pos + err.end_column - err.column + 1, line_end)
                        scanned = [(ERROR, pos, max(stop, pos + 1))]
                    elif not recover:
                        raise
                    else:  # the rest of the line is part of the error
                        stop = min(pos + err.end_column - err.column + 1, n)
                        bad = _token(new, LEX_ERROR, text[pos:stop], pos, stop, line, starts,
                                     ErrorToken)
                        bad.message = err.message
                        append(bad)
                        break
                for terminal, start, end in scanned:
                    append(_token(new, terminal, text[start:end], start, end, line, starts))
                    pos = end
            line_start = line_end + 1
        return out

    def _pieces(self, word: str) -> list[tuple[str, int, int]]:
        """The tokens of a word and the `.segments` glued to it, as (terminal, start, end)
        offsets into it: `_word` reads the word (a family joins its segment), and each
        segment left is a modifier."""
        pieces = self._word(word, 0)
        at = pieces[-1][2]
        while at < len(word):
            segment = _SEGMENT.match(word, at)
            pieces.append((self.keywords.get(segment.group(), DOTWORD), at, segment.end()))
            at = segment.end()
        return pieces

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
        if char == REPLACEMENT:
            self._fail("a byte that is not UTF-8 (read as U+FFFD); only comments may hold such "
                       "bytes", line, column, 1)
        shown = char if char.isprintable() else repr(char)[1:-1]
        self._fail(f"unexpected character '{shown}'", line, column, 1)

    def _word(self, text: str, pos: int) -> list[tuple[str, int, int]]:
        """A keyword, a type glued to its shape (`f32x4x?`), or an unknown WORD."""
        m = _WORD.match(text, pos)
        end = m.end()
        word = m.group()
        if word in ("inf", "nan"):  # the newest language's float constants (the fast path's words)
            return [("FLOAT", pos, end)]
        if word in self.families:
            seg = _SEGMENT.match(text, end)
            if seg:
                end = seg.end()
                word = text[pos:end]
                seg = _SEGMENT.match(text, end)  # `builtin.group_id.x`: a second segment
                if seg and text[pos:seg.end()] in self.keywords:
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
