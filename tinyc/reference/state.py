"""Execution state of one work-group and the dispatch of instructions to evaluators.

Collective code runs once per work-group with uniform values (NumPy scalars).
An SPMD region (`parallel`, `foreach`) runs *vectorised*: every value defined
in it may be a 1-D array with one entry per emulated work-item ("lane"), and
all lanes execute each instruction together, in lock-step. Divergent control
flow narrows `State.mask` to the lanes that take a path; evaluators must only
let active lanes have effects (stores, faults).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

from tinyc.ir.core import Instruction, Region, Value
from tinyc.reference.errors import ReferenceUnsupported


@dataclass(frozen=True)
class Geometry:
    """Work-group shape: X·Y work-items, subgroups of `subgroup_size` along x."""

    x: int
    y: int
    subgroup_size: int

    @property
    def work_items(self) -> int:
        return self.x * self.y

    @property
    def num_subgroups(self) -> int:
        return self.work_items // self.subgroup_size


@dataclass
class Lanes:
    """The work-items (or foreach iterations) an SPMD region runs on together.

    `kind` is "parallel" (lane l is the work-item with local linear id l, so
    subgroups are runs of `subgroup_size` lanes) or "foreach" (lane l is the
    l-th point of the iteration space; its work-item is implementation-defined).
    """

    kind: str
    count: int
    subgroup_size: int = 0

    @property
    def ids(self) -> np.ndarray:
        return np.arange(self.count, dtype=np.int64)


@dataclass
class State:
    """Everything an evaluator may read or change while one work-group runs."""

    group_id: int
    batch: int
    geometry: Geometry
    env: dict[Value, Any] = field(default_factory=dict)
    lanes: Lanes | None = None        # None: collective (uniform) execution
    mask: np.ndarray | None = None    # active lanes; None: all lanes of `lanes`
    yielded: list[Any] | None = None  # set by `yield`, read by the enclosing for/if
    on_collective: Callable[[Any, "State"], None] | None = None  # sees each collective first
    after_collective: Callable[[Any, "State"], None] | None = None  # ... and after it wrote
    after_instruction: Callable[[Any, "State"], None] | None = None  # sees each instruction it ran

    def get(self, value: Value) -> Any:
        return self.env[value]

    def set(self, value: Value, result: Any) -> None:
        self.env[value] = result

    def any_active(self, cond: Any) -> bool:
        """True if `cond` holds for some active lane (or holds, when uniform)."""
        if isinstance(cond, np.ndarray) and cond.ndim:
            if self.mask is not None:
                cond = cond & self.mask
            return bool(cond.any())
        return bool(cond)

    def active_lanes(self) -> np.ndarray:
        """Boolean array of the active lanes (requires an SPMD region)."""
        assert self.lanes is not None
        if self.mask is None:
            return np.ones(self.lanes.count, dtype=bool)
        return self.mask

    def subgroups(self, what: str) -> tuple[int, int, np.ndarray]:
        """(count, size, active) of the subgroups of a parallel region.

        Subgroup and coopmatrix operations need every subgroup wholly active or
        wholly inactive; anything else is divergence inside a subgroup.
        """
        lanes = self.lanes
        if lanes is None or lanes.kind != "parallel":
            raise ReferenceUnsupported(f"{what} outside a parallel region (in foreach the "
                                       "work-item of an iteration is implementation-defined)")
        size = lanes.subgroup_size
        count = lanes.count // size
        if self.mask is None:
            return count, size, np.ones(count, dtype=bool)
        per = self.mask.reshape(count, size)
        if bool((per.any(axis=1) & ~per.all(axis=1)).any()):
            raise ReferenceUnsupported(f"{what} with only part of a subgroup active "
                                       "(divergent control flow inside a subgroup)")
        return count, size, per[:, 0].copy()

    @contextmanager
    def masked(self, mask: np.ndarray | None) -> Iterator[None]:
        """Run the body with only the lanes in `mask` active."""
        outer = self.mask
        self.mask = mask
        try:
            yield
        finally:
            self.mask = outer

    @contextmanager
    def spmd(self, lanes: Lanes) -> Iterator[None]:
        """Run the body as an SPMD region over `lanes`, all active."""
        outer = (self.lanes, self.mask)
        self.lanes, self.mask = lanes, None
        try:
            yield
        finally:
            self.lanes, self.mask = outer


Evaluator = Callable[[Any, State], None]
EVALUATORS: dict[type, Evaluator] = {}
"""One evaluation function per instruction class."""


def evaluates(*classes: type) -> Callable[[Evaluator], Evaluator]:
    """Register the decorated function as the evaluator of `classes`."""

    def register(fn: Evaluator) -> Evaluator:
        for cls in classes:
            EVALUATORS[cls] = fn
        return fn

    return register


def _unsupported(inst: Instruction, st: State) -> None:
    raise ReferenceUnsupported(f"the reference does not emulate {type(inst).__name__} "
                               f"('{inst.opname}')")


def execute_region(region: Region, st: State) -> list[Any] | None:
    """Run a region's instructions; returns the values of its final `yield`, if any."""
    st.yielded = None
    table = EVALUATORS
    after = st.after_instruction
    for inst in region.instructions:
        table.get(type(inst), _unsupported)(inst, st)
        if after is not None:
            after(inst, st)
    yielded, st.yielded = st.yielded, None
    return yielded
