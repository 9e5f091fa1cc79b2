"""Pygments lexer for the tensor language: `pygmentize -l tinyc kernel.ir`.

Registered through the `pygments.lexers` entry point (pyproject.toml); the
rules are `tinyc.editor.highlight`'s, shared with the TextMate grammar.
Token kinds:

    instructions and their modifiers (gemm, .n, .atomic)   Keyword
    types (f32, memref, strided, local, matrix_a, ...)     Keyword.Type
    values %x                                              Name.Variable
    functions @f                                           Name.Function
    attribute names (alignment, unroll, ...)               Name.Attribute
    numbers, true/false, strings                           Number.*, Keyword.Constant, String
    comments ; ...                                         Comment.Single
    func / attributes, init, else                          Keyword.Declaration / Keyword.Reserved

Any text lexes: a word the language does not know is `Name`, a character
that starts no token is `Error`.
"""

from __future__ import annotations

import re

from pygments.lexer import RegexLexer
from pygments.token import (
    Comment, Error, Keyword, Name, Number, Operator, Punctuation, String, Whitespace,
)

from tinyc.editor.highlight import rules

TOKENS = {
    "whitespace": Whitespace, "comment": Comment.Single, "string": String.Double,
    "value": Name.Variable, "function": Name.Function, "operator": Operator,
    "float": Number.Float, "integer": Number.Integer, "instruction": Keyword,
    "modifier": Keyword, "type": Keyword.Type, "attribute": Name.Attribute,
    "constant": Keyword.Constant, "declaration": Keyword.Declaration, "keyword": Keyword.Reserved,
    "shape": Punctuation, "punctuation": Punctuation, "unknown": Name, "error": Error,
}
"""Role of a rule -> Pygments token type."""


class TinycLexer(RegexLexer):
    """The tiny tensor language (tinyc's `.ir` files)."""

    name = "tinyc"
    aliases = ["tinyc", "tinytc", "tensor-ir"]
    filenames = ["*.ir"]
    mimetypes = ["text/x-tinyc"]
    flags = re.MULTILINE

    tokens = {"root": [(expression, TOKENS[role]) for expression, role in rules()]}

    @staticmethod
    def analyse_text(text: str) -> float:
        """Likely tinyc if it has a `func @name(` and a `%value`."""
        return 0.3 if re.search(r"^\s*func\s+@\w+\s*\(", text, re.MULTILINE) and "%" in text else 0.0
