"""The syntax-colouring rules shared by the Pygments lexer and the TextMate grammar.

One ordered list of (regular expression, role): at each position the first
rule that matches there wins. The words come from the grammar
(`tinyc.editor.vocabulary`) and the token shapes from the terminals of
`tensor.lark`, so colours follow the language as the compiler reads it; the
expressions use only what Python's `re` and Oniguruma (TextMate) share.
"""

from __future__ import annotations

import re

from tinyc.editor import vocabulary
from tinyc.parser import tables

WORD_END = r"(?![A-Za-z0-9_])"
SHAPE_GLUE = r"(?=(?:x[0-9?]*)*(?![A-Za-z0-9_]))"  # f32 in `f32x16x8`, `f32x?`


def alternatives(words, suffix: str = WORD_END) -> str:
    """One expression for a set of words, longest first so that none hides another."""
    ordered = sorted(words, key=lambda w: (-len(w), w))
    return "(?:" + "|".join(re.escape(w) for w in ordered) + ")" + suffix


def rules() -> list[tuple[str, str]]:
    """(expression, role) in order; roles as in tinyc.editor.tokens.ROLES plus a few."""
    declarations = {"func"} & vocabulary.other_keywords()
    return [
        (r"[ \t\r\n\f\v]+", "whitespace"),
        (r";.*", "comment"),
        (tables.PATTERNS["STRING"], "string"),
        (tables.PATTERNS["LOCAL_ID"], "value"),
        (tables.PATTERNS["GLOBAL_ID"], "function"),
        (r"->", "operator"),
        (tables.PATTERNS["FLOAT"], "float"),
        (tables.PATTERNS["INTEGER"], "integer"),
        (alternatives(vocabulary.instruction_heads()), "instruction"),
        (alternatives(vocabulary.modifiers()), "modifier"),
        (alternatives(vocabulary.type_words(), SHAPE_GLUE), "type"),
        (alternatives(vocabulary.attribute_names()), "attribute"),
        (alternatives(vocabulary.constant_words()), "constant"),
        (alternatives(declarations), "declaration"),
        (alternatives(vocabulary.other_keywords() - declarations), "keyword"),
        (r"x(?=[0-9?]|[^A-Za-z0-9_]|$)", "shape"),  # the `x` of a shape
        (r"=", "operator"),
        (r"[{}()\[\]<>,:?]", "punctuation"),
        (alternatives(vocabulary.families(), r"\.[A-Za-z_][A-Za-z0-9_]*"), "unknown"),  # arith.ad
        (r"\.?[A-Za-z_][A-Za-z0-9_]*", "unknown"),
        (r".", "error"),
    ]
