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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import singledispatch

from tinyc.ir.core import Function, Instruction, Value
from tinyc.ir.instructions import (
    Alloca, Barrier, BlasInstruction, Constant, CoopMatrixLoad, CoopMatrixStore, Expand, For,
    Foreach, Fuse, If, LifetimeStop, Load, Parallel, Size, Store, StoreFlag, Subview, Yield,
)
from tinyc.ir.types import AddressSpace, GroupType, MemrefType


class EffectKind(Enum):
    """How an access touches memory."""

    READ = "read"
    WRITE = "write"
    ATOMIC_ADD = "atomic_add"   # an atomic accumulation; commutes with other atomic adds


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
        return self.root is not None and isinstance(self.root.owner, Alloca)

    def __repr__(self) -> str:
        name = f"%{self.root.name}" if self.root is not None and self.root.name else "?"
        return f"<{self.space.value} {name}>"


@dataclass(frozen=True)
class MemoryEffect:
    """One access to one memory object. `via` (the operand used) is not part of its identity."""

    obj: MemoryObject
    kind: EffectKind
    via: Value | None = field(default=None, compare=False)

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
    return True


# ---------------------------------------------------------------- objects

VIEW_INSTRUCTIONS = (Subview, Expand, Fuse)
"""Instructions whose result is a view on their first operand's memory."""


def root_of(value: Value) -> Value | None:
    """The argument or alloca result that `value`'s memory belongs to; None if unknown."""
    while True:
        owner = value.owner
        if isinstance(owner, Function) or isinstance(owner, Alloca):
            return value
        if isinstance(owner, VIEW_INSTRUCTIONS):
            value = owner.operands[0]
        elif isinstance(owner, Load) and isinstance(owner.tensor.type, GroupType):
            value = owner.tensor
        else:
            return None


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


def is_constant_zero(value: Value) -> bool:
    """A `constant` equal to 0 (so `beta * C` reads nothing)."""
    owner = value.owner
    return isinstance(owner, Constant) and not isinstance(owner.value, bool) and owner.value == 0


# ---------------------------------------------------------------- effects

def _access(value: Value, kind: EffectKind) -> list[MemoryEffect]:
    obj = memory_object(value)
    return [MemoryEffect(obj, kind, value)] if obj is not None else []


def _store_kind(flag: StoreFlag) -> EffectKind:
    return EffectKind.ATOMIC_ADD if flag is StoreFlag.ATOMIC_ADD else EffectKind.WRITE


NO_ACCESS = (*VIEW_INSTRUCTIONS, Size, LifetimeStop, Alloca, Barrier, Yield, For, If, Foreach,
             Parallel)
"""Instructions that take memrefs without touching their memory themselves."""


@singledispatch
def direct_effects(inst: Instruction) -> list[MemoryEffect]:
    """Accesses of `inst` itself, not of instructions nested in its regions.

    An instruction this module does not know reads and writes every memref
    or group operand, so a new instruction is safe before it is described.
    """
    if isinstance(inst, NO_ACCESS):
        return []
    found: list[MemoryEffect] = []
    for v in inst.operands:
        found += _access(v, EffectKind.READ) + _access(v, EffectKind.WRITE)
    return found


@direct_effects.register
def _(inst: BlasInstruction) -> list[MemoryEffect]:
    """Inputs are read; the output is written, and read too when beta may be non-zero.

    With the atomic flag (beta is 0 or 1) beta = 1 is an atomic accumulation
    and beta = 0 an atomic store, which is an ordinary write here.
    """
    found: list[MemoryEffect] = []
    for v in inst.inputs:
        found += _access(v, EffectKind.READ)
    beta_zero = is_constant_zero(inst.beta)
    if inst.atomic:
        found += _access(inst.output, EffectKind.WRITE if beta_zero else EffectKind.ATOMIC_ADD)
    else:
        if not beta_zero:
            found += _access(inst.output, EffectKind.READ)
        found += _access(inst.output, EffectKind.WRITE)
    return found


@direct_effects.register
def _(inst: Load) -> list[MemoryEffect]:
    """Loading a scalar reads memory; loading a member of a group only forms a pointer."""
    if isinstance(inst.tensor.type, GroupType):
        return []
    return _access(inst.tensor, EffectKind.READ)


@direct_effects.register
def _(inst: Store) -> list[MemoryEffect]:
    return _access(inst.tensor, _store_kind(inst.flag))


@direct_effects.register
def _(inst: CoopMatrixLoad) -> list[MemoryEffect]:
    return _access(inst.operands[0], EffectKind.READ)


@direct_effects.register
def _(inst: CoopMatrixStore) -> list[MemoryEffect]:
    return _access(inst.operands[1], _store_kind(inst.flag))


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
