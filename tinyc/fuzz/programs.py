"""The campaign's programs: program i of a seed, drawn from the full table.

Whether program i is a newest-language program is drawn apart from its text
(NEWEST_SHARE), so the seed programs come out as the campaigns before the
newest language's entries drew them (docs/fuzzing.md).
"""

from __future__ import annotations

import random
from typing import Iterator, Sequence

from tinyc.fuzz.generator import write_kernel
from tinyc.fuzz.instructions import TABLE
from tinyc.fuzz.program import Kernel

NEWEST_SHARE = 0.4
"""The share of programs that may use the newest language's instructions."""


def generate_kernel(rng: random.Random, name: str, table: Sequence | None = None,
                    newest: bool = False) -> Kernel:
    """One random kernel named `name` (from the whole table unless `table` is given)."""
    return write_kernel(rng, name, TABLE if table is None else table, newest)


def program_kernel(seed: int, i: int, prefix: str = "k") -> Kernel:
    """Program i of seed `seed`."""
    newest = random.Random(f"{seed}:{i}:std").random() < NEWEST_SHARE
    return generate_kernel(random.Random(f"{seed}:{i}"), f"{prefix}{i}", newest=newest)


def kernels(seed: int, count: int, prefix: str = "k") -> Iterator[Kernel]:
    """`count` kernels from `seed`; kernel i depends only on (seed, i)."""
    for i in range(count):
        yield program_kernel(seed, i, prefix)
