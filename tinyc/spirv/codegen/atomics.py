"""Atomic element updates for store.atomic / store.atomic_add (relaxed order).

Native where the runtime has it (RUNTIME-NOTES §7): OpAtomicStore and
OpAtomicIAdd on 32/64-bit ints, OpAtomicFAddEXT on f32/f64. f32/f64 atomic
stores go through the same-width int. Types without a native atomic (i8,
i16, f16 — whose FAddEXT fails to link — and bf16) use a compare-exchange
loop on the aligned 32-bit word that contains the element. Complex values
are updated part by part ("pseudo-atomic", as the spec allows).
"""

from __future__ import annotations

from typing import Callable

from tinyc.ir.instructions import ArithBinaryOp
from tinyc.ir.types import AddressSpace, MemrefType, ScalarType, f16
from tinyc.spirv.codegen import scalar
from tinyc.spirv.codegen.context import Ctx
from tinyc.spirv.codegen.types import scalar_type, storage_class
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import LoopControl, Op, Scope

RELAXED = 0


def _scope(ctx: Ctx, memref: MemrefType) -> Id:
    return ctx.scope(Scope.Workgroup if memref.space is AddressSpace.LOCAL else Scope.Device)


def _component_pointers(ctx: Ctx, memref: MemrefType, ptr: Id) -> tuple[Id, Id]:
    """Pointers to the real and imaginary part of a complex element."""
    comp = scalar_type(ctx.m, memref.element.component)
    comp_ptr = ctx.m.type_pointer(storage_class(memref), comp)
    re = ctx.op(Op.Bitcast, comp_ptr, ptr)
    return re, ctx.op(Op.InBoundsPtrAccessChain, comp_ptr, re, ctx.const64(1))


def atomic_store(ctx: Ctx, memref: MemrefType, ptr: Id, value: Id) -> None:
    t = memref.element
    if t.is_complex:
        parts = scalar.parts(ctx, t, value)
        for p, v in zip(_component_pointers(ctx, memref, ptr), parts):
            _store_word(ctx, memref, t.component, p, v)
    elif t.size >= 4:
        _store_word(ctx, memref, t, ptr, value)
    else:
        _cas_narrow(ctx, memref, ptr, lambda old: value)


def _store_word(ctx: Ctx, memref: MemrefType, t: ScalarType, ptr: Id, value: Id) -> None:
    """OpAtomicStore of a 32/64-bit value (floats as the same-width int)."""
    if t.is_float:
        int_t = ctx.m.type_int(t.bits)
        ptr = ctx.op(Op.Bitcast, ctx.m.type_pointer(storage_class(memref), int_t), ptr)
        value = ctx.op(Op.Bitcast, int_t, value)
    ctx.do(Op.AtomicStore, ptr, _scope(ctx, memref), ctx.const32(RELAXED), value)


def atomic_add(ctx: Ctx, memref: MemrefType, ptr: Id, value: Id) -> None:
    t = memref.element
    if t.is_complex:
        for p, v in zip(_component_pointers(ctx, memref, ptr), scalar.parts(ctx, t, value)):
            _add_word(ctx, memref, t.component, p, v)
    elif t.size >= 4:
        _add_word(ctx, memref, t, ptr, value)
    else:
        _cas_narrow(ctx, memref, ptr, lambda old: scalar.binary(ctx, ArithBinaryOp.ADD, t, old, value))


def _add_word(ctx: Ctx, memref: MemrefType, t: ScalarType, ptr: Id, value: Id) -> None:
    op = Op.AtomicFAddEXT if t.is_float else Op.AtomicIAdd
    ctx.op(op, scalar_type(ctx.m, t), ptr, _scope(ctx, memref), ctx.const32(RELAXED), value)


def _cas_narrow(ctx: Ctx, memref: MemrefType, ptr: Id, update: Callable[[Id], Id]) -> None:
    """Atomically replace an 8/16-bit element by update(old) with a CAS loop on its word."""
    m, t = ctx.m, memref.element
    i32, i64, bits = ctx.i32, ctx.i64, t.bits
    narrow_int = m.type_int(bits)
    scope, relaxed = _scope(ctx, memref), ctx.const32(RELAXED)
    addr = ctx.op(Op.ConvertPtrToU, i64, ptr)
    word_addr = ctx.op(Op.BitwiseAnd, i64, addr, ctx.const64(~3))
    shift = ctx.op(Op.UConvert, i32, ctx.op(Op.ShiftLeftLogical, i64,
                                            ctx.op(Op.BitwiseAnd, i64, addr, ctx.const64(3)), ctx.const64(3)))
    word_ptr = ctx.op(Op.ConvertUToPtr, m.type_pointer(storage_class(memref), i32), word_addr)
    keep = ctx.op(Op.Not, i32, ctx.op(Op.ShiftLeftLogical, i32, ctx.const32((1 << bits) - 1), shift))
    first = ctx.op(Op.AtomicLoad, i32, word_ptr, scope, relaxed)

    pre = ctx.block
    header_label, body_label, cont_label, merge_label = (m.new_id() for _ in range(4))
    ctx.do(Op.Branch, header_label)
    header = ctx.new_block(header_label)
    old = header.phi(i32, (first, pre.label))
    header.op(Op.LoopMerge, merge_label, cont_label, LoopControl.None_)
    header.op(Op.Branch, body_label)

    ctx.block = ctx.new_block(body_label)
    part = ctx.op(Op.UConvert, narrow_int, ctx.op(Op.ShiftRightLogical, i32, old.result, shift))
    if t is f16:
        part = ctx.op(Op.Bitcast, scalar_type(m, f16), part)
    new_part = update(part)
    if t is f16:
        new_part = ctx.op(Op.Bitcast, narrow_int, new_part)
    placed = ctx.op(Op.ShiftLeftLogical, i32, ctx.op(Op.UConvert, i32, new_part), shift)
    new = ctx.op(Op.BitwiseOr, i32, ctx.op(Op.BitwiseAnd, i32, old.result, keep), placed)
    got = ctx.op(Op.AtomicCompareExchange, i32, word_ptr, scope, relaxed, relaxed, new, old.result)
    done = ctx.op(Op.IEqual, ctx.bool, got, old.result)
    ctx.do(Op.BranchConditional, done, merge_label, cont_label)

    cont = ctx.new_block(cont_label)
    cont.op(Op.Branch, header_label)
    old.operands += [got, cont_label]
    ctx.block = ctx.new_block(merge_label)

