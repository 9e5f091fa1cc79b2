"""How many work-groups are useful, and how large arrays must be for a batch.

A kernel whose accesses are guarded (`if %first + 4 <= %n`, a loop over
`min(%n - %first, 4)` entries) is safe at any batch, but work-groups past the
last entry do nothing: the *useful* batch is one more than the last
work-group that can reach an argument (LaunchBounds.last_groups, the group
id's bound where each access runs). `useful_batch` evaluates it for a call's
sizes; the runtime infers `batch=` from it (launch_check.py).

`extents` works the other way, for `tinyc run`: the least size of each `?`
mode for `batch` work-groups to be useful and to fit: a mode the batch
reaches alone (4·batch entries), a mode whose size decides the useful batch
(n >= 4·(batch - 1) + 1), then every other `?` mode a condition ties to
those (A's batch mode at least out's), each found by bisection over the
conditions with the sizes found so far; a condition on one mode alone
(`store %x, %A[%g, 2]` needs 3 entries in mode 1) raises that mode's size.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from tinyc.analysis.index_values import BATCH, MAX_BATCH
from tinyc.analysis.symbolic import Expr, Interval, Sym, interval

LARGEST = 1 << 40  # sizes tried when solving for one


def useful_batch(last_groups: tuple[Expr, ...], values: Mapping[Sym, Interval]) -> int:
    """One more than the last work-group that can reach an argument, for these sizes (the batch
    itself unbounded); MAX_BATCH if some access is not bounded by them; 0 if none runs."""
    if not last_groups:
        return MAX_BATCH
    at = dict(values)
    at[BATCH] = (MAX_BATCH, MAX_BATCH)
    found = 0
    for last in last_groups:
        try:
            found = max(found, interval(last, at)[1] + 1)
        except (KeyError, ZeroDivisionError):
            return MAX_BATCH
    return min(max(found, 0), MAX_BATCH)


def _dims(e: Expr) -> set[Sym]:
    return {s for s in e.symbols() if s.kind in ("dim", "count")}


def _key(sym: Sym) -> tuple[int, int]:
    return (sym.key[0], sym.key[1] if sym.kind == "dim" else -1)


def _least(holds: Callable[[int], bool]) -> int | None:
    """The least value in [0, LARGEST] for which `holds` (monotone: false, then true), or None."""
    if not holds(LARGEST):
        return None
    low, high = -1, LARGEST  # fails at low, holds at high
    while high - low > 1:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle
    return high


def extents(bounds: Any, batch: int) -> dict[tuple[int, int], int]:
    """The least size of each `?` mode ((parameter, mode); mode -1: a group's member count) for
    `batch` useful work-groups within the arrays (module docs)."""
    found: dict[Sym, int] = {}
    values = lambda: {s: (v, v) for s, v in found.items()} | {BATCH: (batch, batch)}  # noqa: E731
    for last in bounds.last_groups:  # sizes that make the batch useful
        dims = _dims(last)
        if len(dims) == 1:
            (d,) = dims
            need = _least(lambda v: useful_batch((last,), {**values(), d: (v, v)}) >= batch)
            if need is not None:
                found[d] = max(found.get(d, 0), need)
    for _ in range(3):  # then the conditions, one unknown size at a time
        changed = False
        for c in bounds.conditions:
            dims = _dims(c.slack)
            unknown = dims - set(found)  # solve for the one unknown size, or raise a lone known one
            if c.slack.symbols() - dims - {BATCH} or len(unknown if unknown else dims) != 1:
                continue
            (d,) = unknown if unknown else dims

            def holds(v: int, c: Any = c, d: Sym = d) -> bool:
                try:
                    return interval(c.slack, {**values(), d: (v, v)})[0] >= 0
                except (KeyError, ZeroDivisionError):
                    return False
            need = _least(holds)
            if need is not None and need > found.get(d, -1):
                found[d] = need
                changed = True
        if not changed:
            break
    return {_key(d): v for d, v in found.items()}
