"""local-memory: place every alloca in the kernel's local-memory block.

Codegen makes one work-group array of `fn.attrs["local_memory_size"]` bytes
per kernel (aligned to `fn.attrs["local_memory_alignment"]`); each alloca is
the bytes from `inst.attrs["stack_offset"]` on. This pass chooses offsets:

- **Lifetime.** An alloca is live from its instruction to a `lifetime_stop`
  of it in the same region, else to the end of the region that contains it
  (spec: freed at the end of the block). A `lifetime_stop` in a nested region
  is ignored: it ends the lifetime on one path only. Allocas of the two
  branches of an `if` may share memory.
- **Placement.** First fit: the lowest offset, aligned, that overlaps no live
  alloca. Alignment is the `alignment` attribute, else `DEFAULT_ALIGNMENT`
  (64 bytes: one cache line and one AVX-512 vector on the CPU device, and a
  multiple of every element size). An alloca inside an SPMD region (not made
  by the lowering today) gets memory of its own that nothing else reuses.
- **Size.** `local_memory_size` is the high-water mark; it is recorded only
  when the kernel has allocas. An alloca that ends past the device's local
  memory is a CompilationError at that alloca, naming the sizes.
- **Reuse needs a barrier.** When an alloca B takes bytes that an earlier
  alloca A used (or B's own bytes from the previous loop iteration), other
  work-items may still be reading A when B is first written. So before the
  first instruction of B's region that accesses B, a `barrier.local` must
  separate it from every pending access to overlapping memory. The barrier
  planner of barriers.py finds where one is missing (one the insert-barriers
  pass put there counts) and it is inserted there. B's region is collective,
  so every work-item reaches that barrier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tinyc.diagnostics import CompilationError, Diagnostic, Note
from tinyc.ir.core import Function, Kind, Region, Value
from tinyc.ir.instructions import Alloca, LifetimeStop
from tinyc.ir.types import AddressSpace, MemrefType
from tinyc.passes.barriers import BarrierPlanner, Fence, State, apply_plan
from tinyc.target.device_info import device_of
from tinyc.analysis.memory_effects import MemoryEffect, root_of, touches

if TYPE_CHECKING:
    from tinyc.ir.core import Instruction
    from tinyc.passes import PassOptions

DEFAULT_ALIGNMENT = 64
"""Bytes; the alignment of an alloca without an `alignment` attribute."""


def alloca_alignment(inst: Alloca) -> int:
    """The `alignment` attribute, else DEFAULT_ALIGNMENT (never below the element size)."""
    element = inst.result.type.element.size  # type: ignore[attr-defined]
    explicit = inst.attrs.get("alignment")
    if isinstance(explicit, int) and not isinstance(explicit, bool) and explicit > 0:
        return max(explicit, element)
    return max(DEFAULT_ALIGNMENT, element)


def alloca_size(inst: Alloca) -> int:
    """Bytes spanned by the alloca's memref: (largest linear index + 1) x element size."""
    t = inst.result.type
    if not isinstance(t, MemrefType) or t.is_dynamic:
        raise CompilationError(Diagnostic(
            f"alloca needs a memref type of static size, got {t}", inst.type_span or inst.span))
    if any(s == 0 for s in t.shape):
        return 0
    extent = 1 + sum((s - 1) * S for s, S in zip(t.shape, t.stride))
    return extent * t.element.size


def _align(offset: int, alignment: int) -> int:
    return -(-offset // alignment) * alignment


@dataclass(eq=False)
class Block:
    """Where one alloca lives in the local-memory block."""

    inst: Alloca
    offset: int
    size: int

    @property
    def end(self) -> int:
        return self.offset + self.size

    def overlaps(self, other: "Block") -> bool:
        return self.offset < other.end and other.offset < self.end


class _Layout:
    """First-fit placement in program order; nested regions free their allocas on exit."""

    def __init__(self, limit: int):
        self.limit = limit
        self.blocks: dict[Value, Block] = {}    # alloca result -> its block
        self.pinned: list[Block] = []           # allocas in SPMD regions: never shared
        self.high = 0
        self.alignment = 1

    def region(self, region: Region, live: list[Block], spmd: bool) -> None:
        own: dict[Value, Block] = {}
        for inst in region.instructions:
            if isinstance(inst, Alloca):
                block = self.place(inst, live, spmd)
                own[inst.result] = block
                live.append(block)
            elif isinstance(inst, LifetimeStop):
                block = own.pop(root_of(inst.operands[0]), None)  # type: ignore[arg-type]
                if block is not None:
                    live.remove(block)
            for sub in inst.regions:
                self.region(sub, list(live), spmd or inst.region_kind is Kind.SPMD)

    def place(self, inst: Alloca, live: list[Block], spmd: bool) -> Block:
        size, alignment = alloca_size(inst), alloca_alignment(inst)
        taken = sorted({id(b): b for b in live + self.pinned}.values(), key=lambda b: b.offset)
        offset = _align(self.high, alignment) if spmd else self._first_fit(taken, size, alignment)
        block = Block(inst, offset, size)
        if block.end > self.limit:
            raise self._overflow(block, taken)
        inst.attrs["stack_offset"] = offset
        self.blocks[inst.result] = block
        if spmd:
            self.pinned.append(block)
        self.high = max(self.high, block.end)
        self.alignment = max(self.alignment, alignment)
        return block

    @staticmethod
    def _first_fit(taken: list[Block], size: int, alignment: int) -> int:
        offset = 0
        for block in taken:
            if block.size and offset + size <= block.offset:
                break
            if block.size:
                offset = max(offset, _align(block.end, alignment))
        return offset

    def _overflow(self, block: Block, taken: list[Block]) -> CompilationError:
        held = sum(b.size for b in taken)
        notes = [Note(f"{_name(b.inst)} holds {b.size} bytes at offset {b.offset} here", b.inst.span)
                 for b in taken if b.size][:8]
        message = (f"alloca of {block.size} bytes does not fit in local memory: it would occupy "
                   f"bytes {block.offset} to {block.end - 1}, but the device has {self.limit} "
                   f"bytes per work-group ({held} bytes are held by {len(taken)} live allocas)")
        return CompilationError(Diagnostic(message, block.inst.span, tuple(notes)))


def _name(inst: Alloca) -> str:
    return f"'%{inst.result.name}'" if inst.result.name else "an alloca"


def layout(fn: Function, limit: int) -> dict[Value, Block]:
    """Offsets for every alloca of `fn` (stored in `stack_offset`); records the total size."""
    state = _Layout(limit)
    state.region(fn.body, [], False)
    if state.blocks:
        fn.attrs["local_memory_size"] = state.high
        fn.attrs["local_memory_alignment"] = state.alignment
    return state.blocks


# ---------------------------------------------------------------- reuse barriers

def _first_accesses(fn: Function, blocks: dict[Value, Block]) -> dict["Instruction", list[Block]]:
    """For each alloca, the first later instruction of its own region that accesses it."""
    first: dict[Instruction, list[Block]] = {}
    for root, block in blocks.items():
        region = block.inst.parent
        if region is None:
            continue
        after = region.instructions[region.instructions.index(block.inst) + 1:]
        user = next((inst for inst in after if touches(inst, root)), None)
        if user is not None:
            first.setdefault(user, []).append(block)
    return first


def _reuse_check(blocks: dict[Value, Block], first: dict["Instruction", list[Block]]):
    """A pre-check: barrier.local before a first access when overlapping memory is pending."""

    def overlapping(pending: MemoryEffect, fresh: Block) -> bool:
        if pending.space is not AddressSpace.LOCAL:
            return False
        other = blocks.get(pending.obj.root) if pending.obj.root is not None else None
        return other is None or other.overlaps(fresh)  # unknown local memory: assume overlap

    def check(inst: "Instruction", state: State) -> Fence:
        for fresh in first.get(inst, ()):
            if fresh.size and any(overlapping(p, fresh) for p in state):
                return Fence.LOCAL
        return Fence.NONE

    return check


def assign_local_memory(fn: Function, options: "PassOptions | None" = None) -> None:
    """The pass: lay out allocas, then make reuse of memory safe with barrier.local."""
    blocks = layout(fn, device_of(options).local_memory_size)
    if not blocks:
        return
    first = _first_accesses(fn, blocks)
    planner = BarrierPlanner(conflict=lambda pending, access: False,
                             pre_check=_reuse_check(blocks, first))
    apply_plan(planner.plan(fn))
