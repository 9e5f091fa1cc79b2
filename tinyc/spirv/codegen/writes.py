"""The one codegen entry for every write to a memref's memory.

Plain stores, vector stores (OpenCL's vstoren), atomic stores and atomic
read-modify-writes of any instruction (store, atomic_*, the coopmatrix
stores and atomic updates, and the lowered code of collectives, which is
made of these) are emitted by `write`, and nowhere else in codegen.

This is where the dry run of a bounds-checked kernel is decided
(passes/check_shapes.py): when `Bounds.dry` is set, a write to global memory
is left out here, so "the dry run writes nothing" holds by construction (a
test disassembles dry kernels and finds no global write). Local memory is
the kernel's own and is still written. A left-out atomic update returns the
element as it is, read plainly: the dry run is chosen only when no address
or branch depends on memory the kernel writes, so that value is only ever
stored (which is left out too).

The address is checked before (memref.element_address); `write` only
decides whether, and how, the element is changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinyc.ir.instructions import AtomicOp
from tinyc.ir.types import AddressSpace, MemrefType
from tinyc.spirv.codegen import atomics
from tinyc.spirv.codegen.context import Ctx, natural_alignment
from tinyc.spirv.codegen.types import scalar_type
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import MemoryAccess, Op, OpenCLStd


@dataclass(frozen=True)
class Plain:
    """A plain store of one element."""

    value: Id


@dataclass(frozen=True)
class Vector:
    """len(values) consecutive elements (2, 3, 4, 8 or 16) with one vstoren."""

    values: tuple[Id, ...]


@dataclass(frozen=True)
class Atomic:
    """An atomic store of one element; `order` None: the seed's store.atomic (relaxed)."""

    value: Id
    order: atomics.Ordering | None = None


@dataclass(frozen=True)
class Update:
    """element = op(element, value) atomically; `write` returns the old element.
    `order` None: the seed's store.atomic_add (relaxed)."""

    op: AtomicOp
    value: Id
    order: atomics.Ordering | None = None


Write = Plain | Vector | Atomic | Update


def write(ctx: Ctx, memref: MemrefType, ptr: Id, what: Write) -> Id | None:
    """Emit `what` at `ptr`, an element (the first, for a vector) of a memref of type `memref`.

    Returns the old element for an Update, else None."""
    if left_out(ctx, memref):
        if isinstance(what, Update):
            return ctx.op(Op.Load, scalar_type(ctx.m, memref.element), ptr,
                          MemoryAccess.Aligned, natural_alignment(memref))
        return None
    if isinstance(what, Plain):
        ctx.do(Op.Store, ptr, what.value, MemoryAccess.Aligned, natural_alignment(memref))
    elif isinstance(what, Vector):
        element = scalar_type(ctx.m, memref.element)
        vector = ctx.op(Op.CompositeConstruct, ctx.m.type_vector(element, len(what.values)),
                        *what.values)
        ctx.ext(OpenCLStd.vstoren, ctx.m.type_void(), vector, ctx.const64(0), ptr)
    elif isinstance(what, Atomic):
        atomics.atomic_store(ctx, memref, ptr, what.value, what.order)
    else:
        order = what.order or atomics.default_ordering(ctx, memref)
        return atomics.atomic_update(ctx, what.op, memref, ptr, what.value, order)
    return None


def left_out(ctx: Ctx, memref: MemrefType) -> bool:
    """Whether writes to this memref are left out: global memory in a dry run."""
    return ctx.bounds is not None and ctx.bounds.dry and memref.space is not AddressSpace.LOCAL
