"""Can an address or a branch of a kernel depend on memory the kernel itself writes?

If not, the accesses of a run do not depend on what it stores, and the
bounds checks can run first as a *dry run* that writes no global memory
(tinyc/spirv/codegen/writes.py leaves the writes out), followed by the plain
kernel only if no violation was found: no snapshot of the outputs is
needed, and no output is touched when a check fails. Else the checked kernel
runs for real on the outputs, which are restored from snapshots on a
violation (tinyc/runtime/bounds.py).

What is written and what is read comes from the instructions' memory
interface (`memory_accesses`, through tinyc.analysis.memory_effects), so no
instruction can be missed: an atomic update writes its memref and its result
is read from it, like a load's. Local memory counts as written (its values
may come from stale global reads in a dry run). A memref whose root cannot
be traced makes every memory object count as written.

A conservative taint analysis: the results of an instruction that reads or
writes a written object are tainted, every result of an instruction with a
tainted operand is tainted (and the arguments of its regions: loop
variables, carried values), a tainted `yield` taints what its parent hands
back. The answer is yes when a tainted value decides an address or a branch.
"""

from __future__ import annotations

from tinyc.analysis.memory_effects import MemoryObject, direct_effects, memory_object
from tinyc.ir.core import EffectKind, Function, Instruction, Value
from tinyc.ir.instructions import (
    Alloca, AtomicStore, AtomicUpdate, BlasInstruction, CoopMatrixApply, CoopMatrixAtomicUpdate,
    CoopMatrixStore, For, Store, SubgroupBroadcast, Yield,
)
from tinyc.ir.types import AddressSpace, GroupType, MemrefType


def addressing_reads_own_writes(fn: Function) -> bool:
    """Whether a tainted value (read from memory this kernel writes) decides an address or a
    branch (see the module docstring)."""
    written = _written_objects(fn)
    tainted: set[Value] = set()
    changed = True
    while changed:
        changed = False
        for inst in fn.walk():
            fresh = [r for r in _tainted_results(inst, written, tainted) if r not in tainted]
            if fresh:
                tainted.update(fresh)
                changed = True
    return any(v in tainted for inst in fn.walk() for v in decisive_operands(inst))


def _written_objects(fn: Function) -> set[MemoryObject] | None:
    """The memory objects some instruction writes; None: any object may be written."""
    written: set[MemoryObject] = set()
    for inst in fn.walk():
        if isinstance(inst, Alloca):  # local memory: written and read by the kernel itself
            written.add(memory_object(inst.result))
        for effect in direct_effects(inst):
            if effect.kind is not EffectKind.READ:
                if effect.obj.root is None:
                    return None
                written.add(effect.obj)
    return written


def _reads_written(inst: Instruction, written: set[MemoryObject] | None) -> bool:
    """Whether `inst` itself accesses (so may return values of) a written object."""
    return any(written is None or e.obj in written for e in direct_effects(inst))


def _tainted_results(inst: Instruction, written: set[MemoryObject] | None,
                     tainted: set[Value]) -> list[Value]:
    found: list[Value] = []
    if _reads_written(inst, written):
        found += [r for r in inst.results if not _is_memory(r)]
    if any(v in tainted for v in inst.operands):
        found += inst.results
        for region in inst.regions:  # loop variables and carried values
            found += region.args
        owner = inst.parent.parent if isinstance(inst, Yield) and inst.parent is not None else None
        if isinstance(owner, Instruction):  # the values a region hands back
            found += owner.results
            if isinstance(owner, For):
                found += owner.carried
    return found


def _is_memory(value: Value) -> bool:
    return isinstance(value.type, (MemrefType, GroupType))


def decisive_operands(inst: Instruction) -> list[Value]:
    """The operands that may decide where memory is accessed or which code runs: every operand
    of an instruction that accesses memory or has regions, except the values it writes or
    hands on (data). Instructions that touch no memory and have no regions decide nothing
    themselves (their results carry the taint on)."""
    if not inst.regions and not inst.memory_accesses() and not _is_memory_view(inst):
        return list(_control_operands(inst))
    data = set(_data_operands(inst))
    return [v for v in inst.operands if not _is_memory(v) and v not in data]


def _is_memory_view(inst: Instruction) -> bool:
    """Views and group loads form addresses (their offsets and sizes decide them)."""
    return any(_is_memory(r) for r in inst.results)


def _control_operands(inst: Instruction) -> list[Value]:
    """Operands of a memoryless instruction that still must agree across lanes (a broadcast's lane)."""
    return [inst.operands[1]] if isinstance(inst, SubgroupBroadcast) else []


def _data_operands(inst: Instruction) -> list[Value]:
    """The values an instruction stores or carries, which decide no address.

    (Until the memory interface names the operands that address memory, issue 21 §1.)"""
    if isinstance(inst, (Store, AtomicStore, AtomicUpdate)):
        return [inst.value]
    if isinstance(inst, (CoopMatrixStore, CoopMatrixAtomicUpdate, CoopMatrixApply)):
        return [inst.operands[0]]
    if isinstance(inst, BlasInstruction):  # alpha, beta: the lowered code is in bounds by its rule
        return [v for v in inst.operands if not _is_memory(v)]
    if isinstance(inst, For):
        return list(inst.init)
    return []


__all__ = ["addressing_reads_own_writes", "decisive_operands"]
