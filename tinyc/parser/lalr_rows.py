"""The generated LALR tables (`tables.py`) decoded for the driver in `lalr.py`.

Rows are decoded from their text on first use (a parse visits few states), then kept in
plain dicts the driver reads fastest: the actions with their rules looked up (`STEPS`),
the gotos (`TARGETS`), and the same followed through the reductions that a state makes
whatever comes next (`CHAINED`, `CHAINED_TARGETS`: a token or node that is a rule of its
own takes one step instead of two or three).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from tinyc.parser import tables

Rule = tuple[str, str, int, tuple[tuple[int, bool], ...], bool, Any]
"""(nonterminal, tree name, number of symbols, kept children (index, splice), ?rule, pick):
`pick` is the kept children pre-split for the driver (`_pick`)."""

KEEP_ALL = True
"""`pick` of a rule that keeps every symbol as it is: the popped list is the node's children."""


class _Rows(dict):
    """Rows of a table, decoded from their line on first use (a parse visits few states)."""

    def __init__(self, text: str, decode) -> None:
        super().__init__()
        self.lines = text.splitlines()
        self.decode = decode

    def __missing__(self, key: int):
        row = self[key] = self.decode(self.lines[key])
        return row


def _rule(line: str) -> Rule:
    head, shape = line.split(" => ")
    origin, symbols = head.split(":")
    name, *kept = shape.split()
    expand1 = bool(kept) and kept[0] == "?"
    inlined, symbol = _transparent(), symbols.split()
    children = tuple((int(k.rstrip("*")), k[-1] == "*" and symbol[int(k[:-1])] not in inlined)
                     for k in kept[expand1:])
    pick = TRANSPARENT if origin in inlined else _pick(children, len(symbol))
    if pick is KEEP_ALL and len(symbol) == 1:  # the commonest shapes, told apart once here
        pick = STANDS if expand1 else UNIT
    return origin, name, len(symbol), children, expand1, pick


TRANSPARENT: Any = object()
"""`pick` of an inlined rule that only passes its one symbol on (`_operation: arith_binary`):
no node is made, and the rules that splice it keep that symbol instead (the same tree)."""
_TRANSPARENT: list[frozenset[str]] = []
UNIT: Any = object()
"""`pick` of a rule of one symbol kept under a node of its own (`scalar_type: F32`)."""
STANDS: Any = object()
"""`pick` of a `?rule` of one symbol kept: the symbol itself stands for the rule (its place is
the rule's)."""


def _transparent() -> frozenset[str]:
    """The inlined rules (`_name`) each of whose alternatives is one symbol, kept as it is."""
    if not _TRANSPARENT:
        passes: dict[str, bool] = {}
        for line in tables.RULES.splitlines():
            head, shape = line.split(" => ")
            origin, symbols = head.split(":")
            one = origin[0] == "_" and origin[1] != "_" and len(symbols.split()) == 1 \
                and shape.split()[1:] == ["0"]
            passes[origin] = passes.get(origin, True) and one
        _TRANSPARENT.append(frozenset(origin for origin, one in passes.items() if one))
    return _TRANSPARENT[0]


class Append(int):
    """`pick` of `__list: __list ... item`: the list so far (spliced) with the item at this index."""


def _pick(kept: tuple[tuple[int, bool], ...], size: int) -> Any:
    """How the driver takes a rule's kept children from the popped symbols, cheapest first:
    KEEP_ALL (all of them), one index, an itemgetter of several, () for none, an Append,
    or None when others are spliced (the general loop in `_children`)."""
    if len(kept) == 2 and kept[0] == (0, True) and not kept[1][1]:
        return Append(kept[1][0])
    if any(splice for _, splice in kept):
        return None
    indices = tuple(index for index, _ in kept)
    if indices == tuple(range(size)) and size:
        return KEEP_ALL
    if len(indices) == 1:
        return indices[0]
    return itemgetter(*indices) if indices else ()


def _action_row(line: str) -> dict[str, int]:
    """`sN @k rM @j ...` -> {terminal: N (shift) or ~M (reduce)}."""
    row: dict[str, int] = {}
    words = line.split()
    for key, ref in zip(words[::2], words[1::2]):
        action = int(key[1:]) if key[0] == "s" else ~int(key[1:])
        row.update(dict.fromkeys(_SETS[int(ref[1:])], action))
    return row


def _set_row(line: str) -> list[str]:
    return line.split()


def _goto_row(line: str) -> dict[str, int]:
    """`nonterminal=N ...` -> {nonterminal: N}."""
    return {sym: int(state) for sym, _, state in (word.partition("=") for word in line.split())}


_SETS: dict[int, list[str]] = _Rows(tables.SETS, _set_row)
"""Terminal sets the action rows refer to (`@k`), decoded on first use."""
ACTIONS: dict[int, dict[str, int]] = _Rows(tables.ACTIONS, _action_row)
"""State -> {terminal: the next state (shift) or ~rule (reduce)}."""
GOTOS: dict[int, dict[str, int]] = _Rows(tables.GOTOS, _goto_row)
RULES: dict[int, Rule] = _Rows(tables.RULES, _rule)


STATES = len(tables.ACTIONS.splitlines())
"""The number of states: the rows below are lists by state (the driver's cheapest lookup)."""
STEPS: list[dict[str, int | Rule]] = [{} for _ in range(STATES)]
"""`ACTIONS` with the rules looked up (a shift's state, or the Rule to reduce by): plain
dicts (the driver's fastest lookup), filled as `parse` visits states (empty until then)."""
TARGETS: list[dict[str, int]] = [{} for _ in range(STATES)]
"""`GOTOS` as plain dicts, filled as `parse` visits states."""


def fill_step(state: int, terminal: str) -> int | Rule | None:
    """What `parse` does in `state` on `terminal` (None: a syntax error); fills `STEPS`."""
    row = STEPS[state]
    if not row:
        row.update({kind: action if action >= 0 else RULES[~action]
                    for kind, action in ACTIONS[state].items()})
    return row.get(terminal)


def fill_target(state: int, origin: str) -> int:
    row = TARGETS[state]
    if not row:
        row.update(GOTOS[state])
    return row[origin]


class Shift(tuple):
    """A shift followed by the reductions its state makes whatever comes next (a token that
    is a rule of its own: `scalar_type: F32`, `dim: INTEGER`): (the state they end in, the
    names of the nodes to put around the token, innermost first). `parse(chained=True)`."""


CHAINED: list[dict[str, int | Shift | Rule]] = [{} for _ in range(STATES)]
"""`STEPS` where a shift is followed by such reductions: one step each (`fill_chained_step`)."""
CHAINED_TARGETS: list[dict[str, int]] = [{} for _ in range(STATES)]
"""`TARGETS` followed through the reductions that keep the symbol as it is (`fill_chained_target`)."""


def _default_reduction(state: int) -> Rule | None:
    """The rule of one symbol `state` reduces by whatever comes next, if it does."""
    reductions = set(ACTIONS[state].values())
    if len(reductions) != 1:
        return None
    (reduce,) = reductions
    if reduce >= 0:
        return None
    rule = RULES[~reduce]
    pick = rule[5]
    return rule if pick is UNIT or pick is STANDS or pick is TRANSPARENT else None


def fill_chained_step(state: int, terminal: str) -> int | Shift | Rule | None:
    """`fill_step`, with a shift into a state that reduces rules of one symbol whatever comes next
    followed through them (into a `Shift`); fills `CHAINED`."""
    action = fill_step(state, terminal)
    if action is None:
        return None
    row = CHAINED[state]
    row[terminal] = action
    if action.__class__ is not int:
        return action
    names: list[str] = []
    after = action
    rule = _default_reduction(after)
    while rule is not None:
        origin, name, _, _, _, pick = rule
        if pick is UNIT:
            names.append(name)
        after = fill_target(state, origin)  # (the token's symbol replaced: the goto from below it)
        rule = _default_reduction(after)
    if after != action:
        action = row[terminal] = Shift((after, tuple(names)))
    return action


def fill_chained_target(state: int, origin: str) -> int:
    """`fill_target`, followed through the reductions of a `?rule` or an inlined rule that the
    symbol makes whatever comes next (its node stands for them); fills `CHAINED_TARGETS`."""
    after = fill_target(state, origin)
    rule = _default_reduction(after)
    while rule is not None and rule[5] is not UNIT:
        after = fill_target(state, rule[0])
        rule = _default_reduction(after)
    row = CHAINED_TARGETS[state]
    row[origin] = after
    return after
