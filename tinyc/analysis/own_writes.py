"""Can an address or a branch of a kernel depend on memory the kernel itself writes?

If not, the accesses of a run do not depend on what it stores, and the
bounds checks can run first as a *dry run* that writes no global memory
(tinyc/spirv/codegen/writes.py leaves the writes out), followed by the plain
kernel only if no violation was found: no snapshot of the outputs is
needed, and no output is touched when a check fails. Else the checked kernel
runs for real on the outputs, which are restored from snapshots on a
violation (tinyc/runtime/bounds.py).

Every fact comes from the instructions' interfaces, so no instruction can be
missed (tinyc/ir/addressing.py; an instruction that does not describe
itself touches its memory "somewhere" and loads every result):

- written: the memory objects of the footprints that are not reads (an
  atomic update writes), and all local memory (its values may come from
  stale global reads in a dry run); an untraceable root makes everything
  written;
- tainted: the `loaded` results of an instruction with a footprint on a
  written object (an atomic's old value, a coopmatrix update's), every
  result of an instruction with a tainted operand and the arguments of its
  regions that are no loop variable (carried values), and what a region
  hands back (its closing yield) when that is tainted;
- decisive: the operands that address memory (footprint starts and counts,
  a view's offsets, sizes and member index; every non-memory operand of a
  footprint that is not described), loop bounds and steps, and the
  conditions of guarded regions.

The answer is yes when a tainted value is decisive.
"""

from __future__ import annotations

from typing import Iterator

from tinyc.analysis.memory_effects import MemoryObject, memory_object
from tinyc.ir.addressing import LoopRange, MemberView, ModeSpan, SliceView, SplitView, TileRange
from tinyc.ir.core import EffectKind, Function, Instruction, Value
from tinyc.ir.types import AddressSpace

Written = set[MemoryObject] | None
"""The memory objects a kernel writes; None: any object may be written."""


def addressing_reads_own_writes(fn: Function) -> bool:
    """Whether a tainted value (read from memory this kernel writes) decides an address or a
    branch (see the module docstring)."""
    written = written_objects(fn)
    tainted: set[Value] = set()
    changed = True
    while changed:
        changed = False
        for inst in fn.walk():
            fresh = [r for r in _tainted_by(inst, written, tainted) if r not in tainted]
            if fresh:
                tainted.update(fresh)
                changed = True
    return any(v in tainted for inst in fn.walk() for v in decisive_operands(inst))


def written_objects(fn: Function) -> Written:
    """The memory objects some instruction of `fn` writes (module docstring)."""
    written: set[MemoryObject] = set()
    for inst in fn.walk():
        for footprint in inst.addressing().footprints:
            if footprint.kind is EffectKind.READ:
                continue
            obj = memory_object(footprint.operand)
            if obj is None or obj.root is None:
                return None
            written.add(obj)
    return written


def _is_written(value: Value, written: Written) -> bool:
    obj = memory_object(value)
    return written is None or obj is None or obj.space is AddressSpace.LOCAL or obj in written


def _tainted_by(inst: Instruction, written: Written, tainted: set[Value]) -> list[Value]:
    """The values `inst` taints, given those tainted so far."""
    addressing = inst.addressing()
    found: list[Value] = []
    if any(_is_written(f.operand, written) for f in addressing.footprints):
        found += addressing.loaded
    if any(v in tainted for v in inst.operands):
        found += inst.results
        loop_variables = {r.var for r in inst.integer_facts().ranges}
        found += [a for region in inst.regions for a in region.args if a not in loop_variables]
    if inst.region_yields:
        for region in inst.regions:
            last = region.instructions[-1] if region.instructions else None
            if last is not None and any(v in tainted for v in last.operands):
                found += inst.results  # handed back, and carried into the next iteration
                loop_variables = {r.var for r in inst.integer_facts().ranges}
                found += [a for a in region.args if a not in loop_variables]
    return found


def decisive_operands(inst: Instruction) -> list[Value]:
    """The operands that decide where memory is accessed or which code runs (module docstring)."""
    return [v for v in _decisive(inst) if isinstance(v, Value)]


def _decisive(inst: Instruction) -> Iterator[object]:
    addressing = inst.addressing()
    for footprint in addressing.footprints:
        if footprint.modes is None:  # "somewhere": any operand may address it
            yield from (v for v in inst.operands if memory_object(v) is None)
        for span in footprint.modes or ():
            yield from _span(span)
    view = addressing.view
    if isinstance(view, SliceView):
        for span in view.modes:
            yield from _span(span)
    elif isinstance(view, SplitView):
        yield from view.shape
    elif isinstance(view, MemberView):
        yield view.index
    facts = inst.integer_facts()
    for loop in facts.ranges:
        if isinstance(loop, LoopRange):
            yield from (loop.lower, loop.upper, loop.step)
        elif isinstance(loop, TileRange):
            yield from (loop.offset, loop.upper)
    if facts.guard is not None:
        yield facts.guard.condition


def _span(span: ModeSpan) -> Iterator[object]:
    yield span.start
    yield span.count


__all__ = ["addressing_reads_own_writes", "decisive_operands", "written_objects"]
