"""Completion: the words that may go at the cursor, without parsing the file again.

What the grammar accepts next comes from parsing the statement being typed in a
stand-in context (`func @f() {` before it, or nothing at the top level): an
instruction's syntax does not depend on where its region is. The statement
starts at the beginning of the cursor's line, or of an earlier line when the
statement spans lines (up to CONTEXT_LINES back); only if no start fits is
the text before the cursor parsed whole. Values come from the last analysis
of the document and from the names the text defines around the cursor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from tinyc.editor import vocabulary

if TYPE_CHECKING:
    from tinyc.editor.analysis import Analysis

CONTEXT_LINES = 12
"""Lines looked back for the start of the statement being typed."""
VARIANTS_SHOWN = 40
"""Variants of one instruction offered before its name is typed (see instruction_words)."""
DESCRIBED_VALUES = 200
"""Values offered with their description ("result of gemm.n.t"); beyond, with their type only
(a generated kernel has thousands)."""
WHOLE_PREFIX_LIMIT = 20_000
"""Text before the cursor parsed whole when no statement start fits (longer: no guess)."""

_WORD_CHAR = re.compile(r"[A-Za-z0-9_.%@]")
_CONTEXTS = ("func @f() {\n", "")
"""Stand-ins for what comes before a statement: a function body, or the top level (a function's
head, its attributes)."""
_COMMENT = re.compile(r";[^\n]*")
_DEFINED = re.compile(r"(%[A-Za-z0-9_.$]+)(?=\s*[=:,])|\bfor\s+(%[A-Za-z0-9_.$]+)")
"""Names the text defines: before `=` (results), `:` (arguments), `,` (several results), or
after `for`."""


@dataclass
class CompletionWord:
    """One completion: what to insert and how to show it."""

    label: str
    kind: str            # instruction, type, attribute, keyword, value
    detail: str = ""
    documentation: str = ""


def _same(offset: int, clamp: bool = False) -> int | None:
    return offset


def complete(text: str, offset: int, names: Callable[[], tuple["Analysis", Callable, Callable]]
             ) -> tuple[int, list[CompletionWord], bool]:
    """(start of the word being typed, the words that may go there, whether more words would
    come with more of the word typed) in `text`. `names()` gives the names to offer values
    from (asked only where a value may go), with the maps of offsets to their text (maybe an
    earlier one) and back."""
    offset = min(max(offset, 0), len(text))
    start = offset
    while start > 0 and _WORD_CHAR.match(text[start - 1]):
        start -= 1
    typed = text[start:offset]
    if typed.startswith("%"):
        return start, values_before(text, start, *names()), False
    if typed.startswith("@"):
        return start, [], False
    expected = expected_words(text, start)
    words: list[CompletionWord] = []
    more = False
    if expected is None or expected & vocabulary.instruction_heads():
        spellings, more = instruction_words(typed)
        words += [CompletionWord(w.spelling, "instruction", f"{w.summary} ({w.kind})")
                  for w in spellings]
    types = vocabulary.type_words() if expected is None else expected & vocabulary.type_words()
    words += [CompletionWord(t, "type") for t in sorted(types)]
    attributes = [a for a in vocabulary.attribute_names() if expected is None or a in expected]
    words += [CompletionWord(a, "attribute") for a in attributes]
    others = (vocabulary.other_keywords() | vocabulary.constant_words())
    words += [CompletionWord(k, "keyword") for k in sorted(others)
              if expected is not None and k in expected]
    statement_start = not text[text.rfind("\n", 0, start) + 1:start].strip()
    if expected is not None and "LOCAL_ID" in expected and not statement_start:
        words += values_before(text, start, *names())  # (not where a statement starts: a new name)
    return start, words, more


def instruction_words(typed: str) -> tuple[list, bool]:
    """The instruction spellings to offer for the word `typed` so far, and whether some were
    left out: of an instruction with more than VARIANTS_SHOWN variants (the coopmatrix
    atomics have 360: scopes, semantics, transposes, checks), only the first ones until
    the word names it."""
    chosen, shown, more = [], {}, False
    for w in vocabulary.instructions():
        if typed.startswith(w.head) or \
                vocabulary.variants(w.head) <= VARIANTS_SHOWN:
            chosen.append(w)
        elif shown.setdefault(w.head, 0) < VARIANTS_SHOWN // 4:
            shown[w.head] += 1
            chosen.append(w)
        else:
            more = True
    return chosen, more


def values_before(text: str, offset: int, analysis: "Analysis", to_old: Callable = _same,
                  to_new: Callable = _same) -> list[CompletionWord]:
    """Values defined before `offset` in the function around it.

    Those the analysis knows come with their type; names the text defines
    while it does not parse (`%x =`, `%a:`, `for %i`) are added without one.
    """

    old = to_old(offset, clamp=True)
    function = analysis.function_at(old)
    symbols = {}
    for s in analysis.definitions_before(old):
        symbols.setdefault(s.name, s)
    described = len(symbols) <= DESCRIBED_VALUES
    seen: dict[str, CompletionWord] = {
        name: CompletionWord(name, "value", s.type or "", s.what if described else "")
        for name, s in symbols.items()}
    begin = to_new(function.start, clamp=True) if function is not None else 0
    for m in _DEFINED.finditer(text, min(begin, offset), offset):
        name = m.group(1) or m.group(2)
        if m.end() < offset:
            seen.setdefault(name, CompletionWord(name, "value"))
    return list(seen.values())


def expected_words(text: str, start: int) -> set[str] | None:
    """The keywords (and `LOCAL_ID`) the grammar accepts at `start`; None if unknown."""
    line_start = text.rfind("\n", 0, start) + 1
    if ";" in text[line_start:start]:
        return set()  # in a comment
    code = _COMMENT.sub(lambda m: " " * len(m.group()), text[:start])  # offsets kept
    inside = code.count("{") > code.count("}")  # in a function's body or a dictionary
    contexts = _CONTEXTS if inside else ("",)
    for _ in range(CONTEXT_LINES):
        statement = text[line_start:start]
        fits = _balanced(code, line_start) and _closes_nothing(code[line_start:start])
        for context in contexts if fits else ():
            found = _accepted_after(context + statement)
            if found is not None:
                return found
        if line_start == 0:
            return None
        line_start = text.rfind("\n", 0, line_start - 1) + 1
    return _accepted_after(text[:start]) if start <= WHOLE_PREFIX_LIMIT else None


def _closes_nothing(statement: str) -> bool:
    """The statement closes no brace it did not open (else it needs an earlier start)."""
    depth = 0
    for ch in statement:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
    return True


def _balanced(code: str, end: int) -> bool:
    """No parenthesis or bracket open before `end`: a statement may start there."""
    return code.count("(", 0, end) == code.count(")", 0, end) \
        and code.count("[", 0, end) == code.count("]", 0, end)


def _accepted_after(before: str) -> set[str] | None:
    """What the grammar accepts after `before`, or None if `before` itself does not parse."""
    from tinyc.editor.tokens import compiler_lexer
    from tinyc.parser import lalr
    from tinyc.parser.lexer import LexError
    from tinyc.parser.tables import KEYWORDS

    text_of = {terminal: text for text, terminal in KEYWORDS.items()}
    sentinel = lalr.Token("$COMPLETION", "", len(before), 1, 1, 1, 1, len(before))
    try:
        tokens = list(compiler_lexer().lex(before))
        lalr.parse([*tokens, sentinel])
    except LexError:
        return None
    except lalr.ParseError as err:
        if err.token is not sentinel:
            return None
        return {text_of.get(t, t) for t in err.accepts()}
    except Exception:  # the parser's own limits (nesting): nothing to suggest from
        return None
    return None
