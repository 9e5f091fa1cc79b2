"""State shared by the pieces of the IR builder: source, errors, spans, scopes.

Names follow the spec's region rule: a region sees the values of the regions
around it and the function arguments, never the reverse. Because names are
SSA, defining a name that is visible is an error, while sibling regions may
reuse a name (each gets its own `Scope`).
"""

from __future__ import annotations

from typing import Iterator

from tinyc.diagnostics import DiagnosticSink, Note, Source, Span
from tinyc.ir.core import Value
from tinyc.ir.types import void
from tinyc.diagnostics import did_you_mean
from tinyc.parser.lalr import Token, Tree
from tinyc.std import Marker, Std

MAX_NESTING = 64
"""Deepest nesting of regions or attributes; keeps the recursive builder, verifier
and printer far from Python's recursion limit on hostile input."""


class Scope:
    """The names defined in one region, chained to the enclosing region's scope."""

    def __init__(self, parent: "Scope | None" = None):
        self.parent = parent
        self.values: dict[str, Value] = {}

    def lookup(self, name: str) -> Value | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope.values.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def visible(self) -> Iterator[str]:
        scope: Scope | None = self
        while scope is not None:
            yield from scope.values
            scope = scope.parent


new_object = object.__new__
"""An instance without its class call (no `__init__` frame): the builder's commonest objects."""


def new_span(line: int, column: int, end_line: int, end_column: int, source: Source | None) -> Span:
    """`Span(...)` without the class call (a type call looks `__init__` up and runs it in a
    frame of its own): the builder makes one per operand, type, instruction and name, about
    200,000 for 40,000 instructions."""
    span = new_object(Span)
    span.line = line
    span.column = column
    span.end_line = end_line
    span.end_column = end_column
    span.source = source
    return span


def span_of(node: Token | Tree, source: Source) -> Span:
    """The span of a token or parse-tree node; lark's end column is exclusive, ours inclusive."""
    if type(node) is Token:  # every token has all four (the common case: operands)
        end = node.end_column - 1
        return new_span(node.line, node.column, node.end_line, end if end > 1 else 1, source)
    if type(node) is Tree and node._first is not None:  # its first and last token
        own = node._own
        first, last = own if own is not None else (node._first, node._last)
        end = last.end_column - 1
        return new_span(first.line, first.column, last.end_line, end if end > 1 else 1, source)
    meta = node if isinstance(node, Token) else node.meta
    line = getattr(meta, "line", 1)
    column = getattr(meta, "column", 1)
    end_line = getattr(meta, "end_line", line)
    end_column = getattr(meta, "end_column", column + 1)
    return Span(line, column, end_line, max(end_column - 1, 1), source)


class BuildContext:
    """Errors, the scope chain and nesting depth while one program is built."""

    def __init__(self, source: Source):
        self.source = source
        self.sink = DiagnosticSink()
        self.scope = Scope()
        self.depth = 0
        self._reported_undefined: set[str] = set()
        self.defined: dict[str, Span] = {}
        self.markers: list[Marker] = []  # the first spelling of each version only (all `decide` reads)

    def mark(self, std: Std, what: str, node: Token | Tree | Span | None) -> None:
        """Note a spelling that only `std` has: evidence for the program's version."""
        if self.unmarked(std):
            span = node if isinstance(node, Span) or node is None else self.span(node)
            self.markers.append(Marker(std, what, span))

    def unmarked(self, std: Std) -> bool:
        """No spelling of `std` noted yet (a caller may skip composing its description)."""
        for marker in self.markers:
            if marker.std is std:
                return False
        return True

    def span(self, node: Token | Tree) -> Span:
        return span_of(node, self.source)

    def error(self, message: str, node: Token | Tree | Span, notes: tuple[Note, ...] = ()) -> None:
        span = node if isinstance(node, Span) else self.span(node)
        self.sink.error(message, span, notes)

    # ------------------------------------------------------------ names

    def new_function(self) -> None:
        """Each function starts with a fresh set of names."""
        self.scope = Scope()
        self._reported_undefined = set()
        self.defined: dict[str, Span] = {}  # every name defined so far in the function, any region

    def push(self) -> None:
        self.scope = Scope(self.scope)

    def pop(self) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    def use(self, token: Token) -> tuple[Value, Span]:
        """The value a `%name` refers to, with the span of this use.

        An undefined name is reported once per function and stands for a
        placeholder, so one typo does not hide the other errors.
        """
        # (the span inline: a `%name` is at least two characters, one line)
        line = token.line
        span = new_span(line, token.column, line, token.end_column - 1, self.source)
        name = token.value[1:]
        scope = self.scope
        value = scope.values.get(name)
        if value is None:
            value = scope.lookup(name)
        if value is None:
            if name not in self._reported_undefined:
                self._reported_undefined.add(name)
                elsewhere = self.defined.get(name)
                if elsewhere is not None:  # defined in a region that does not enclose this use
                    self.error(f"undefined value '%{name}'", span,
                               (Note(f"'%{name}' is defined here, in a region that does not enclose "
                                     f"this use (a value is visible only inside its region)", elsewhere),))
                else:
                    hint = did_you_mean("%" + name, ["%" + n for n in self.scope.visible()])
                    self.error(f"undefined value '%{name}'{hint}", span)
            value = Value(void, name, span)
        return value, span

    def define(self, value: Value, token: Token) -> None:
        """Give `value` the name and span of `token`, in the current scope."""
        name = token.value[1:]
        value.name = name
        line = token.line
        value.span = new_span(line, token.column, line, token.end_column - 1, self.source)
        scope = self.scope
        first = scope.values.get(name)
        if first is None and scope.parent is not None:
            first = scope.parent.lookup(name)
        if first is not None:
            self.error(f"redefinition of '%{name}'", value.span,
                       (Note(f"'%{name}' is first defined here", first.span),))
            return
        scope.values[name] = value
        self.defined[name] = value.span
