"""The LALR(1) driver: tokens → parse tree, shaped like lark's LALR trees.

tensor.lark is analysed at development time by lark (`gen_tables.py`); the
tables in `tables.py` drive the loop below, so parsing needs neither lark's
import (~25 ms) nor its grammar cache (~30 ms) at run time. Trees come out
as lark builds them with `propagate_positions=True, maybe_placeholders=False`:
anonymous tokens dropped, `_rule`s spliced into their parent, `?rule`s with
one child replaced by it, and every node's `meta` spanning its first to its
last token (the tokens dropped from the tree included).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from tinyc.parser import tables
from tinyc.parser.lalr_rows import (
    ACTIONS, CHAINED, CHAINED_TARGETS, GOTOS, RULES, STEPS, TARGETS, KEEP_ALL, STANDS,
    TRANSPARENT, UNIT, Append, Rule, Shift, fill_chained_step, fill_chained_target, fill_step, fill_target,
)
from tinyc.parser.syntax_tree import Token, Tree

__all__ = ["Token", "Tree", "ParseError", "parse", "parse_recovering", "MAX_ERRORS", "LEX_ERROR"]


class ParseError(Exception):
    """`token` cannot come next; `accepts()` are the terminals that could."""

    def __init__(self, token: Token, states: list[int], previous: Token | None = None) -> None:
        super().__init__(f"unexpected token {token!r}")
        self.token = token
        self.states = states
        self.previous = previous  # the token before `token` (for "missing ... at the end of line")

    def accepts(self) -> set[str]:
        """The terminals that would be shifted here (or end the input), after any reductions.

        Replays each terminal of the state, so it is exact where LALR merged
        states offer tokens from other contexts, like lark's
        `InteractiveParser.accepts()`.
        """
        actions, gotos, rules = ACTIONS, GOTOS, RULES
        accepted = set()
        for terminal in actions[self.states[-1]]:
            stack = list(self.states)
            while True:
                action = actions[stack[-1]].get(terminal)
                if action is None:
                    break
                if action >= 0:
                    accepted.add(terminal)
                    break
                origin, _, size, _, _, _ = rules[~action]
                if size:
                    del stack[-size:]
                stack.append(gotos[stack[-1]][origin])
                if terminal == "$END" and stack[-1] == tables.END_STATE:
                    accepted.add(terminal)
                    break
        return accepted


def parse(tokens: Iterable[Token], chained: bool = False) -> Tree:
    """The parse tree of a token stream; raises ParseError at the first token that cannot follow.

    `chained`: a token that is a rule of its own is shifted and reduced in one step (`Shift`);
    the same tree, but a ParseError may come some reductions later, its `states` not the
    textbook's (for callers that only want to know whether there is an error).

    The textbook LALR driver (`parse_recovering` is the same loop with error
    recovery; the first succeeds or fails fast, the second runs only on errors).
    A reduction is `_reduce` written out in the loop: a large function makes
    about as many reductions as tokens, and the call and the tuple of
    arguments were a third of the driver's time. Rows of `STEPS` and
    `TARGETS` are read in a `try`; a state's first visit fills its row.
    """
    steps, targets, new, tree_cls, keep_all = STEPS, TARGETS, object.__new__, Tree, KEEP_ALL
    transparent, append, unit, stands, shift = TRANSPARENT, Append, UNIT, STANDS, Shift
    step, target = fill_step, fill_target
    if chained:
        steps, step, targets, target = CHAINED, fill_chained_step, CHAINED_TARGETS, fill_chained_target
    states = [tables.START_STATE]
    values: list = []
    push, push_state = values.append, states.append
    state = tables.START_STATE
    token = None  # after the loop: the last token
    for token in tokens:
        kind = token.type
        while True:
            try:
                action = steps[state][kind]
            except KeyError:
                action = step(state, kind)
                if action is None:
                    raise ParseError(token, states) from None
            if type(action) is int:
                push_state(action)
                push(token)
                state = action
                break
            if type(action) is shift:
                state, names = action
                push_state(state)
                value = token
                for name in names:  # (the token's first and last are the token itself)
                    node = new(tree_cls)
                    node._first = node._last = token
                    node.data = name
                    node.children = [value]
                    node._own = None
                    value = node
                push(value)
                break
            origin, name, size, kept, expand1, pick = action
            if pick is unit or pick is stands or pick is transparent:  # the commonest shapes:
                if pick is unit:  # one symbol, kept under a new node
                    child = values[-1]
                    node = new(tree_cls)
                    if type(child) is tree_cls:
                        node._first, node._last = child._first, child._last
                    else:
                        node._first = node._last = child
                    node.data = name
                    node.children = [child]
                    node._own = None
                    values[-1] = node
                # (else the symbol itself stands for the rule: a `?rule` of one child, whose
                # place is the rule's, or an inlined rule that passes its symbol on)
                try:  # one state popped and the goto's pushed: the top one replaced
                    state = targets[states[-2]][origin]
                except KeyError:
                    state = target(states[-2], origin)
                states[-1] = state
                continue
            if size:
                children = values[-size:]
                del values[-size:]
                del states[-size:]
                first, last = children[0], children[-1]
                if type(first) is tree_cls:
                    first = first._first
                if type(last) is tree_cls:
                    last = last._last
                if first is None or last is None:
                    first, last = _bounds(children)
            else:
                children, first, last = [], None, None
            if pick is keep_all:
                filtered = children
            elif type(pick) is append:  # the list so far, one more: no call to `_children`,
                node = children[0]  # and no new node (the list's own is only on the stack)
                node.children.append(children[pick])
                node._first = first
                node._last = last
                filtered = None
            elif type(pick) is int:
                filtered = [children[pick]]
            else:
                filtered = _children(kept, children) if pick is None else list(pick(children)) if pick else []
            if filtered is None:
                pass
            elif expand1 and len(filtered) == 1:
                node = filtered[0]
                if first is not None and type(node) is tree_cls:
                    _widen(node, first, last)
            else:
                node = new(tree_cls)
                node.data = name
                node.children = filtered
                node._first = first
                node._last = last
                node._own = None
            try:
                state = targets[states[-1]][origin]
            except KeyError:
                state = target(states[-1], origin)
            push_state(state)
            push(node)
    return _finish(token, states, values)


def _finish(last: Token | None, states: list[int], values: list) -> Tree:
    """The reductions at the end of the input, up to the start symbol."""
    end = _end(last)
    while True:
        action = ACTIONS[states[-1]].get("$END")
        if action is None or action >= 0:  # the grammar never shifts $END
            raise ParseError(end, states)
        _reduce(RULES[~action], states, values, GOTOS)
        if states[-1] == tables.END_STATE:
            return values[-1]


def _end(last: Token | None) -> Token:
    """The end of the input, placed at the last token (errors point there)."""
    return Token("$END", "", 0, 1, 1) if last is None else Token(
        "$END", "", last.start_pos, last.line, last.column, last.end_line, last.end_column, last.end_pos)


MAX_ERRORS = 20
"""Syntax errors reported per file before giving up."""

LEX_ERROR = "LEXERROR"
"""Token type of text that starts no token (the lexer's recovering mode); never in the grammar."""


def parse_recovering(tokens: Sequence[Token], limit: int = MAX_ERRORS) -> tuple[Tree | None, list[ParseError]]:
    """Parse, and after each syntax error resume at the next line or instruction.

    Returns the tree (None if there were errors) and up to `limit` errors.
    Recovery (panic mode, at line granularity): skip to the first token of a
    later line that is not inside a region opened by the skipped tokens, and
    pop the stack to the nearest state that takes it and where an
    instruction or function may start (one that can shift `}` or `func`).
    The erroneous instruction is dropped, so later errors in the file are
    reported without cascading from the first. A missing `: type` at the end
    of a line is therefore caught where the next line starts, which
    `errors.py` reports at the end of the incomplete line.
    """
    actions, gotos, rules = ACTIONS, GOTOS, RULES
    states = [tables.START_STATE]
    values: list = []
    errors: list[ParseError] = []
    count = len(tokens)
    last = tokens[-1] if tokens else None
    end = _end(last)
    i = 0
    resumed_at = -1
    while True:
        token = tokens[i] if i < count else end
        action = actions[states[-1]].get(token.type)
        if action is None:
            errors.append(ParseError(token, list(states), tokens[i - 1] if 0 < i <= count else None))
            if len(errors) >= limit or token is end:
                return None, errors
            i = _resynchronise(tokens, i, states, values, i == resumed_at)
            if i >= count:  # nothing to resume at: what is left is part of the error
                return None, errors
            resumed_at = i
            continue
        if action >= 0:
            states.append(action)
            values.append(token)
            i += 1
            continue
        _reduce(rules[~action], states, values, gotos)
        if token is end and states[-1] == tables.END_STATE:
            return (None if errors else values[-1]), errors


def _resynchronise(tokens: Sequence[Token], i: int, states: list[int], values: list,
                   stuck: bool) -> int:
    """Where to resume after an error at tokens[i]; pops the stacks to a state that takes it.

    `stuck`: the last resynchronisation resumed at this very token, so it must move on."""
    depth = 0
    for j in range(i, len(tokens)):
        token = tokens[j]
        starts_line = j == 0 or tokens[j - 1].line < token.line
        if starts_line and depth == 0 and not (stuck and j == i) and token.type != LEX_ERROR:
            for k in range(len(states) - 1, -1, -1):
                row = ACTIONS[states[k]]
                if token.type in row and (row.get("RBRACE", -1) >= 0 or row.get("FUNC", -1) >= 0):
                    del states[k + 1:]
                    del values[k:]
                    return j
        if token.type == "LBRACE":
            depth += 1
        elif token.type == "RBRACE" and depth:
            depth -= 1
    return len(tokens)


def _reduce(rule: Rule, states: list[int], values: list, gotos: dict) -> None:
    """Replace the rule's symbols on the stacks by its node (what `parse` does inline)."""
    origin, name, size, kept, expand1, pick = rule
    if pick is TRANSPARENT:
        del states[-1]
        states.append(gotos[states[-1]][origin])
        return
    if size:
        children = values[-size:]
        del values[-size:]
        del states[-size:]
        first, last = _bounds(children)
    else:
        children, first, last = [], None, None
    filtered = _children(kept, children)
    if expand1 and len(filtered) == 1:
        node = filtered[0]
        if first is not None and type(node) is Tree:
            _widen(node, first, last)
    else:
        node = Tree(name, filtered)
        node._first, node._last = first, last
    states.append(gotos[states[-1]][origin])
    values.append(node)


def _children(kept: tuple[tuple[int, bool], ...], children: list) -> list:
    """The node's children: the kept symbols, the lists of inlined rules spliced in."""
    filtered: list = []
    for index, splice in kept:
        if not splice:
            filtered.append(children[index])
        elif filtered:
            filtered += children[index].children
        else:  # the node of an inlined rule is spliced once and dropped: take its list
            filtered = children[index].children
    # (Copying the spliced list instead made `instruction*` quadratic: each
    # reduction of `__star: __star instruction` copied every instruction so far.)
    return filtered


def _bounds(children: list) -> tuple[Token | None, Token | None]:
    """The first and last token under the children that have one (lark's PropagatePositions)."""
    first = last = None
    for child in children:
        first = child._first if type(child) is Tree else child
        if first is not None:
            break
    for child in reversed(children):
        last = child._last if type(child) is Tree else child
        if last is not None:
            break
    return first, last


def _widen(node: Tree, first: Token, last: Token) -> None:
    """A `?rule` replaced by its child `node`: the child's container grows to the rule's
    tokens, while its own place stays (it takes the container's if it had none)."""
    if node._own is None and node._first is not None:
        node._own = (node._first, node._last)
    node._first, node._last = first, last
