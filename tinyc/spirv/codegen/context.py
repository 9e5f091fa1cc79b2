"""Per-kernel code generation state: the value map, the current block, helpers.

Every emitter receives a `Ctx`. It owns the mapping from IR values to their
lowered form (`Lowered`), the block instructions currently go to, and small
helpers for constants, index arithmetic with constant folding, builtins and
structured branches, so the emitters read like the SPIR-V they produce.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

from tinyc.ir.core import Function as IRFunction
from tinyc.ir.core import Value
from tinyc.ir.types import GroupType, MemrefType
from tinyc.spirv.function import Block
from tinyc.spirv.function import Function as SpvFunction
from tinyc.spirv.instruction import Id, Operand
from tinyc.spirv.module import Module
from tinyc.spirv.spv import BuiltIn, MemoryAccess, Op, OpenCLStd, Scope, SelectionControl, StorageClass

VARYING_BUILTINS = frozenset([BuiltIn.SubgroupLocalInvocationId, BuiltIn.LocalInvocationId,
                              BuiltIn.GlobalInvocationId, BuiltIn.SubgroupId])
"""Builtins whose value differs between the work-items of a work-group (see `builtin`)."""


class CodegenError(Exception):
    """The IR reached codegen in a form it cannot translate (a compiler bug)."""


IndexLike = Union[int, Id]
"""A 64-bit index: a Python int when known at compile time, else an i64 id."""


@dataclass(frozen=True)
class LocalSlot:
    """Where an alloca starts in the kernel's local array (bytes): its pointer is formed
    where the memref is accessed (`Ctx.local_pointer`)."""

    byte_offset: int


@dataclass
class MemrefDesc:
    """A memref as codegen sees it: base plus per-mode shape/stride.

    `base` is a pointer id, or a `LocalSlot` for local memory; `offset` counts
    elements past the base (local views keep it as an integer, see `memref.py`).
    """

    base: Id | LocalSlot
    type: MemrefType
    shape: list[IndexLike]
    stride: list[IndexLike]
    valid: "Id | bool" = True  # bounds-checked kernels: the view was made within bounds
    offset: IndexLike = 0


@dataclass
class GroupDesc:
    """A group parameter: pointer to member pointers plus its dope vectors."""

    base: Id
    type: GroupType
    dope: dict[tuple[str, int], Id] = field(default_factory=dict)  # slot -> ptr to i64 per member
    size: IndexLike = 0
    offset: IndexLike = 0


Lowered = Union[Id, list, MemrefDesc, GroupDesc]
"""One id (scalar/bool), a list of component ids (coopmatrix), or a descriptor."""


class Ctx:
    """State while one IR function becomes one SPIR-V kernel."""

    def __init__(self, m: Module, fn: SpvFunction, ir_fn: IRFunction, batch_axis: int = 2):
        self.m = m
        self.batch_axis = batch_axis  # OpenCL dimension of the batch (tinyc.std.BATCH_AXIS)
        self.fn = fn
        self.ir_fn = ir_fn
        self.prologue = fn.block()          # builtin loads go here, branch added at the end
        self.block: Block = fn.block()      # where instructions go now
        self.body_label = self.block.label
        self.values: dict[Value, Lowered] = {}
        self.known: dict[Value, int | float | complex | bool] = {}
        self.subgroup_size: int = int(ir_fn.attrs.get("subgroup_size", 16))
        wgs = ir_fn.attrs.get("work_group_size", [self.subgroup_size, 1])
        self.work_group_size: tuple[int, int] = (int(wgs[0]), int(wgs[1]))
        self._builtins: dict[tuple, Id] = {}  # loaded in the prologue: see builtin()
        self._fresh: dict[tuple, Id] = {}     # loaded in a block since the last barrier
        self._after_barrier = False           # a barrier was emitted: see builtin()
        self.local_memory: Id | None = None  # module-scope Workgroup byte array
        self.local_offsets: dict = {}        # Alloca -> byte offset in local_memory
        self._local_pointers: dict[tuple[Id, int, Id], Id] = {}  # see local_pointer
        self.current = None                  # the IR instruction being emitted
        self.bounds = None                   # bounds.Bounds in a bounds-checked kernel
        self.products: dict[Value, tuple[Value, Value]] = {}   # fp_contract: single-use a·b an add reads
        self._const64: dict[int, Id] = {}    # const64's ids by value (index arithmetic asks often)

    # -- values ------------------------------------------------------------------
    def __getitem__(self, v: Value) -> Lowered:
        try:
            return self.values[v]
        except KeyError:
            raise CodegenError(f"value {v!r} used before definition") from None

    def __setitem__(self, v: Value, lowered: Lowered) -> None:
        self.values[v] = lowered

    def id(self, v: Value) -> Id:
        """The single id of a scalar or bool value."""
        lowered = self[v]
        if not isinstance(lowered, Id):
            raise CodegenError(f"value {v!r} is not a scalar")
        return lowered

    def index(self, v: Value) -> IndexLike:
        """An index operand: its constant when known, else its i64 id."""
        known = self.known.get(v)
        if isinstance(known, int) and not isinstance(known, bool):
            return known
        return self.id(v)

    # -- emitting ----------------------------------------------------------------
    def op(self, opcode: Op, *args: Operand) -> Id:
        """Append an instruction with a result to the current block."""
        return self.block._append(opcode, args, None).result

    def do(self, opcode: Op, *args: Operand) -> None:
        """Append an instruction without a result."""
        self.block._append(opcode, args, None)

    def ext(self, inst: OpenCLStd, result_type: Id, *args: Operand) -> Id:
        return self.block.ext(inst, result_type, *args)

    def new_block(self, label: Id | None = None) -> Block:
        return self.fn.block(label)

    # -- types and constants ---------------------------------------------------------
    @property
    def i64(self) -> Id:
        return self.m.type_int(64)

    @property
    def i32(self) -> Id:
        return self.m.type_int(32)

    @property
    def bool(self) -> Id:
        return self.m.type_bool()

    def const64(self, value: int) -> Id:
        """A 64-bit constant; folded index arithmetic wraps around as the device's would
        (an offset that overflows is out of bounds anyway, but must not crash the compiler)."""
        found = self._const64.get(value)
        if found is None:
            found = self._const64[value] = self.m.const_int(_wrap64(int(value)), 64)
        return found

    def const32(self, value: int) -> Id:
        return self.m.const_int(value, 32)

    def scope(self, scope: Scope) -> Id:
        """Scope operands are ids of 32-bit constants."""
        return self.const32(int(scope))

    # -- index arithmetic (folded when both sides are known) ------------------------------
    def as_id(self, x: IndexLike) -> Id:
        return x if x.__class__ is Id else self.const64(int(x))

    def iadd(self, a: IndexLike, b: IndexLike) -> IndexLike:
        if a.__class__ is not Id:
            if b.__class__ is not Id:
                return int(a) + int(b)
            if a == 0:
                return b
        elif b.__class__ is not Id and b == 0:
            return a
        return self._index_op(Op.IAdd, a, b)

    def imul(self, a: IndexLike, b: IndexLike) -> IndexLike:
        if a.__class__ is not Id:
            if b.__class__ is not Id:
                return int(a) * int(b)
            if a == 0 or a == 1:
                return 0 if a == 0 else b
        elif b.__class__ is not Id and (b == 0 or b == 1):
            return 0 if b == 0 else a
        return self._index_op(Op.IMul, a, b)

    def _index_op(self, opcode: Op, a: IndexLike, b: IndexLike) -> Id:
        """An i64 instruction on two indices (a known one as its constant, made in this order)."""
        i64 = self.m.type_int(64)
        x = a if a.__class__ is Id else self.const64(a)
        y = b if b.__class__ is Id else self.const64(b)
        return self.block.value(opcode, i64, x, y)

    def dot(self, indices: Sequence[IndexLike], strides: Sequence[IndexLike]) -> IndexLike:
        """Σ index_i · stride_i with the constant parts folded."""
        pairs = zip(indices, strides)
        first = next(pairs, None)
        if first is None:
            return 0
        iadd, imul = self.iadd, self.imul
        total = imul(*first)  # (what iadd(0, ...) would give: the int, or the id itself)
        for i, s in pairs:
            total = iadd(total, imul(i, s))
        return total

    # -- local memory ----------------------------------------------------------------
    def local_pointer(self, slot: LocalSlot, pointer_type: Id) -> Id:
        """Pointer to an alloca's first element, formed in the current block.

        Reused within a block until the next barrier (`after_barrier`), so
        no Workgroup pointer is ever live across OpControlBarrier: the CPU runtime
        miscompiles a local-memory pointer kept across a barrier in a loop (it sinks
        earlier stores to that memory past the loop; docs/decisions.md).
        """
        key = (self.block.label, slot.byte_offset, pointer_type)
        if key not in self._local_pointers:
            if self.local_memory is None:
                raise CodegenError("local memory used, but the kernel declares none")
            byte_ptr = self.m.type_pointer(StorageClass.Workgroup, self.m.type_int(8))
            p8 = self.op(Op.Bitcast, byte_ptr, self.local_memory)
            if slot.byte_offset:
                p8 = self.op(Op.InBoundsPtrAccessChain, byte_ptr, p8, self.const64(slot.byte_offset))
            self._local_pointers[key] = self.op(Op.Bitcast, pointer_type, p8)
        return self._local_pointers[key]

    def after_barrier(self) -> None:
        """After a barrier, local memory is addressed afresh (`local_pointer`) and the
        work-items' own builtins are read afresh (`builtin`)."""
        self._local_pointers.clear()
        self._fresh.clear()
        self._after_barrier = True

    # -- builtins -------------------------------------------------------------------
    def builtin(self, builtin: BuiltIn, component: int | None = None) -> Id:
        """A builtin's value (a component for vector builtins), loaded once in the prologue.

        Once a barrier has been emitted, a builtin that differs between the work-items of a
        work-group (VARYING_BUILTINS) is loaded again in each block that asks for it, and
        again after each further barrier (`_fresh`, cleared by `after_barrier`), so the
        loads codegen shares never keep such a value live across OpControlBarrier: the CPU
        runtime miscompiles a lane id kept across a barrier (a later `lane < rows` guard let
        every lane store, writing past the end of a 5-element output; docs/decisions.md).
        (A value the IR itself computes before a barrier in a `parallel` region and uses
        after it stays one value, as the program says.)"""
        fresh = self._after_barrier and builtin in VARYING_BUILTINS
        cache, where = (self._fresh, self.block) if fresh else (self._builtins, self.prologue)
        place = (self.block.label,) if fresh else ()
        key = (builtin, component, *place)
        found = cache.get(key)
        if found is not None:
            return found
        var = self.m.builtin_variable(builtin)
        if component is None:
            found = where.op(Op.Load, self.i32, var)
        else:
            vec_key = (builtin, None, *place)   # (the vector, in the same place)
            vec = cache.get(vec_key)
            if vec is None:
                vtype = self.m.type_vector(self.i64, 3)
                vec = cache[vec_key] = where.op(Op.Load, vtype, var, MemoryAccess.Aligned, 32)
            found = where.op(Op.CompositeExtract, self.i64, vec, component)
        cache[key] = found
        return found

    def lane_id(self) -> Id:
        """SubgroupLocalInvocationId as a 32-bit id."""
        return self.builtin(BuiltIn.SubgroupLocalInvocationId)

    def lane_id64(self) -> Id:
        """The lane id as a 64-bit index (after a barrier: per block, as `builtin`)."""
        lane = self.lane_id()
        cache, where = (self._fresh, self.block) if self._after_barrier else (self._builtins, self.prologue)
        key = (BuiltIn.SubgroupLocalInvocationId, -1, lane)
        if key not in cache:
            cache[key] = where.op(Op.UConvert, self.i64, lane)
        return cache[key]

    # -- structured control flow ------------------------------------------------------
    def branch(self, cond: Id, then: Callable[[], list[Id]],
               otherwise: Callable[[], list[Id]] | None = None,
               result_types: Sequence[Id] = (), defaults: Sequence[Id] = ()) -> list[Id]:
        """if/else with OpSelectionMerge; returns one Phi per result type.

        Without `otherwise`, results that skip the then-branch take `defaults`
        (ids that dominate the branch).
        """
        then_label, merge_label = self.m.new_id(), self.m.new_id()
        else_label = self.m.new_id() if otherwise is not None else merge_label
        head = self.block
        self.do(Op.SelectionMerge, merge_label, SelectionControl.None_)
        self.do(Op.BranchConditional, cond, then_label, else_label)
        self.block = self.new_block(then_label)
        then_values = then()
        then_end = self.block
        self.do(Op.Branch, merge_label)
        if otherwise is not None:
            self.block = self.new_block(else_label)
            else_values = otherwise()
            else_end = self.block
            self.do(Op.Branch, merge_label)
        else:
            else_values, else_end = list(defaults), head
        self.block = self.new_block(merge_label)
        return [self.block.phi(t, (a, then_end.label), (b, else_end.label)).result
                for t, a, b in zip(result_types, then_values, else_values)]


def _wrap64(value: int) -> int:
    """value modulo 2^64 in the signed range."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def natural_alignment(memref: MemrefType) -> int:
    """Byte alignment every element access may assume (a complex: its component)."""
    return memref.element.component.size
