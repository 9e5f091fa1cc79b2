"""Syntax errors in the user's words.

The parser reports an unexpected token with the set of terminal names it
could take; this module turns that into "unexpected 'x', expected ':' or
','", collapses the sixty instruction keywords into "an instruction", and
recognises a misspelled instruction, type or modifier (a WORD or DOTWORD
token from the lexer) to suggest the name that was meant.
"""

from __future__ import annotations

from typing import Iterable

from tinyc.diagnostics import Diagnostic, Source, Span, did_you_mean
from tinyc.ir.checks import one_of
from tinyc.ir.types import SCALAR_TYPES
from tinyc.parser.instructions import RULES
from tinyc.parser.lalr import LEX_ERROR, ParseError, Token
from tinyc.parser.lexer import DOTWORD, WORD
from tinyc.parser.tables import KEYWORDS

INSTRUCTION_KEYWORDS = frozenset(word for cls in RULES.values() for word in cls.keywords)
"""Every spelling that starts an instruction, from the instruction classes."""

_SCALARS = frozenset(SCALAR_TYPES)
_INTEGERS = frozenset({"i8", "i16", "i32", "i64", "index"})
_TYPE_WORDS = _SCALARS | {"bool", "void", "memref", "group", "coopmatrix"}
_ATTRIBUTE_NAMES = frozenset({"alignment", "shape_gcd", "stride_gcd", "subgroup_size", "unroll",
                              "work_group_size"})

_TERMINAL_WORDS = {
    "LOCAL_ID": "a value ('%name')",
    "GLOBAL_ID": "a function name ('@name')",
    "INTEGER": "an integer",
    "FLOAT": "a floating-point number",
    "STRING": "a string",
    "$END": "end of input",
}


def is_instruction(word: str) -> bool:
    """True for every instruction spelling: `gemm`, `arith.add`, `subgroup_max.reduce`."""
    return word in INSTRUCTION_KEYWORDS


_SPELLINGS = {terminal: text for text, terminal in KEYWORDS.items()}


def syntax_error(err: ParseError, source: Source) -> Diagnostic:
    """The diagnostic for a parse error."""
    token = err.token
    if token.type == LEX_ERROR:  # text that starts no token: the lexer's own message
        return Diagnostic(token.message, Span(token.line, token.column, token.line,
                                              max(token.end_column - 1, token.column), source))
    # `accepts()` replays each terminal, so it is exact where LALR merged
    # states would offer tokens from other contexts (`)` after a load's index).
    expected = {_SPELLINGS.get(name, name) for name in err.accepts()}
    if token.type == "$END":
        span = _end_span(err, source)
        return Diagnostic(f"unexpected end of input, expected {describe(expected)}", span)
    previous = err.previous
    if previous is not None and previous.line < token.line and _incomplete(expected):
        # The instruction on the previous line stops short (a missing `: type`): say so
        # there, not at the next line's first token.
        at = Span(previous.line, previous.end_column, previous.line, previous.end_column, source)
        return Diagnostic(f"expected {describe(expected)} after '{previous.value}' at the end of "
                          f"the line", at)
    span = Span(token.line, token.column, token.end_line, max(token.end_column - 1, 1), source)
    return Diagnostic(_message(token, expected), span, hint=_hint(token, expected))


def _incomplete(expected: set[str]) -> bool:
    """The parser is inside an instruction or type: no instruction, `}` or function may come next."""
    return not ({"}", "func", "$END", "LOCAL_ID"} & expected) and not any(map(is_instruction, expected))


def _message(token: Token, expected: set[str]) -> str:
    word = token.value
    words = [e for e in expected if e[:1].isalpha() or e[:1] == "."]
    if token.type == WORD or word == "align":  # `align(64)` (before the seed) made it a keyword
        if sum(is_instruction(e) for e in expected) > 2:  # `else` may be meant, too
            forms = _grammar_forms(word, words)
            return f"unknown instruction '{word}'" + ("" if forms else did_you_mean(word, words))
        if expected & _TYPE_WORDS:
            candidates = [e for e in expected if e in _TYPE_WORDS]
            return f"unknown type '{word}'{did_you_mean(word, candidates)}"
        if expected & _ATTRIBUTE_NAMES:
            return (f"unknown attribute name '{word}'{did_you_mean(word, _ATTRIBUTE_NAMES)}; "
                    "other names must be quoted")
        return f"unexpected '{word}', expected {describe(expected)}{did_you_mean(word, words)}"
    if token.type == DOTWORD:
        hint = did_you_mean(word, words)
        return f"unknown modifier '{word}'{hint}, expected {describe(expected)}"
    return f"unexpected '{word}', expected {describe(expected)}"


def _hint(token: Token, expected: set[str]) -> str | None:
    """The grammar's form where the spec's own examples differ from it.

    `group_id` (the grammar writes `builtin.group_id`, or `group_id.x` in the
    newest language), `constant 2 -> i32` (the type follows ':') and
    `cmp.lt %0, 16` (operands are values: a number needs a `constant`).
    """
    if token.type == WORD and sum(is_instruction(e) for e in expected) > 2:
        words = [e for e in expected if e[:1].isalpha()]
        forms = _grammar_forms(token.value, words)
        if not forms:
            return None
        seed = [f"'{w}'" for w in forms if w.startswith("builtin.") or w in _SEED_FAMILIES]
        newest = [f"'{w}'" for w in forms if f"'{w}'" not in seed]
        if seed and newest:
            return (f"the grammar writes {one_of(seed)} (seed language) or {one_of(newest)} "
                    f"(newest language)")
        return f"the grammar writes {one_of(seed or newest)}"
    if token.value == "->" and ":" in expected:
        return "the type follows ':', as in '%x = constant 2 : i32'"
    if token.type in ("INTEGER", "FLOAT") and "LOCAL_ID" in expected:
        ty = "i32" if token.type == "INTEGER" else "f32"
        name = "%c" + "".join(c for c in token.value if c.isalnum())
        return (f"operands are values: define the number first ('{name} = constant "
                f"{token.value} : {ty}') and use '{name}'")
    return None


def _grammar_forms(word: str, words: list[str]) -> list[str]:
    """The spellings of a name written without its prefix or suffix (`group_id`)."""
    return sorted(w for w in words if w.startswith(word + ".") or w == f"builtin.{word}")


_SEED_FAMILIES = frozenset(w for w in INSTRUCTION_KEYWORDS if "." in w[1:]
                           and w.split(".")[0] in ("arith", "cmp", "math", "builtin")
                           or w.split(".")[-1] in ("reduce", "inclusive_scan", "exclusive_scan"))
"""Seed spellings `family.member` (`subgroup_add.reduce`); the newest ones are `group_id.x`."""




def _end_span(err: ParseError, source: Source) -> Span:
    """Just after the last token, where more text was expected."""
    last = err.token  # the $END token borrows the position of the last real token
    if getattr(last, "end_line", None) and getattr(last, "end_column", None):
        return Span(last.end_line, last.end_column, last.end_line, last.end_column, source)
    text = source.text.rstrip()
    line = text.count("\n") + 1
    column = len(text) - (text.rfind("\n") + 1) + 1
    return Span(line, column, line, column, source)


def describe(expected: Iterable[str]) -> str:
    """`':' or ','`, with families of keywords collapsed into a phrase."""
    rest = set(expected)
    phrases: list[str] = []
    instructions = {e for e in rest if is_instruction(e)}
    if len(instructions) > 2:
        phrases.append("an instruction")
        rest -= instructions
    if _TYPE_WORDS <= rest:
        phrases.append("a type")
        rest -= _TYPE_WORDS
    elif _SCALARS <= rest:
        phrases.append("a scalar type")
        rest -= _SCALARS
    elif _INTEGERS <= rest:
        phrases.append("an integer type")
        rest -= _INTEGERS
    if _ATTRIBUTE_NAMES <= rest:
        phrases.append("an attribute name")
        rest -= _ATTRIBUTE_NAMES
    phrases += sorted(_TERMINAL_WORDS[e] for e in rest if e in _TERMINAL_WORDS)
    phrases += sorted(f"'{e}'" for e in rest if e not in _TERMINAL_WORDS)
    if len(phrases) > 8:
        phrases = phrases[:7] + ["..."]
    if len(phrases) <= 1:
        return phrases[0] if phrases else "nothing more"
    return ", ".join(phrases[:-1]) + " or " + phrases[-1]
