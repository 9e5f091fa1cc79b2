"""Atomic element access: the seed's store.atomic / .atomic_add and the newest language's
atomic_load / atomic_store / atomic_add|max|min (and the coopmatrix forms, per component).

The primitives of the emitters in memref.py and coopmatrix.py; the writing
ones (atomic_store, atomic_update) are called only by writes.write, the one
write point of codegen.

Native where the runtime has it (RUNTIME-NOTES §7): OpAtomicLoad / Store and
OpAtomicIAdd / SMax / SMin on 32/64-bit ints, OpAtomicFAddEXT / FMaxEXT /
FMinEXT on f32/f64. f32/f64 loads and stores go through the same-width int.
Types without a native atomic (i8, i16, f16 — whose FAddEXT fails to link —
and bf16) use the aligned 32-bit word that contains the element: a load of
the word, or a compare-exchange loop on it. Complex values are accessed part
by part ("pseudo-atomic", as the spec allows).

An `Ordering` is the scope and memory semantics of one access. The seed's
store flags use relaxed order at device scope (work-group scope for local
memory); the newest instructions use what they name. Orders C++ has no
meaning for (a release load, an acquire store) become sequentially
consistent, and a non-relaxed order also orders the memref's storage class
(CrossWorkgroupMemory or WorkgroupMemory), as OpenCL C's atomics do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tinyc.ir.instructions import ArithBinaryOp, AtomicOp, MemoryScope, MemorySemantics
from tinyc.ir.types import AddressSpace, MemrefType, ScalarType, f16
from tinyc.spirv.codegen import scalar
from tinyc.spirv.codegen.context import Ctx
from tinyc.spirv.codegen.types import scalar_type, storage_class
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import LoopControl
from tinyc.spirv.spv import MemorySemantics as Semantics
from tinyc.spirv.spv import Op, Scope

SCOPES = {MemoryScope.CROSS_DEVICE: Scope.CrossDevice, MemoryScope.DEVICE: Scope.Device,
          MemoryScope.WORK_GROUP: Scope.Workgroup, MemoryScope.SUBGROUP: Scope.Subgroup}
ORDERS = {MemorySemantics.RELAXED: Semantics.Relaxed, MemorySemantics.ACQUIRE: Semantics.Acquire,
          MemorySemantics.RELEASE: Semantics.Release,
          MemorySemantics.ACQUIRE_RELEASE: Semantics.AcquireRelease,
          MemorySemantics.SEQUENTIALLY_CONSISTENT: Semantics.SequentiallyConsistent}
_NOT_FOR_LOADS = frozenset({MemorySemantics.RELEASE, MemorySemantics.ACQUIRE_RELEASE})
_NOT_FOR_STORES = frozenset({MemorySemantics.ACQUIRE, MemorySemantics.ACQUIRE_RELEASE})


@dataclass(frozen=True)
class Ordering:
    """Scope and memory-semantics operands (ids of i32 constants) of an atomic access."""

    scope: Id
    semantics: Id
    relaxed: Id  # the relaxed semantics: for the loads and failed compare-exchanges of CAS loops


def default_ordering(ctx: Ctx, memref: MemrefType) -> Ordering:
    """The seed's store flags: relaxed, device scope (work-group scope for local memory)."""
    scope = Scope.Workgroup if memref.space is AddressSpace.LOCAL else Scope.Device
    zero = ctx.const32(0)
    return Ordering(ctx.scope(scope), zero, zero)


def ordering(ctx: Ctx, memref: MemrefType, scope: MemoryScope, semantics: MemorySemantics,
             access: str = "update") -> Ordering:
    """The operands for an access ("load", "store" or "update") with the instruction's order."""
    if (access == "load" and semantics in _NOT_FOR_LOADS) or \
            (access == "store" and semantics in _NOT_FOR_STORES):
        semantics = MemorySemantics.SEQUENTIALLY_CONSISTENT
    bits = int(ORDERS[semantics])
    if bits:
        local = memref.space is AddressSpace.LOCAL
        bits |= int(Semantics.WorkgroupMemory if local else Semantics.CrossWorkgroupMemory)
    return Ordering(ctx.scope(SCOPES[scope]), ctx.const32(bits), ctx.const32(0))


def _component_pointers(ctx: Ctx, memref: MemrefType, ptr: Id) -> tuple[Id, Id]:
    """Pointers to the real and imaginary part of a complex element."""
    comp = scalar_type(ctx.m, memref.element.component)
    comp_ptr = ctx.m.type_pointer(storage_class(memref), comp)
    re = ctx.op(Op.Bitcast, comp_ptr, ptr)
    return re, ctx.op(Op.InBoundsPtrAccessChain, comp_ptr, re, ctx.const64(1))


def _as_int_pointer(ctx: Ctx, memref: MemrefType, t: ScalarType, ptr: Id) -> tuple[Id, Id]:
    """(int type, pointer to it) of the same width as a 32/64-bit float element."""
    int_t = ctx.m.type_int(t.bits)
    return int_t, ctx.op(Op.Bitcast, ctx.m.type_pointer(storage_class(memref), int_t), ptr)


# -- load ---------------------------------------------------------------------------------------
def atomic_load(ctx: Ctx, memref: MemrefType, ptr: Id, order: Ordering) -> Id:
    t = memref.element
    if t.is_complex:
        parts = [_load_word(ctx, memref, t.component, p, order)
                 for p in _component_pointers(ctx, memref, ptr)]
        return scalar.make_complex(ctx, t, *parts)
    if t.size >= 4:
        return _load_word(ctx, memref, t, ptr, order)
    word_ptr, shift = _containing_word(ctx, memref, ptr)
    word = ctx.op(Op.AtomicLoad, ctx.i32, word_ptr, order.scope, order.semantics)
    return _part_of(ctx, t, word, shift)


def _load_word(ctx: Ctx, memref: MemrefType, t: ScalarType, ptr: Id, order: Ordering) -> Id:
    if not t.is_float:
        return ctx.op(Op.AtomicLoad, scalar_type(ctx.m, t), ptr, order.scope, order.semantics)
    int_t, int_ptr = _as_int_pointer(ctx, memref, t, ptr)
    bits = ctx.op(Op.AtomicLoad, int_t, int_ptr, order.scope, order.semantics)
    return ctx.op(Op.Bitcast, scalar_type(ctx.m, t), bits)


# -- store --------------------------------------------------------------------------------------
def atomic_store(ctx: Ctx, memref: MemrefType, ptr: Id, value: Id, order: Ordering | None = None) -> None:
    order = order or default_ordering(ctx, memref)
    t = memref.element
    if t.is_complex:
        parts = scalar.parts(ctx, t, value)
        for p, v in zip(_component_pointers(ctx, memref, ptr), parts):
            _store_word(ctx, memref, t.component, p, v, order)
    elif t.size >= 4:
        _store_word(ctx, memref, t, ptr, value, order)
    else:
        _cas_narrow(ctx, memref, ptr, lambda old: value, order)


def _store_word(ctx: Ctx, memref: MemrefType, t: ScalarType, ptr: Id, value: Id,
                order: Ordering) -> None:
    """OpAtomicStore of a 32/64-bit value (floats as the same-width int)."""
    if t.is_float:
        int_t, ptr = _as_int_pointer(ctx, memref, t, ptr)
        value = ctx.op(Op.Bitcast, int_t, value)
    ctx.do(Op.AtomicStore, ptr, order.scope, order.semantics, value)


# -- read-modify-write --------------------------------------------------------------------------
_INT_OPS = {AtomicOp.ADD: Op.AtomicIAdd, AtomicOp.MAX: Op.AtomicSMax, AtomicOp.MIN: Op.AtomicSMin}
_FLOAT_OPS = {AtomicOp.ADD: Op.AtomicFAddEXT, AtomicOp.MAX: Op.AtomicFMaxEXT,
              AtomicOp.MIN: Op.AtomicFMinEXT}
_ARITH = {AtomicOp.ADD: ArithBinaryOp.ADD, AtomicOp.MAX: ArithBinaryOp.MAX,
          AtomicOp.MIN: ArithBinaryOp.MIN}


def atomic_update(ctx: Ctx, op: AtomicOp, memref: MemrefType, ptr: Id, value: Id,
                  order: Ordering) -> Id:
    """element = op(element, value) atomically; returns the element's old value."""
    t = memref.element
    if t.is_complex:  # only add (the verifier rejects complex max/min)
        olds = [_update_word(ctx, op, memref, t.component, p, v, order)
                for p, v in zip(_component_pointers(ctx, memref, ptr), scalar.parts(ctx, t, value))]
        return scalar.make_complex(ctx, t, *olds)
    if t.size >= 4:
        return _update_word(ctx, op, memref, t, ptr, value, order)
    return _cas_narrow(ctx, memref, ptr, lambda old: scalar.binary(ctx, _ARITH[op], t, old, value), order)


def _update_word(ctx: Ctx, op: AtomicOp, memref: MemrefType, t: ScalarType, ptr: Id, value: Id,
                 order: Ordering) -> Id:
    code = (_FLOAT_OPS if t.is_float else _INT_OPS)[op]
    return ctx.op(code, scalar_type(ctx.m, t), ptr, order.scope, order.semantics, value)


def _containing_word(ctx: Ctx, memref: MemrefType, ptr: Id) -> tuple[Id, Id]:
    """Pointer to the aligned 32-bit word holding an 8/16-bit element, and the element's bit shift."""
    i32, i64 = ctx.i32, ctx.i64
    addr = ctx.op(Op.ConvertPtrToU, i64, ptr)
    word_addr = ctx.op(Op.BitwiseAnd, i64, addr, ctx.const64(~3))
    shift = ctx.op(Op.UConvert, i32, ctx.op(Op.ShiftLeftLogical, i64,
                                            ctx.op(Op.BitwiseAnd, i64, addr, ctx.const64(3)), ctx.const64(3)))
    word_ptr = ctx.op(Op.ConvertUToPtr, ctx.m.type_pointer(storage_class(memref), i32), word_addr)
    return word_ptr, shift


def _part_of(ctx: Ctx, t: ScalarType, word: Id, shift: Id) -> Id:
    """The 8/16-bit element at `shift` in a 32-bit word, as a value of type t."""
    part = ctx.op(Op.UConvert, ctx.m.type_int(t.bits), ctx.op(Op.ShiftRightLogical, ctx.i32, word, shift))
    return ctx.op(Op.Bitcast, scalar_type(ctx.m, f16), part) if t is f16 else part


def _cas_narrow(ctx: Ctx, memref: MemrefType, ptr: Id, update: Callable[[Id], Id],
                order: Ordering | None = None) -> Id:
    """Atomically replace an 8/16-bit element by update(old) with a CAS loop on its word.

    Returns the old element (the one the successful compare-exchange replaced).
    """
    order = order or default_ordering(ctx, memref)
    m, t = ctx.m, memref.element
    i32, bits = ctx.i32, t.bits
    narrow_int = m.type_int(bits)
    word_ptr, shift = _containing_word(ctx, memref, ptr)
    keep = ctx.op(Op.Not, i32, ctx.op(Op.ShiftLeftLogical, i32, ctx.const32((1 << bits) - 1), shift))
    first = ctx.op(Op.AtomicLoad, i32, word_ptr, order.scope, order.relaxed)

    pre = ctx.block
    header_label, body_label, cont_label, merge_label = (m.new_id() for _ in range(4))
    ctx.do(Op.Branch, header_label)
    header = ctx.new_block(header_label)
    old = header.phi(i32, (first, pre.label))
    header.op(Op.LoopMerge, merge_label, cont_label, LoopControl.None_)
    header.op(Op.Branch, body_label)

    ctx.block = ctx.new_block(body_label)
    part = _part_of(ctx, t, old.result, shift)
    new_part = update(part)
    if t is f16:
        new_part = ctx.op(Op.Bitcast, narrow_int, new_part)
    placed = ctx.op(Op.ShiftLeftLogical, i32, ctx.op(Op.UConvert, i32, new_part), shift)
    new = ctx.op(Op.BitwiseOr, i32, ctx.op(Op.BitwiseAnd, i32, old.result, keep), placed)
    got = ctx.op(Op.AtomicCompareExchange, i32, word_ptr, order.scope, order.semantics, order.relaxed,
                 new, old.result)
    done = ctx.op(Op.IEqual, ctx.bool, got, old.result)
    ctx.do(Op.BranchConditional, done, merge_label, cont_label)

    cont = ctx.new_block(cont_label)
    cont.op(Op.Branch, header_label)
    old.operands += [got, cont_label]
    ctx.block = ctx.new_block(merge_label)
    return part  # defined in the body, which dominates the merge block
