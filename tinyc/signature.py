"""What the compiler tells the runtime about each kernel it emitted.

The runtime never parses IR: per kernel it receives the SPIR-V module bytes
plus this metadata, which is everything needed to validate a Python call and
pack it into the kernel ABI described in DESIGN.md. It lives outside
`tinyc.runtime` so that codegen (and `tinyc compile`) does not import the
runtime package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tinyc.ir.types import Type

if TYPE_CHECKING:
    from tinyc.analysis.launch_bounds import LaunchBounds


@dataclass(frozen=True)
class ParamInfo:
    """One kernel parameter as the source declared it."""

    name: str  # source name without '%'
    type: Type  # tinyc.ir.types: ScalarType, MemrefType or GroupType
    written: bool = True  # kernel may write through it -> copy NumPy data back after the call
    batch_mode: int | None = None  # memref: the mode indexed by group_id (its size must be >= batch); group: 0 if loaded with group_id (len >= batch)
    nullable: bool = False  # memref/group checked with `associated`: None passes a null pointer
    read: bool = True  # kernel may read it (or add to it atomically): copied to a device that needs copies


@dataclass(frozen=True)
class BoundsSite:
    """A place a bounds-checked kernel checks (tinyc/spirv/codegen/bounds.py), for reports."""

    kind: str  # "access", "subview", "expand", "fuse", "group", "coopmatrix", "shape rule"
    file: str
    line: int
    column: int
    text: str  # the source line
    opname: str
    detail: str = ""  # e.g. the shape rule that failed


@dataclass(frozen=True)
class KernelInfo:
    """One entry point: its name, parameters and launch shape."""

    name: str
    params: tuple[ParamInfo, ...]
    work_group_size: tuple[int, int]  # (X, Y): OpenCL local size (X, Y, 1)
    subgroup_size: int
    batch_split_problem: str | None = None  # why slices of the batch cannot run as launches of their own (None: they can)
    bounds_sites: tuple[BoundsSite, ...] | None = None  # a bounds-checked variant: its checks
    bounds_dry: bool = False  # ... that stores nothing: a dry run before the plain kernel
    batch_axis: int = 2  # OpenCL dimension of the batch: 2 (z, seed) or 0 (x, newest language)
    launch: "LaunchBounds | None" = None  # which launches stay inside the arguments (None: not analysed)

    @property
    def unbounded(self) -> tuple[str, ...]:
        """Accesses the compiler cannot bound ("LINE.COL: why"): such a kernel runs
        bounds-checked by default."""
        if self.launch is None:
            return ()
        return tuple(f"{n.line}.{n.column}: {n.message}" for n in self.launch.unbounded)
