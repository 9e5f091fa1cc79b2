"""Memrefs as compile-time descriptors: views cost nothing, accesses are one GEP.

Emits load, store (every write through writes.write), the atomic element
accesses, the views and alloca.

A memref value is a `MemrefDesc`: base pointer id plus per-mode shape and
stride, each a Python int when static, else an i64 id. subview / expand /
fuse / size only compute new descriptors; load and store address the element
with one OpInBoundsPtrAccessChain(base, Σ index_i · stride_i). Loading from a
group reads the member pointer and its dope-vector entries.

Local memrefs (alloca) live in one module-scope Workgroup byte array per
kernel. Their descriptors hold no pointer: the alloca's place (`LocalSlot`)
and a view's element offset as an integer, and the pointer is formed at each
access (`Ctx.local_pointer`), so that no Workgroup pointer is live across a
barrier. The CPU runtime miscompiles one that is (docs/decisions.md, "Local
memory and barriers").
"""

from __future__ import annotations

from tinyc.ir.core import Function, Value
from tinyc.ir.instructions import (
    WHOLE_MODE, Alloca, Associated, AtomicLoad, AtomicOp, AtomicStore, AtomicUpdate, Expand, Fuse,
    LifetimeStop, Load, Size, Store, StoreFlag, Subview,
)
from tinyc.ir.types import DYNAMIC, MemrefType
from tinyc.spirv.codegen import atomics, writes
from tinyc.spirv.codegen.context import (
    CodegenError, Ctx, GroupDesc, IndexLike, LocalSlot, MemrefDesc, natural_alignment,
)
from tinyc.spirv.codegen.dispatch import emits
from tinyc.spirv.codegen.types import element_pointer, scalar_type
from tinyc.spirv.codegen.writes import write
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import Decoration, MemoryAccess, Op, StorageClass

LOCAL_ALIGNMENT = 64
"""Byte alignment of the kernel's local-memory array and default of each alloca."""


# -- addressing ----------------------------------------------------------------------------
def offset_pointer(ctx: Ctx, desc_type: MemrefType, base: Id, offset: IndexLike) -> Id:
    """base + offset elements."""
    if offset.__class__ is not Id and offset == 0:
        return base
    return ctx.block.value(Op.InBoundsPtrAccessChain, element_pointer(ctx.m, desc_type), base,
                           ctx.as_id(offset))


def element_address(ctx: Ctx, desc: MemrefDesc, indices: list[IndexLike]) -> Id:
    """Pointer to desc[indices]; in a bounds-checked kernel, to scratch memory (and the
    violation recorded) if the indices are outside the memref (bounds.py)."""
    ptr = offset_pointer(ctx, desc.type, base_pointer(ctx, desc),
                         ctx.iadd(desc.offset, ctx.dot(indices, desc.stride)))
    if ctx.bounds is not None:
        ptr = ctx.bounds.access(desc, indices, ptr)
    return ptr


def base_pointer(ctx: Ctx, desc: MemrefDesc) -> Id:
    """Pointer to the memref's base (a local one formed here, see the module docstring)."""
    base = desc.base
    if base.__class__ is Id:
        return base
    if isinstance(base, LocalSlot):
        return ctx.local_pointer(base, element_pointer(ctx.m, desc.type))
    return base


def first_element(ctx: Ctx, desc: MemrefDesc) -> Id:
    """Pointer to desc[0, ..., 0]."""
    return offset_pointer(ctx, desc.type, base_pointer(ctx, desc), desc.offset)


def _checked_view(ctx: Ctx, desc: MemrefDesc, ok: "Id | bool", kind: str, values: list[IndexLike],
                  extra: list[IndexLike], bounds: list[IndexLike]) -> "Id | bool":
    """The validity of a view made from desc (bounds-checked kernels record a bad one)."""
    checker = ctx.bounds
    if checker is None or checker.trusted():
        return desc.valid
    checker.record(ok, checker.site(ctx.current, kind), values, extra, bounds)
    return checker.both(desc.valid, ok)


def load_element(ctx: Ctx, desc: MemrefDesc, ptr: Id) -> Id:
    return ctx.block.value(Op.Load, scalar_type(ctx.m, desc.type.element), ptr,
                           MemoryAccess.Aligned, natural_alignment(desc.type))


def store_element(ctx: Ctx, desc: MemrefDesc, ptr: Id, value: Id, flag: StoreFlag) -> None:
    """Plain, atomic or atomic-add store of one element (the seed's store flags)."""
    if flag is StoreFlag.NONE:
        write(ctx, desc.type, ptr, writes.Plain(value))
    elif flag is StoreFlag.ATOMIC:
        write(ctx, desc.type, ptr, writes.Atomic(value))
    else:
        write(ctx, desc.type, ptr, writes.Update(AtomicOp.ADD, value))


def _static_override(values: list[IndexLike], declared: tuple[int, ...]) -> list[IndexLike]:
    """Prefer the result type's static entries (verified) over computed ids."""
    return [d if d != DYNAMIC else v for v, d in zip(values, declared)]


# -- load / store ----------------------------------------------------------------------------
@emits(Load)
def emit_load(ctx: Ctx, inst: Load) -> None:
    src = ctx[inst.tensor]
    indices = [ctx.index(v) for v in inst.indices]
    if isinstance(src, GroupDesc):
        ctx[inst.result] = load_group_member(ctx, src, indices[0])
    elif isinstance(src, MemrefDesc):
        ctx[inst.result] = load_element(ctx, src, element_address(ctx, src, indices))
    else:
        raise CodegenError(f"load from a non-memref value {inst.tensor!r}")


@emits(Store)
def emit_store(ctx: Ctx, inst: Store) -> None:
    desc = ctx[inst.tensor]
    indices = [ctx.index(v) for v in inst.indices]
    store_element(ctx, desc, element_address(ctx, desc, indices), ctx.id(inst.value), inst.flag)


def _atomic_element(ctx: Ctx, inst: AtomicLoad | AtomicStore | AtomicUpdate) -> tuple[MemrefDesc, Id]:
    desc: MemrefDesc = ctx[inst.tensor]
    return desc, element_address(ctx, desc, [ctx.index(v) for v in inst.indices])


@emits(AtomicLoad)
def emit_atomic_load(ctx: Ctx, inst: AtomicLoad) -> None:
    desc, ptr = _atomic_element(ctx, inst)
    order = atomics.ordering(ctx, desc.type, inst.scope, inst.semantics, "load")
    ctx[inst.result] = atomics.atomic_load(ctx, desc.type, ptr, order)


@emits(AtomicStore)
def emit_atomic_store(ctx: Ctx, inst: AtomicStore) -> None:
    desc, ptr = _atomic_element(ctx, inst)
    order = atomics.ordering(ctx, desc.type, inst.scope, inst.semantics, "store")
    write(ctx, desc.type, ptr, writes.Atomic(ctx.id(inst.value), order))


@emits(AtomicUpdate)
def emit_atomic_update(ctx: Ctx, inst: AtomicUpdate) -> None:
    desc, ptr = _atomic_element(ctx, inst)
    order = atomics.ordering(ctx, desc.type, inst.scope, inst.semantics)
    ctx[inst.result] = write(ctx, desc.type, ptr,
                             writes.Update(inst.op, ctx.id(inst.value), order))


def load_group_member(ctx: Ctx, g: GroupDesc, i: IndexLike) -> MemrefDesc:
    """The memref of member i: pointer (+ offset) and its dynamic sizes/strides.

    Bounds-checked kernels read member 0 instead of a member outside the
    group, and mark the view invalid."""
    valid: Id | bool = True
    if ctx.bounds is not None and not ctx.bounds.trusted():
        checker = ctx.bounds
        valid = checker.below(i, g.size)
        checker.record(valid, checker.site(ctx.current, "group"), [i], [], [g.size])
        if valid is False:
            i = 0
        elif valid is not True:
            i = ctx.op(Op.Select, ctx.i64, valid, ctx.as_id(i), ctx.const64(0))
    memref = g.type.memref
    ptr_t = element_pointer(ctx.m, memref)
    slot = g.base
    if isinstance(i, Id) or i != 0:
        slot = ctx.op(Op.InBoundsPtrAccessChain, ctx.m.type_pointer(StorageClass.CrossWorkgroup, ptr_t),
                      g.base, ctx.as_id(i))
    member = ctx.op(Op.Load, ptr_t, slot, MemoryAccess.Aligned, 8)
    base = offset_pointer(ctx, memref, member, g.offset)
    dyn: dict[tuple[str, int], IndexLike] = {}
    for key, dope in g.dope.items():
        entry = dope
        if isinstance(i, Id) or i != 0:
            entry = ctx.op(Op.InBoundsPtrAccessChain, ctx.m.type_pointer(StorageClass.CrossWorkgroup, ctx.i64),
                           dope, ctx.as_id(i))
        dyn[key] = ctx.op(Op.Load, ctx.i64, entry, MemoryAccess.Aligned, 8)
    shape = [dyn.get(("shape", k), s) for k, s in enumerate(memref.shape)]
    stride = [dyn.get(("stride", k), s) for k, s in enumerate(memref.stride)]
    return MemrefDesc(base, memref, shape, stride, valid)


# -- views ----------------------------------------------------------------------------------
def _index_or_int(ctx: Ctx, x: int | Value) -> IndexLike:
    return ctx.index(x) if isinstance(x, Value) else int(x)


@emits(Subview)
def emit_subview(ctx: Ctx, inst: Subview) -> None:
    desc: MemrefDesc = ctx[inst.tensor]
    offsets: list[IndexLike] = []
    shape: list[IndexLike] = []
    stride: list[IndexLike] = []
    for mode, (off, size) in enumerate(inst.mode_slices()):
        if isinstance(size, int) and size == WHOLE_MODE:
            offsets.append(0)
            shape.append(desc.shape[mode])
            stride.append(desc.stride[mode])
            continue
        offsets.append(_index_or_int(ctx, off))
        if isinstance(size, int) and size == 0:
            continue  # rank reduction: the mode is dropped
        shape.append(_index_or_int(ctx, size))
        stride.append(desc.stride[mode])
    extra_shape, extra_stride = inst.extra_shape()  # the newest language's extra trailing modes
    result: MemrefType = inst.result.type
    start = ctx.dot(offsets, desc.stride)
    if isinstance(desc.base, LocalSlot):
        base, offset = desc.base, ctx.iadd(desc.offset, start)
    else:
        base, offset = offset_pointer(ctx, desc.type, desc.base, start), 0
    valid = desc.valid
    if ctx.bounds is not None:
        valid = _subview_valid(ctx, inst, desc, offsets)
        if extra_shape:
            valid = _extra_modes_valid(ctx, desc, valid, start, shape + list(extra_shape),
                                       stride + list(extra_stride))
    shape += extra_shape
    stride += extra_stride
    ctx[inst.result] = MemrefDesc(base, result, _static_override(shape, result.shape),
                                  _static_override(stride, result.stride), valid, offset)


def _extent(ctx: Ctx, shape: list[IndexLike], stride: list[IndexLike]) -> IndexLike:
    """Elements from the first to one past the last of a strided view: 1 + Σ (n-1)·s."""
    last: IndexLike = 0
    for n, s in zip(shape, stride):
        last = ctx.iadd(last, ctx.imul(ctx.iadd(n, -1), s))
    return ctx.iadd(last, 1)


def _extra_modes_valid(ctx: Ctx, desc: MemrefDesc, valid: "Id | bool", start: IndexLike,
                       shape: list[IndexLike], stride: list[IndexLike]) -> "Id | bool":
    """A subview with modes beyond the kept ones (newest language) reaches memory its slices
    do not describe: the whole view must lie within the operand's extent."""
    length, extent = _extent(ctx, shape, stride), _extent(ctx, list(desc.shape), list(desc.stride))
    ok = ctx.bounds.fits(start, length, extent)
    return _checked_view(ctx, MemrefDesc(desc.base, desc.type, desc.shape, desc.stride, valid,
                                         desc.offset), ok, "subview", [start, length], [], [extent])


def _subview_valid(ctx: Ctx, inst: Subview, desc: MemrefDesc, offsets: list[IndexLike]) -> "Id | bool":
    """Each slice within its mode: offset + size <= size of the mode, and a single
    index (size 0) below it; a `?` size of 0 is undefined, so it fails too."""
    checker = ctx.bounds
    ok: Id | bool = True
    sizes: list[IndexLike] = []
    for mode, ((off, size), start) in enumerate(zip(inst.mode_slices(), offsets)):
        n = desc.shape[mode]
        if isinstance(size, int) and size == WHOLE_MODE:
            sizes.append(n)
            continue
        if isinstance(size, int) and size == 0:
            sizes.append(0)
            ok = checker.both(ok, checker.below(start, n))
            continue
        count = _index_or_int(ctx, size)
        sizes.append(count)
        ok = checker.both(ok, checker.fits(start, count, n))
        if isinstance(count, Id):
            ok = checker.both(ok, checker.below(0, count))
    return _checked_view(ctx, desc, ok, "subview", offsets, sizes, list(desc.shape))


@emits(Expand)
def emit_expand(ctx: Ctx, inst: Expand) -> None:
    desc: MemrefDesc = ctx[inst.tensor]
    dynamic = iter(inst.operands[1:])
    parts = [ctx.index(next(dynamic)) if s == DYNAMIC else s for s in inst.static_shape]
    m = inst.mode
    strides: list[IndexLike] = []
    current = desc.stride[m]
    for p in parts:
        strides.append(current)
        current = ctx.imul(current, p)
    result: MemrefType = inst.result.type
    shape = desc.shape[:m] + parts + desc.shape[m + 1:]
    stride = desc.stride[:m] + strides + desc.stride[m + 1:]
    valid = desc.valid
    if ctx.bounds is not None:
        product: IndexLike = 1
        for p in parts:
            product = ctx.imul(product, p)
        ok = ctx.bounds.equal(product, desc.shape[m])
        valid = _checked_view(ctx, desc, ok, "expand", [product], parts, [desc.shape[m]])
    ctx[inst.result] = MemrefDesc(desc.base, result, _static_override(shape, result.shape),
                                  _static_override(stride, result.stride), valid, desc.offset)


@emits(Fuse)
def emit_fuse(ctx: Ctx, inst: Fuse) -> None:
    desc: MemrefDesc = ctx[inst.operands[0]]
    fused = slice(inst.first, inst.last + 1)
    size: IndexLike = 1
    for s in desc.shape[fused]:
        size = ctx.imul(size, s)
    result: MemrefType = inst.result.type
    fused_stride, ok = _fused_layout(ctx, desc.shape[fused], desc.stride[fused])
    shape = desc.shape[: inst.first] + [size] + desc.shape[inst.last + 1:]
    stride = desc.stride[: inst.first] + [fused_stride] + desc.stride[inst.last + 1:]
    valid = desc.valid
    if ctx.bounds is not None:
        valid = _checked_view(ctx, desc, ok, "fuse", desc.stride[fused], desc.shape[fused], [])
    stride = _static_override(stride, result.stride)
    stride[inst.first] = fused_stride  # (the type's static stride is the first mode's, right
    # whenever the spec's rule holds; a size-1 first mode may have any stride: the reference's)
    ctx[inst.result] = MemrefDesc(desc.base, result, _static_override(shape, result.shape),
                                  stride, valid, desc.offset)


def _fused_layout(ctx: Ctx, shape: list[IndexLike], stride: list[IndexLike]) -> "tuple[IndexLike, Id | bool]":
    """The stride of modes fused into one, and whether they can be.

    A mode of size 1 never addresses memory (its stride may be anything, as a
    NumPy array's is), so the fused stride is that of the first mode with more
    than one element, and each later such mode must continue it: stride =
    stride of the previous one times the sizes in between (the reference's
    rule, tinyc/reference/memory.py). Folded where the sizes are known."""
    fused: IndexLike = stride[0]
    expected: IndexLike = stride[0]
    seen: Id | bool = False
    ok: Id | bool = True
    for n, s in zip(shape, stride):
        big = _flag(ctx, Op.UGreaterThan, n, 1)
        first_big = _and(ctx, big, _not(ctx, seen))
        fused = _select(ctx, first_big, s, fused)
        expected = _select(ctx, first_big, s, expected)
        ok = _and(ctx, ok, _or(ctx, _not(ctx, big), _flag(ctx, Op.IEqual, s, expected)))
        seen = _or(ctx, seen, big)
        expected = ctx.imul(expected, n)
    return fused, ok


def _flag(ctx: Ctx, op: Op, a: IndexLike, b: IndexLike) -> "Id | bool":
    if not isinstance(a, Id) and not isinstance(b, Id):
        return int(a) > int(b) if op is Op.UGreaterThan else int(a) == int(b)
    return ctx.op(op, ctx.bool, ctx.as_id(a), ctx.as_id(b))


def _not(ctx: Ctx, a: "Id | bool") -> "Id | bool":
    return (not a) if isinstance(a, bool) else ctx.op(Op.LogicalNot, ctx.bool, a)


def _and(ctx: Ctx, a: "Id | bool", b: "Id | bool") -> "Id | bool":
    if a is False or b is False:
        return False
    if a is True or b is True:
        return b if a is True else a
    return ctx.op(Op.LogicalAnd, ctx.bool, a, b)


def _or(ctx: Ctx, a: "Id | bool", b: "Id | bool") -> "Id | bool":
    if a is True or b is True:
        return True
    if a is False or b is False:
        return b if a is False else a
    return ctx.op(Op.LogicalOr, ctx.bool, a, b)


def _select(ctx: Ctx, cond: "Id | bool", a: IndexLike, b: IndexLike) -> IndexLike:
    if isinstance(cond, bool):
        return a if cond else b
    return ctx.op(Op.Select, ctx.i64, cond, ctx.as_id(a), ctx.as_id(b))


@emits(Associated)
def emit_associated(ctx: Ctx, inst: Associated) -> None:
    """The base address (of the memref, or of a group's pointer table) is not null."""
    src = ctx[inst.operands[0]]
    base = first_element(ctx, src) if isinstance(src, MemrefDesc) else src.base
    address = ctx.op(Op.ConvertPtrToU, ctx.i64, base)
    ctx[inst.result] = ctx.op(Op.INotEqual, ctx.bool, address, ctx.as_id(0))


@emits(Size)
def emit_size(ctx: Ctx, inst: Size) -> None:
    src = ctx[inst.operands[0]]
    value = src.size if isinstance(src, GroupDesc) else src.shape[inst.mode]
    ctx[inst.result] = ctx.as_id(value)
    if not isinstance(value, Id):
        ctx.known[inst.result] = int(value)


# -- local memory ---------------------------------------------------------------------------------
def _bytes(t: MemrefType) -> int:
    """Extent of a static memref in bytes."""
    extent = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride))
    return (extent if all(s > 0 for s in t.shape) else 0) * t.element.size


def plan_local_memory(fn: Function) -> tuple[dict[Alloca, int], int]:
    """Byte offset of every alloca and the total size.

    A later pass assigns `stack_offset` and `local_memory_size`; until it
    runs, allocas get sequential offsets (no reuse), each aligned.
    """
    offsets: dict[Alloca, int] = {}
    end = 0
    for inst in fn.walk():
        if not isinstance(inst, Alloca):
            continue
        t: MemrefType = inst.result.type
        if "stack_offset" in inst.attrs:
            offsets[inst] = int(inst.attrs["stack_offset"])
        else:
            align = int(inst.attrs.get("alignment", LOCAL_ALIGNMENT))
            end = -(-end // align) * align
            offsets[inst] = end
        end = max(end, offsets[inst] + _bytes(t))
    size = int(fn.attrs.get("local_memory_size") or end)
    return offsets, max(size, end)


def declare_local_memory(ctx: Ctx, size: int) -> None:
    """The kernel's Workgroup byte array (nothing if no alloca)."""
    if size <= 0:
        return
    m = ctx.m
    array = m.type_array(m.type_int(8), size)
    ctx.local_memory = m.variable(m.type_pointer(StorageClass.Workgroup, array))
    align = int(ctx.ir_fn.attrs.get("local_memory_alignment", LOCAL_ALIGNMENT))
    m.decorate(ctx.local_memory, Decoration.Alignment, max(align, LOCAL_ALIGNMENT))


@emits(Alloca)
def emit_alloca(ctx: Ctx, inst: Alloca) -> None:
    """A descriptor only: accesses form the pointer (module docstring)."""
    t: MemrefType = inst.result.type
    ctx[inst.result] = MemrefDesc(LocalSlot(ctx.local_offsets[inst]), t, list(t.shape), list(t.stride))


@emits(LifetimeStop)
def emit_lifetime_stop(ctx: Ctx, inst: LifetimeStop) -> None:
    """Nothing to do: local memory is laid out statically."""
