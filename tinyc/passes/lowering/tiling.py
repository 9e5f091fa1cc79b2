"""Tile shapes and the distribution of tiles over subgroups.

The tile sizes themselves are schedule knobs (tinyc/schedule/knobs.py, with
their defaults in tinyc/schedule/defaults.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tinyc.ir.core import Value
from tinyc.passes.lowering.lowering_builder import LoweringBuilder, static


@dataclass(frozen=True)
class GemmTiles:
    """Accumulator tile m × n and the K step k of one matmul."""

    m: int
    n: int
    k: int


def distribute(b: LoweringBuilder, count: Value, subgroup: Value, num_subgroups: int,
               body: Callable[[Value], None], hint: str | None = "tile") -> None:
    """Run `body(t)` for t in [0, count), round-robin over the subgroups.

    With a static count of at most one tile per subgroup the loop becomes an
    `if` (or nothing), so small problems give straight-line code.
    """
    n = static(count)
    if n is not None and n <= num_subgroups:
        if n == num_subgroups:
            body(subgroup)
        elif n > 0:
            with b.if_(b.lt(subgroup, count)) as branch, branch.then():
                body(subgroup)
        return
    with b.for_(subgroup, count, b.int_const(num_subgroups, count.type),
                loop_type=count.type) as (t, _, _):
        if hint is not None:
            b.named(t, hint)
        body(t)
