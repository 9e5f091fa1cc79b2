"""Where a memref's entries lie in the memory it views: the root and its coordinates.

Every memref value of a kernel is a view of a root: a memref argument, a
group's member, or local memory (`alloca`). `Mapped` says how: its mode sizes
as expressions (symbolic.py), and a map from its indices to coordinates of
the root, one per root mode (a fuse's modes together make one coordinate
over their product, since the fused index runs through them in order). An
access is in bounds when every coordinate lies in [0, size). The maps come
from the views the instructions describe (`addressing().view`: SliceView,
SplitView, MergeView, MemberView); nothing here looks at instruction classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Callable

from tinyc.analysis.symbolic import ZERO, Expr, Sym, node
from tinyc.ir.addressing import MergeView, SliceView, SplitView, View
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType


@dataclass(frozen=True)
class Root:
    """The memory an access lands in: an argument (`param` its index), one of a group's
    members, or local memory (`param` None)."""

    param: int | None
    label: str  # "%A", "a member of %G", "local %tmp"
    type_text: str
    member: bool = False


@dataclass(frozen=True, init=False)
class Coordinate:
    """One coordinate of an access in its root: `index` must lie in [0, size)."""

    index: Expr
    size: Expr
    modes: tuple[int, ...]  # the root's modes it covers (several for a fuse)

    def __init__(self, index: Expr, size: Expr, modes: tuple[int, ...]):
        # (one per mode of every access: a frozen dataclass's own __init__ takes twice as long)
        self.__dict__.update(index=index, size=size, modes=modes)


ToRoot = Callable[[list[Expr]], list[Coordinate] | None]


@dataclass(frozen=True)
class Mapped:
    """A memref value as a view of its root (module docs). `to_root` is None when the view
    cannot be followed (its coordinates are unknown)."""

    root: Root
    sizes: tuple[Expr | None, ...]
    to_root: ToRoot | None


def sizes_of(memref: MemrefType, dynamic: Callable[[int], Expr]) -> tuple[Expr, ...]:
    """A memref type's mode sizes: constants, and `dynamic(mode)` for its `?` ones."""
    return tuple(Expr.const(s) if s != DYNAMIC else dynamic(m) for m, s in enumerate(memref.shape))


def rooted(root: Root, sizes: tuple[Expr, ...]) -> Mapped:
    """A root itself: coordinate k is index k."""
    def to_root(indices: list[Expr]) -> list[Coordinate]:
        return [Coordinate(i, s, (k,)) for k, (i, s) in enumerate(zip(indices, sizes))]

    return Mapped(root, sizes, to_root)


def argument(param: int, name: str, memref: MemrefType) -> Mapped:
    """A memref argument: its `?` sizes are launch symbols."""
    sizes = sizes_of(memref, lambda m: Expr.atom(Sym("dim", (param, m), 0)))
    return rooted(Root(param, f"%{name}", str(memref)), sizes)


def group_count(param: int, group: GroupType) -> Expr:
    """How many members a group argument has."""
    return Expr.const(group.size) if group.size != DYNAMIC else Expr.atom(Sym("count", (param,), 1))


def member(param: int, name: str, group: GroupType, index: Expr) -> Mapped:
    """The member a group argument holds at `index` (its `?` sizes range over the members)."""
    memref = group.memref
    sizes = sizes_of(memref, lambda m: Expr.atom(Sym("member_dim", (param, m, index), 0)))
    return rooted(Root(param, f"a member of %{name}", str(group), True), sizes)


def local(name: str, memref: MemrefType) -> Mapped:
    return rooted(Root(None, f"local %{name}", str(memref)), sizes_of(memref, lambda m: ZERO))


def derive(view: View, source: Mapped, value_of: Callable[[object], Expr | None],
           fresh: Callable[[str, Expr], Expr]) -> Mapped | None:
    """The Mapped of a view's result, from its source's (None: not a memref view).

    `value_of` gives the expression of an index operand; `fresh(name, size)` a new
    variable over [0, size) (an index of a fused mode the map does not pin down)."""
    if isinstance(view, SliceView):
        return _slice(view, source, value_of)
    if isinstance(view, SplitView):
        return _split(view, source, value_of)
    if isinstance(view, MergeView):
        return _merge(view, source, fresh)
    return None


def _unknown(source: Mapped, order: int) -> Mapped:
    return Mapped(source.root, (None,) * order, None)


def _slice(view: SliceView, source: Mapped, value_of: Callable) -> Mapped:
    """Kept modes start at their offset; a dropped mode is pinned at it."""
    starts = [value_of(span.start) for span in view.modes]
    counts = [value_of(span.count) if span.count is not None else None for span in view.modes]
    kept = [k for k, span in enumerate(view.modes) if not (isinstance(span.count, int) and span.count == 0)]
    sizes: list[Expr | None] = []
    for k in kept:
        whole = view.modes[k].count is None
        sizes.append(source.sizes[k] if whole else counts[k])
    if view.extra_modes or source.to_root is None or any(s is None for s in starts):
        return _unknown(source, len(kept) + view.extra_modes)
    parent = source.to_root

    def to_root(indices: list[Expr]) -> list[Coordinate] | None:
        full = list(starts)
        for k, i in zip(kept, indices):
            full[k] = starts[k] + i
        return parent(full)

    return Mapped(source.root, tuple(sizes), to_root)


def _split(view: SplitView, source: Mapped, value_of: Callable) -> Mapped:
    """Mode `mode` becomes modes of the expand shape; index sum(i_j * prod(shape before j))."""
    shape = [value_of(s) for s in view.shape]
    m, n = view.mode, len(view.shape)
    sizes = source.sizes[:m] + tuple(shape) + source.sizes[m + 1:]
    if source.to_root is None or any(s is None for s in shape):
        return _unknown(source, len(sizes))
    parent = source.to_root

    def to_root(indices: list[Expr]) -> list[Coordinate] | None:
        parts = indices[m:m + n]
        index = sum((i * prod(shape[:j], start=Expr.const(1)) for j, i in enumerate(parts)), ZERO)
        return parent(indices[:m] + [index] + indices[m + n:])

    return Mapped(source.root, sizes, to_root)


def _merge(view: MergeView, source: Mapped, fresh: Callable[[str, Expr], Expr]) -> Mapped:
    """Modes first..last become one: the fused index k runs through them in order, so it
    lies in [0, product of their sizes); the modes before the last take any of their
    entries and the last one k divided by the product of the others'."""
    first, last = view.first, view.last
    merged = source.sizes[first:last + 1]
    total = prod(merged, start=Expr.const(1)) if all(s is not None for s in merged) else None
    sizes = source.sizes[:first] + (total,) + source.sizes[last + 1:]
    if source.to_root is None or total is None:
        return _unknown(source, len(sizes))
    parent = source.to_root
    below = prod(merged[:-1], start=Expr.const(1))

    def to_root(indices: list[Expr]) -> list[Coordinate] | None:
        k = indices[first]
        spread = [fresh("fused", s) for s in merged[:-1]] + [node("div", k, below)]
        return parent(indices[:first] + spread + indices[first + 1:])

    return Mapped(source.root, sizes, to_root)
