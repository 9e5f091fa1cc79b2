"""The compiler's own tokens, with comments kept and a role for each, for editors.

The formatter, the language server and the tests of the syntax colourers
all read text through the compiler's lexer (`tinyc.parser.lexer`), in its
tolerant mode, so that they never disagree with the compiler about where a
token starts or what it is. Comments, which the lexer skips, are recovered
from the gaps between tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tinyc.editor import vocabulary
from tinyc.parser.lalr import Token
from tinyc.parser.lexer import CALC, DEF_ID, DOTWORD, ERROR, WORD, TensorLexer

COMMENT = "COMMENT"

ROLES = ("instruction", "modifier", "type", "attribute", "constant", "keyword", "value",
         "function", "number", "string", "punctuation", "comment", "unknown", "error")
"""What a token is, for colours: the names the Pygments and TextMate tests compare."""


@dataclass(frozen=True)
class EditorToken:
    """A token or comment: its text, terminal, role and place (offsets into the text)."""

    type: str       # the grammar's terminal name, COMMENT, WORD, DOTWORD or ERROR
    text: str
    role: str
    start: int      # offset of the first character
    end: int        # offset after the last character
    line: int       # 1-based
    column: int     # 1-based, in characters

    @property
    def is_comment(self) -> bool:
        return self.type == COMMENT


@cache
def compiler_lexer() -> TensorLexer:
    """The compiler's lexer, made once."""
    return TensorLexer()


@cache
def _keyword_roles() -> dict[str, str]:
    roles: dict[str, str] = {}
    for role, words in (("keyword", vocabulary.other_keywords()),
                        ("constant", vocabulary.constant_words()),
                        ("attribute", vocabulary.attribute_names()),
                        ("type", vocabulary.type_words()),
                        ("modifier", vocabulary.modifiers()),
                        ("instruction", vocabulary.instruction_heads())):
        roles.update(dict.fromkeys(words, role))
    return roles


_TERMINAL_ROLES = {"LOCAL_ID": "value", "GLOBAL_ID": "function", "INTEGER": "number",
                   "FLOAT": "number", "STRING": "string", WORD: "unknown", DOTWORD: "unknown",
                   ERROR: "error", COMMENT: "comment",
                   DEF_ID: "constant", CALC: "constant"}  # the preprocessor's $name, !calc(...)


def role_of(token_type: str, text: str) -> str:
    """The role of a token: see ROLES."""
    role = _TERMINAL_ROLES.get(token_type)
    if role is not None:
        return role
    return _keyword_roles().get(text, "punctuation")


def lex(text: str) -> list[Token]:
    """The parser's tokens of `text`; never raises (bad characters become ERROR tokens)."""
    return list(compiler_lexer().lex(text, tolerant=True))


def editor_tokens(text: str) -> list[EditorToken]:
    """Every token and comment of `text` in order, each with its role."""
    found: list[EditorToken] = []
    lines = _Lines(text)
    position = 0
    for token in lex(text):
        _comments(text, position, token.start_pos, lines, found)
        found.append(EditorToken(token.type, token.value, role_of(token.type, token.value),
                                 token.start_pos, token.end_pos, token.line, token.column))
        position = token.end_pos
    _comments(text, position, len(text), lines, found)
    return found


class _Lines:
    """Line and column of offsets visited in increasing order, in linear time overall."""

    def __init__(self, text: str):
        self.text, self.offset, self.line, self.line_start = text, 0, 1, 0

    def at(self, offset: int) -> tuple[int, int]:
        newlines = self.text.count("\n", self.offset, offset)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.offset, offset) + 1
        self.offset = offset
        return self.line, offset - self.line_start + 1


def _comments(text: str, start: int, end: int, lines: _Lines, found: list[EditorToken]) -> None:
    """Append the comments in the gap text[start:end] (white space and comments only)."""
    position = start
    while True:
        semicolon = text.find(";", position, end)
        if semicolon < 0:
            return
        stop = text.find("\n", semicolon, end)
        stop = end if stop < 0 else stop
        line, column = lines.at(semicolon)
        found.append(EditorToken(COMMENT, text[semicolon:stop].rstrip("\r"), "comment", semicolon,
                                 stop, line, column))
        position = stop
