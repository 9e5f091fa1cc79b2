"""What the generator knows while it writes a program: values, memory, regions.

The generator writes source text, and beside it keeps just enough facts to
stay valid and free of undefined behaviour by construction (Csmith's idea):

  * every value's type, an interval for integers (so indices stay in bounds,
    divisors are positive, shift amounts are below the bit width), whether
    it is uniform over the work-group, a subgroup, or varies per work-item,
    and whether the device and the reference compute it bit for bit
    (`exact`: loads, constants and correctly rounded operations on exact
    values), which decides whether it may steer control flow or be compared
    exactly;
  * every memref value's concrete shape and strides and the argument (root)
    it views, whether this work-group may write it (its own slice of an
    output, or local memory), and whether it is shared by all work-groups
    (then only atomic adds may reach it, and nothing reads it);
  * for each region its kind (collective, parallel or foreach body), how
    much of the work-group runs it, and which root its work-items may write.

`Kernel` carries the finished function's text and what the runner needs to
build its arguments (concrete shapes, strides, group members, batch).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tinyc.ir.types import MemrefType, ScalarType, Type

LANE, SUBGROUP, GROUP = 0, 1, 2
"""Uniformity: varies per work-item, uniform per subgroup, uniform per work-group."""


@dataclass
class Root:
    """An argument's memory (or an alloca's) as the generator tracks it."""

    name: str
    exact: bool = True  # every value stored so far is computed identically on both sides
    tol: float = 0.0  # else: the relative error to allow (the least precise computation stored)
    shared: bool = False  # all work-groups write it: atomic adds only, never read in the kernel
    local: bool = False  # an alloca
    dead: bool = False  # after lifetime_stop


@dataclass
class Mem:
    """A memref value: its type, concrete layout and what may be done with it."""

    type: MemrefType
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    root: Root
    writable: bool
    readable: bool

    @property
    def order(self) -> int:
        return len(self.shape)


@dataclass
class Val:
    """A value in scope."""

    name: str
    type: Type
    lo: int | None = None  # integers: an interval that holds every possible value
    hi: int | None = None
    level: int = GROUP  # uniformity (LANE, SUBGROUP, GROUP)
    exact: bool = True
    tol: float = 0.0  # relative error to allow when not exact (its least precise ingredient)
    mem: Mem | None = None
    group: "GroupArg | None" = None

    def within(self, lo: int, hi: int) -> bool:
        return self.lo is not None and self.hi is not None and lo <= self.lo and self.hi <= hi


@dataclass
class Region:
    """One open region of the function being written."""

    kind: str  # "collective", "parallel" or "foreach"
    level: int  # how uniform its control flow is (GROUP: every work-item runs it)
    parent: "Region | None" = None
    values: list[Val] = field(default_factory=list)
    target: Root | None = None  # SPMD: the root its plain stores may write
    store_at: Any = None  # SPMD: how a work-item addresses the target (see generator)
    depth: int = 0
    loops: int = 0  # enclosing loops (they multiply the work)

    def visible(self) -> list[Val]:
        region: Region | None = self
        found: list[Val] = []
        while region is not None:
            found.extend(region.values)
            region = region.parent
        return found


@dataclass
class ArrayArg:
    """How the runner builds a memref argument: element type, shape, element strides."""

    name: str
    element: ScalarType
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    output: bool


@dataclass
class GroupArg:
    """How the runner builds a group argument: one array per member (flat with an offset)."""

    name: str
    memref: MemrefType
    count: int
    shape: tuple[int, ...]  # each member's memref shape
    strides: tuple[int, ...]
    offset: int
    offset_dynamic: bool
    output: bool


@dataclass
class ScalarArg:
    name: str
    type: ScalarType
    value: Any


@dataclass
class Kernel:
    """A generated function and the arguments to run it with."""

    name: str
    text: str
    batch: int
    args: list[ArrayArg | GroupArg | ScalarArg]
    exact_outputs: dict[str, bool]  # output name -> compare bit for bit
    tolerances: dict[str, float] = field(default_factory=dict)  # output name -> relative error allowed
    features: set[str] = field(default_factory=set)  # instruction kinds it uses
    std: str = "seed"  # the language version: a module holds kernels of one version
