"""Which memory an instruction reads and writes, named by memory object.

A *memory object* is the root a memref value is derived from: a function
argument (global memory) or the result of an `alloca` (local memory).
Views (`subview`, `expand`, `fuse`) and memrefs loaded from a group share
their source's object, so a group argument and all its members are one
object (members may alias each other, as the group's pointers are not
checked). Two objects may alias only if they are the same root: **distinct
function arguments are assumed not to alias**, like C's `restrict`. A
memref whose root cannot be traced (no such IR today) is an unknown object
that aliases everything in its address space.

Nothing here looks at index ranges: two subviews of one argument touch the
same object even when the blocks are disjoint.

    for effect in effects(inst):          # inst and everything nested in it
        effect.obj.root, effect.space, effect.kind
    conflicts(earlier, later)             # does ordering them need a barrier?

The facts come from the instruction classes: `memory_accesses()` (which
operands an instruction reads and writes) and `view_source()` (which
operand's memory its result is a view of). This module adds the memory
objects behind the operands; it is the one answer to "what does this
instruction write" for barriers, local memory, the work model and the
kernel's copy-back (`ParamInfo.written`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tinyc.ir.addressing import SliceView
from tinyc.ir.core import EffectKind, Function, Instruction, Region, Value, is_allocated, view_root
from tinyc.ir.types import AddressSpace, GroupType, MemrefType

__all__ = ["EffectKind", "MemoryEffect", "MemoryObject", "conflicts", "direct_effects", "effects",
           "memory_object", "per_iteration_block", "root_of", "touches"]


@dataclass(frozen=True)
class MemoryObject:
    """A function argument or an alloca result; `root=None` is an unknown object."""

    root: Value | None
    space: AddressSpace

    def may_alias(self, other: "MemoryObject") -> bool:
        """Same root, or an unknown root in the same address space."""
        if self.space is not other.space:
            return False
        return self.root is None or other.root is None or self.root is other.root

    @property
    def is_alloca(self) -> bool:
        return self.root is not None and is_allocated(self.root)

    def __repr__(self) -> str:
        name = f"%{self.root.name}" if self.root is not None and self.root.name else "?"
        return f"<{self.space.value} {name}>"


@dataclass(frozen=True)
class MemoryEffect:
    """One access to one memory object. `via` (the operand used) is not part of its identity.

    `carried_view`: the access was made in an earlier iteration of a loop through this view,
    a block that every iteration takes elsewhere (`per_iteration_block`); the same view in
    a later iteration touches other elements."""

    obj: MemoryObject
    kind: EffectKind
    via: Value | None = field(default=None, compare=False)
    carried_view: Value | None = None

    @property
    def space(self) -> AddressSpace:
        return self.obj.space

    def __repr__(self) -> str:
        return f"{self.kind.value} {self.obj!r}"


def conflicts(a: MemoryEffect, b: MemoryEffect) -> bool:
    """True if `a` and `b` may touch the same memory and their order matters.

    Reads commute with reads and atomic adds with atomic adds; every other
    pair on aliasing objects is a read-after-write, write-after-read or
    write-after-write dependency.
    """
    if not a.obj.may_alias(b.obj):
        return False
    if a.kind is b.kind and a.kind in (EffectKind.READ, EffectKind.ATOMIC_ADD):
        return False
    if a.carried_view is not None and a.carried_view is b.via:
        return False            # the same per-iteration block, of an earlier iteration
    return True


def per_iteration_block(view: Value | None, loop_var: Value, body: Region) -> bool:
    """Whether `view` is a block that each iteration of a loop takes elsewhere: a subview of
    a memref defined outside the loop, with one mode fixed at an index that changes every
    iteration (the loop variable, or it plus a value defined outside the loop). Two
    iterations' blocks then share no element (a memref's elements have distinct addresses)."""
    owner = view.owner if view is not None else None
    if not isinstance(owner, Instruction):
        return False
    sliced = owner.addressing().view
    if not isinstance(sliced, SliceView) or sliced.extra_modes or _inside(sliced.source, body):
        return False
    return any(isinstance(span.count, int) and span.count == 0 and _steps_with(span.start, loop_var, body)
               for span in sliced.modes)


def _steps_with(index: object, loop_var: Value, body: Region) -> bool:
    if index is loop_var:
        return True
    owner = index.owner if isinstance(index, Value) else None
    if not isinstance(owner, Instruction):
        return False
    computed = owner.integer_facts().value
    if computed is None or computed.op != "add":
        return False
    a, b = computed.args
    return (a is loop_var and not _inside(b, body)) or (b is loop_var and not _inside(a, body))


def _inside(value: object, body: Region) -> bool:
    """Whether a value is defined in `body` (or a region nested in it)."""
    where = value.owner if isinstance(value, Value) else None
    region = where if isinstance(where, Region) else where.parent if isinstance(where, Instruction) else None
    while region is not None:
        if region is body:
            return True
        parent = region.parent
        region = parent.parent if isinstance(parent, Instruction) else None
    return False


# ---------------------------------------------------------------- objects

def root_of(value: Value) -> Value | None:
    """The argument or alloca result that `value`'s memory belongs to; None if unknown."""
    root = view_root(value)
    return root if isinstance(root.owner, Function) or is_allocated(root) else None


def memory_object(value: Value) -> MemoryObject | None:
    """The memory object behind a memref or group value; None for other types."""
    t = value.type
    if isinstance(t, GroupType):
        space = t.memref.space
    elif isinstance(t, MemrefType):
        space = t.space
    else:
        return None
    return MemoryObject(root_of(value), space)


# ---------------------------------------------------------------- effects

def direct_effects(inst: Instruction) -> list[MemoryEffect]:
    """Accesses of `inst` itself, not of instructions nested in its regions."""
    found = []
    for value, kind in inst.memory_accesses():
        obj = memory_object(value)
        if obj is not None:
            found.append(MemoryEffect(obj, kind, value))
    return found


def effects(inst: Instruction) -> list[MemoryEffect]:
    """Accesses of `inst` and of every instruction nested in its regions, deduplicated."""
    found = dict.fromkeys(direct_effects(inst))
    for region in inst.regions:
        for nested in region.walk():
            found.update(dict.fromkeys(direct_effects(nested)))
    return list(found)


def touches(inst: Instruction, root: Value) -> bool:
    """Whether `inst` (or anything nested in it) accesses the memory object of `root`."""
    return any(e.obj.root is root or e.obj.root is None and e.space is _space_of(root)
               for e in effects(inst))


def _space_of(root: Value) -> AddressSpace | None:
    obj = memory_object(root)
    return obj.space if obj is not None else None
