"""The words of the language for editors, derived from the grammar and the IR classes.

Completion, hover, syntax colours (Pygments, TextMate) and the formatter
need to know which words are instructions (with every variant such as
`gemm.n.t.atomic`), types, attribute names and other keywords. None of that
is typed here: the words and their roles are read from the parser's tables
(generated from `tensor.lark` and the instruction classes' `keywords` and
`syntax`), and an instruction's one-line summary and kind come from the class
whose `keywords` hold its keyword (the first line of its docstring). A new instruction or spelling in the
grammar shows up in every editor feature without touching this module.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cache
from typing import Iterator

from tinyc.parser import tables

_TEXT = {terminal: text for text, terminal in tables.KEYWORDS.items()}
"""Terminal name -> the keyword it spells."""


@cache
def _productions() -> dict[str, list[list[str]]]:
    """Nonterminal -> its productions (lists of symbols), from the LALR tables' rules."""
    rules: dict[str, list[list[str]]] = {}
    for line in tables.RULES.splitlines():
        head = line.split(" => ")[0]
        origin, symbols = head.split(":", 1)
        rules.setdefault(origin.strip(), []).append(symbols.split())
    return rules


def _is_word(text: str) -> bool:
    return text[:1].isalpha() or text[:1] == "_"


def _alternatives(symbol: str) -> list[str] | None:
    """The keywords a symbol stands for if it is a keyword or a choice of single keywords."""
    if symbol in _TEXT:
        return [_TEXT[symbol]]
    productions = _productions().get(symbol)
    if productions and all(len(p) == 1 and p[0] in _TEXT for p in productions):
        return [_TEXT[p[0]] for p in productions]
    return None


def _reachable(start: str) -> set[str]:
    """Every symbol reachable from nonterminal `start` in the grammar."""
    seen, todo = set(), [start]
    while todo:
        symbol = todo.pop()
        if symbol in seen:
            continue
        seen.add(symbol)
        for production in _productions().get(symbol, ()):
            todo.extend(production)
    return seen


@dataclass(frozen=True)
class InstructionWord:
    """One spelling of an instruction, e.g. `gemm.n.t.atomic`, with what it does."""

    spelling: str
    head: str       # the keyword that starts it: `gemm`, `arith.add`, `barrier`
    rule: str       # the grammar rule it belongs to, e.g. `gemm`

    @property
    def summary(self) -> str:
        """The first line of the IR class's docstring."""
        return _describe(self.rule, self.spelling)[0]

    @property
    def kind(self) -> str:
        """collective, spmd or mixed."""
        return _describe(self.rule, self.spelling)[1]


@cache
def instructions() -> tuple[InstructionWord, ...]:
    """Every spelling of every instruction, in grammar order, modifiers included."""
    words: dict[str, InstructionWord] = {}
    for (operation,) in _productions()["_operation"]:
        for production in _productions()[operation]:
            for head, spelling in _spellings(production):
                if spelling not in words:
                    words[spelling] = InstructionWord(spelling, head, operation)
    return tuple(words.values())


def _spellings(production: list[str]) -> Iterator[tuple[str, str]]:
    """`gemm transpose transpose atomic ...` -> (`gemm`, `gemm.n.n.atomic`), ..."""
    parts: list[list[str]] = []
    for position, symbol in enumerate(production):
        choices = _alternatives(symbol)
        if choices is None:
            break
        if position == 0 and not all(_is_word(c) for c in choices):
            return
        if position > 0 and not all(c.startswith(".") and _is_word(c[1:]) for c in choices):
            break
        parts.append(choices)
    for combination in itertools.product(*parts):
        yield combination[0], "".join(combination)


@cache
def _describe(rule: str, spelling: str) -> tuple[str, str]:
    """(first docstring line, kind) of the IR class that the grammar rule builds."""
    cls = _instruction_class(spelling)
    if cls is None:
        return "", "mixed"
    doc = (cls.__doc__ or "").strip().splitlines()
    return (doc[0] if doc else ""), cls.kind.value


def _instruction_class(spelling: str):
    """The IR class whose `keywords` hold the spelling's keyword (its one definition).

    A class may build a subclass for some spellings (`builtin.subgroup_id` is
    a per-work-item `SpmdBuiltin`): a subclass whose docstring names the
    spelling's last part is taken then.
    """
    from tinyc.ir.instructions import instruction_classes

    classes = instruction_classes()
    head = next((w.head for w in instructions() if w.spelling == spelling), spelling)
    owner = next((c for c in classes if head in vars(c).get("keywords", ())), None)
    if owner is None:
        return None
    last = re.compile(rf"\b{re.escape(spelling.rsplit('.', 1)[-1])}\b")
    family = [c for c in classes if issubclass(c, owner) and c is not owner and c.__doc__]
    return next((c for c in family if last.search(c.__doc__)), owner)


@cache
def instruction_heads() -> frozenset[str]:
    """The keywords that start an instruction (`gemm`, `arith.add`, `for`)."""
    return frozenset(w.head for w in instructions())


@cache
def families() -> frozenset[str]:
    """Words that join the next `.word` into one instruction name: `arith`, `cmp`, ..."""
    return frozenset(h.split(".")[0] for h in instruction_heads() if "." in h)


@cache
def modifiers() -> frozenset[str]:
    """The `.word` keywords that follow an instruction (`.n`, `.atomic`, `.rows_checked`)."""
    return frozenset(k for k in tables.KEYWORDS if k.startswith(".") and _is_word(k[1:]))


@cache
def type_words() -> frozenset[str]:
    """Keywords that spell types: scalars, `memref`, `strided`, `local`, `matrix_a`, ..."""
    reachable = _reachable("type") | _reachable("value_type")
    return frozenset(_TEXT[s] for s in reachable if s in _TEXT and _is_word(_TEXT[s])
                     and _TEXT[s] != "x")


@cache
def scalar_types() -> tuple[str, ...]:
    """The scalar type keywords."""
    return tuple(_TEXT[p[0]] for p in _productions()["scalar_type"])


@cache
def attribute_names() -> tuple[str, ...]:
    """The keyword attribute names (`alignment`, `unroll`, ...); other names are quoted strings."""
    return tuple(_TEXT[p[0]] for p in _productions()["attribute_name"] if p[0] in _TEXT)


@cache
def constant_words() -> frozenset[str]:
    """Keyword literals: `true`, `false` (the words of the grammar's `literal` rule)."""
    start = "literal" if "literal" in _productions() else "boolean"
    return frozenset(_TEXT[s] for s in _reachable(start) if s in _TEXT and _is_word(_TEXT[s]))


@cache
def other_keywords() -> frozenset[str]:
    """Words of the syntax that are none of the above: `func`, `attributes`, `init`, `else`."""
    taken = instruction_heads() | type_words() | set(attribute_names()) | constant_words()
    return frozenset(k for k in tables.KEYWORDS if _is_word(k) and k not in taken and k != "x"
                     and not any(s.startswith(k + ".") for s in taken))


def lookup(spelling: str) -> InstructionWord | None:
    """The instruction spelled `spelling` (`gemm.n.t`), or None."""
    return _by_spelling().get(spelling)


@cache
def _by_spelling() -> dict[str, InstructionWord]:
    return {w.spelling: w for w in instructions()}


@cache
def _variant_counts() -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in instructions():
        counts[word.head] = counts.get(word.head, 0) + 1
    return counts


def variants(head: str) -> int:
    """How many spellings (variants) the instruction `head` has."""
    return _variant_counts().get(head, 0)
