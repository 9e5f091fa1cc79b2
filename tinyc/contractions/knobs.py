"""What the tuner may change in a contraction's kernel, and the values it tries.

    mapping   "lanes" (batch entries on the lanes of a subgroup, lanes.py) or
              "groups" (entries on the group id, plan.py)
    chunk     lanes: entries per work-group
    budget    lanes: accumulators per register block
    ksplit    lanes: rows of the summed label per pass over the chunk (0: all at once)
    block     groups: entries per work-group (a loop over them)
    tile      groups: the tile of the batch label when an operand is shared (0: none)
    cut       groups, with a tile: the piece of one more output label the shared
              operand holds (2-D tiles of the output; 0: none)
    kchunk    groups: rows of the summed mode per chunk of a work-group's large
              gemm (collectives.k_chunk; 0: one gemm)
    schedule  the lowering's knobs of the collectives (tinyc.schedule), the same
              for every variant of the kernel (alpha and beta as arguments or
              constants, every batch size)

None leaves a knob to the default heuristics.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

CHUNKS = (32, 64, 128, 256, 512)
BUDGETS = (4, 6, 8)
BLOCKS = (1, 2, 4, 8, 16)
TILES = (16, 32, 64, 128)
KSPLITS = (2, 4)
KCHUNKS = (32, 128, 0)


@dataclass(frozen=True)
class Knobs:
    """One point of a contraction kernel's search space."""

    mapping: str | None = None
    chunk: int | None = None
    budget: int | None = None
    block: int | None = None
    tile: int | None = None
    schedule: dict = field(default_factory=dict, compare=False, hash=False)
    ksplit: int | None = None
    cut: int | None = None
    kchunk: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, {})}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> "Knobs":
        names = ("mapping", "chunk", "budget", "block", "tile", "schedule", "ksplit", "cut", "kchunk")
        known = {k: data[k] for k in names if k in data}
        return Knobs(**known)

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.as_dict().items() if k != "schedule"]
        return ", ".join(parts) or "default"


def candidates(default: Any) -> list[Knobs]:
    """The points to try around a kernel's default plan (plan.Plan)."""
    found: list[Knobs] = []
    lanes = default.lanes
    if lanes is not None:   # nearest the default first: the budget may run out
        points = [(chunk, budget) for chunk in CHUNKS if chunk % lanes.sg == 0 for budget in BUDGETS]
        points.sort(key=lambda p: (abs(p[0].bit_length() - lanes.chunk.bit_length()) + abs(p[1] - lanes.budget) / 2))
        found = [Knobs("lanes", chunk, budget) for chunk, budget in points]
        found[2:2] = [Knobs("lanes", lanes.chunk, lanes.budget, ksplit=k) for k in KSPLITS]
        found.insert(min(4, len(found)), Knobs("groups"))
    elif default.cut:   # 2-D tiles: (tile, cut) pairs nearest the default first, then no cut
        size = default.sizes[default.cut_label]
        pairs = [(t, c) for t in TILES for c in TILES if size % c == 0]
        pairs.sort(key=lambda p: abs(p[0].bit_length() - default.tile.bit_length())
                   + abs(p[1].bit_length() - default.cut.bit_length()))
        found = [Knobs("groups", tile=t, cut=c) for t, c in pairs]
        found.append(Knobs("groups", tile=default.tile, cut=0))
    elif default.tile:
        found = [Knobs("groups", tile=t) for t in sorted(TILES, key=lambda t: abs(t - default.tile))]
        found.append(Knobs("groups", tile=0))
    else:
        found = [Knobs("groups", block=b) for b in sorted(BLOCKS, key=lambda b: abs(b - default.block))]
    if lanes is None and longest_sum(default) >= 2 * min(c for c in KCHUNKS if c):
        # the default's tiles with other K chunks, right after the nearest tiles
        same = Knobs("groups", tile=default.tile or None, cut=default.cut or None,
                     block=None if default.tile else default.block)
        found[1:1] = [replace(same, kchunk=c) for c in KCHUNKS]
    return found


def longest_sum(plan: Any) -> int:
    """The longest static label a step of the plan sums (0: none): where K chunks may apply."""
    longest = 0
    for step in plan.steps:
        held = [plan.tensors[t] for t in step.inputs]
        if len(held) == 2:
            summed = (held[0] & held[1]) - step.labels
            longest = max([longest, *(plan.sizes[label] for label in summed
                                      if isinstance(plan.sizes.get(label), int))])
    return longest
