"""Statements in index notation, as Yateto users write them: parsed and located.

    T[k,q,e] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e]
    Q2[k,q,e] = Q[k,q,e] + dt * T[k,q,e]
    Q[k,q,e] -= 0.5 * dt**2 / h * T[k,q,e]

A statement is a target tensor, `=`, `+=` or `-=`, and a sum of products:
each term is a product of tensors (`NAME[labels]`) and scalar factors
(numbers and scalar arguments by name, multiplied or divided, raised to a
positive integer power with `**`), with a sign.
Labels are local to a statement; a label that a term holds and the target
does not is summed within that term (as np.einsum does). Parentheses are
not part of the notation: a sum of products is written out.

`parse(texts)` returns `Statement`s whose accesses remember where they
stand in the text, so every later error names the statement and points at
the label or tensor (`StatementError`, a ValueError or TypeError).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

_TOKEN = re.compile(r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z][A-Za-z0-9_]*)"
                    r"|(?P<op>\+=|-=|\*\*|[-+*/=\[\],()]))")
Span = tuple[int, int]  # [start, end) character offsets in the statement's text


def excerpt(text: str, span: Span) -> str:
    """The statement with carets under `span`, for messages."""
    start, end = span
    return f"  {text}\n  {' ' * start}{'^' * max(1, end - start)}"


class _Located:
    """What a statement error knows: which statement, where in it."""

    def __init__(self, message: str, number: int, text: str, span: Span | None):
        self.number, self.text, self.span = number, text, span
        where = f"statement {number}" if number else "statements"
        full = f"{where}: {message}"
        if span is not None:
            full += "\n" + excerpt(text, span)
        elif text:
            full += f"\n  {text}"
        super().__init__(full)  # type: ignore[call-arg]


class StatementError(_Located, ValueError):
    """A bad statement: syntax, labels, shapes; names the statement and the label."""


class StatementTypeError(_Located, TypeError):
    """A name used as the wrong kind of thing (a scalar as a tensor, a temporary passed in)."""


@dataclass(frozen=True)
class Access:
    """`NAME[l0,l1,...]` at `span`; `label_spans[i]` is where label i stands."""

    name: str
    labels: tuple[str, ...]
    span: Span
    label_spans: tuple[Span, ...]

    def __str__(self) -> str:
        return f"{self.name}[{','.join(self.labels)}]"


@dataclass(frozen=True)
class Scalar:
    """A scalar argument as a factor, divided by when `inverse`."""

    name: str
    span: Span
    inverse: bool = False


@dataclass(frozen=True)
class Term:
    """number · Π scalars · Π tensors (the sign is in `number`)."""

    number: float
    scalars: tuple[Scalar, ...]
    tensors: tuple[Access, ...]
    span: Span


@dataclass(frozen=True)
class Statement:
    """target (`=` or accumulate) Σ terms; `number` counts from 1, as messages do."""

    number: int
    text: str
    target: Access
    accumulate: bool
    terms: tuple[Term, ...]

    def error(self, message: str, span: Span | None = None, kind: type = StatementError) -> Exception:
        return kind(message, self.number, self.text, span)

    def __str__(self) -> str:
        return self.text


class _Tokens:
    """The tokens of one statement: (kind, text, span), with one token of lookahead."""

    def __init__(self, number: int, text: str):
        self.number, self.text = number, text
        self.items: list[tuple[str, str, Span]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            match = _TOKEN.match(text, pos)
            if match is None or match.end() == pos:
                start = len(text) - len(text[pos:].lstrip())
                raise StatementError(f"unexpected character {text[start]!r}", number, text, (start, start + 1))
            kind = match.lastgroup or "op"
            start = match.start(kind)
            self.items.append((kind, match.group(kind), (start, match.end())))
            pos = match.end()
        self.pos = 0

    def peek(self) -> tuple[str, str, Span]:
        if self.pos < len(self.items):
            return self.items[self.pos]
        end = len(self.text.rstrip())
        return "end", "", (end, end + 1)

    def take(self) -> tuple[str, str, Span]:
        token = self.peek()
        self.pos += 1
        return token

    def expect(self, text: str, what: str) -> Span:
        kind, found, span = self.take()
        if found != text or kind == "end":
            raise StatementError(f"expected {what}, found {_shown(kind, found)}", self.number, self.text, span)
        return span


def _shown(kind: str, text: str) -> str:
    return "the end of the statement" if kind == "end" else repr(text)


def parse(texts: Sequence[str]) -> list[Statement]:
    """Every statement parsed; the first bad one raises StatementError."""
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
        raise TypeError(f"statements must be a list of strings, got {type(texts).__name__}")
    if not texts:
        raise ValueError("statements: the list is empty; give at least one statement")
    out = []
    for number, text in enumerate(texts, 1):
        if not isinstance(text, str):
            raise TypeError(f"statement {number} must be a string, got {type(text).__name__}")
        out.append(parse_statement(number, text))
    return out


def parse_statement(number: int, text: str) -> Statement:
    tokens = _Tokens(number, text)
    kind, _, span = tokens.peek()
    if kind != "name":
        raise StatementError("a statement starts with its target tensor, e.g. 'T[i,j] = ...'",
                             number, text, span)
    target = _access(tokens, tokens.take())
    kind, op, span = tokens.take()
    if op not in ("=", "+=", "-="):
        raise StatementError(f"expected '=', '+=' or '-=' after the target, found {_shown(kind, op)}",
                             number, text, span)
    terms = _sum(tokens, negate=op == "-=")
    kind, found, span = tokens.peek()
    if kind != "end":
        raise StatementError(f"unexpected {found!r} after the last term", number, text, span)
    return Statement(number, text, target, op != "=", tuple(terms))


def _sum(tokens: _Tokens, negate: bool) -> list[Term]:
    terms = []
    sign = -1.0 if negate else 1.0
    kind, op, _ = tokens.peek()
    if op in ("+", "-"):
        tokens.take()
        sign = -sign if op == "-" else sign
    while True:
        terms.append(_term(tokens, sign))
        kind, op, _ = tokens.peek()
        if op not in ("+", "-") or kind == "end":
            return terms
        tokens.take()
        sign = -1.0 if (op == "-") != negate else 1.0


def _term(tokens: _Tokens, sign: float) -> Term:
    number, scalars, tensors = sign, [], []
    start = tokens.peek()[2][0]
    divide = False
    while True:
        kind, text, span = tokens.take()
        if kind == "number":
            value = float(text) ** _power(tokens)
            if divide and value == 0:
                raise StatementError("division by zero", tokens.number, tokens.text, span)
            number = number / value if divide else number * value
        elif kind == "name" and tokens.peek()[1] == "[":
            if divide:
                raise StatementError(f"cannot divide by the tensor {text}; only by numbers and scalars",
                                     tokens.number, tokens.text, span)
            tensors.append(_access(tokens, (kind, text, span)))
        elif kind == "name":
            scalars += [Scalar(text, span, divide)] * _power(tokens)
        elif text == "(":
            raise StatementError("parentheses are not part of the notation; write the sum of products out",
                                 tokens.number, tokens.text, span)
        else:
            raise StatementError(f"expected a tensor, a scalar or a number, found {_shown(kind, text)}",
                                 tokens.number, tokens.text, span)
        end = tokens.pos
        following = tokens.peek()[1]
        if following not in ("*", "/") or tokens.peek()[0] == "end":
            break
        tokens.take()
        divide = following == "/"
    last = tokens.items[end - 1][2][1]
    if not tensors:
        raise StatementError("each term needs a tensor (a term of scalars alone has no labels)",
                             tokens.number, tokens.text, (start, last))
    return Term(number, tuple(scalars), tuple(tensors), (start, last))


def _power(tokens: _Tokens) -> int:
    """`** n` after a number or scalar (n a positive integer), else 1."""
    if tokens.peek()[1] != "**":
        return 1
    tokens.take()
    kind, text, span = tokens.take()
    if kind != "number" or not text.isdigit() or int(text) < 1:
        raise StatementError(f"expected a positive integer exponent after '**', found {_shown(kind, text)}",
                             tokens.number, tokens.text, span)
    return int(text)


def _access(tokens: _Tokens, head: tuple[str, str, Span]) -> Access:
    _, name, (start, _) = head
    tokens.expect("[", f"'[' after the tensor {name}")
    labels, spans = [], []
    if tokens.peek()[1] != "]":
        while True:
            kind, label, span = tokens.take()
            if kind != "name":
                raise StatementError(f"expected a label (a name such as i or k2) in {name}[...], "
                                     f"found {_shown(kind, label)}", tokens.number, tokens.text, span)
            if label in labels:
                raise StatementError(f"label '{label}' repeats in {name}[...]; a label names one mode "
                                     f"of a tensor", tokens.number, tokens.text, span)
            labels.append(label)
            spans.append(span)
            if tokens.peek()[1] != ",":
                break
            tokens.take()
    end = tokens.expect("]", f"',' or ']' in {name}[...]")[1]
    return Access(name, tuple(labels), (start, end), tuple(spans))
