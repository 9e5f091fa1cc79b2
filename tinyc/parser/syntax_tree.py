"""The parser's output: tokens and parse-tree nodes, shaped like lark's (`lalr.py` makes them).

Their own module so that what reads trees (the IR builder, the formatter, the
editor, error messages) does not depend on the driver's tables; `lalr` exports
both names as before.
"""

from __future__ import annotations


class Token:
    """A token: its text (`value`), terminal name (`type`) and place, as lark's Token has them.

    Not a `str` subclass (lark's is): making a str subclass copies the text
    into a new object, and a large function has hundreds of thousands of
    tokens. It compares equal to a token of the same terminal and text, and
    to its text.

    The offsets into the text (`start_pos`, `end_pos`) are read from
    `_offsets`: the lexer's list of where each line starts (shared by all
    the tokens of a text: two new ints a token fewer to make and free, which
    checking never reads), or the two numbers given to the constructor.
    """

    __slots__ = ("type", "value", "line", "column", "end_line", "end_column", "_offsets")

    def __init__(self, type: str, value: str, start_pos: int | None = None, line: int | None = None,
                 column: int | None = None, end_line: int | None = None, end_column: int | None = None,
                 end_pos: int | None = None) -> None:
        self.type = type
        self.value = value
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column  # exclusive, like lark's
        self._offsets: list[int] | tuple[int | None, int | None] = (start_pos, end_pos)

    @property
    def start_pos(self) -> int | None:
        return self._offset(0, self.line, self.column)

    @property
    def end_pos(self) -> int | None:
        return self._offset(1, self.end_line, self.end_column)

    def _offset(self, given: int, line: int, column: int) -> int | None:
        """Offset number `given` of the constructor's, or the one at (line, column)."""
        offsets = self._offsets
        if offsets.__class__ is tuple:
            return offsets[given]
        return offsets[line - 1] + column - 1

    def __eq__(self, other: object) -> bool:
        if other.__class__ is str:
            return self.value == other
        if isinstance(other, Token):
            return self.type == other.type and self.value == other.value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.value)

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"


class Tree:
    """A parse-tree node: rule (or alias) name, children (trees and tokens) and its place.

    The place is lark's `meta` (which `meta` returns: one object per node
    instead of two), kept as the tokens that start and end the node instead
    of twelve numbers: the driver sets two references per reduction and the
    positions are read from the tokens when asked for. `_first`/`_last` are
    lark's `container_*` (they extend over the tokens of rules inlined into
    this node, which is where a parent's span starts or ends); `_own` is the
    node's own (first, last) when a `?rule` above widened the container,
    else None. Both are None while no token below gives a position (`empty`).
    """

    __slots__ = ("data", "children", "_first", "_last", "_own")

    def __init__(self, data: str, children: list) -> None:
        self.data = data
        self.children = children
        self._first = self._last = self._own = None

    @property
    def meta(self) -> "Tree":
        return self

    @property
    def empty(self) -> bool:
        return self._first is None

    @property
    def line(self) -> int:
        return (self._own or (self._first,))[0].line

    @property
    def column(self) -> int:
        return (self._own or (self._first,))[0].column

    @property
    def start_pos(self) -> int:
        return (self._own or (self._first,))[0].start_pos

    @property
    def end_line(self) -> int:
        return (self._own or (None, self._last))[1].end_line

    @property
    def end_column(self) -> int:
        return (self._own or (None, self._last))[1].end_column

    @property
    def end_pos(self) -> int:
        return (self._own or (None, self._last))[1].end_pos

    @property
    def container_line(self) -> int:
        return self._first.line

    @property
    def container_column(self) -> int:
        return self._first.column

    @property
    def container_start_pos(self) -> int:
        return self._first.start_pos

    @property
    def container_end_line(self) -> int:
        return self._last.end_line

    @property
    def container_end_column(self) -> int:
        return self._last.end_column

    @property
    def container_end_pos(self) -> int:
        return self._last.end_pos

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        return self.data == other.data and self.children == other.children

    __hash__ = None  # mutable, like lark's trees compared by value

    def __repr__(self) -> str:
        return f"Tree({self.data!r}, {self.children!r})"
