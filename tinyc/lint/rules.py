"""The warnings' rules (docs/warnings.md): each one pass over a function or one instruction.

Instruction classes call the per-instruction rules from their `lint` method
(`subview_bounds`, `empty_range`); `function_rules` runs the ones that need
the whole function (uses of values, reads of local memory). Every rule is
linear in the size of the function.
"""

from __future__ import annotations

from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Note, Span
from tinyc.ir.core import EffectKind, Instruction, Value, no_memory_access, view_root
from tinyc.ir.types import DYNAMIC, AddressSpace, MemrefType, Type

if TYPE_CHECKING:
    from tinyc.lint import LintContext


# ---------------------------------------------------------------- per instruction

def subview_bounds(ctx: "LintContext", inst: Instruction, offsets: Sequence[int],
                   sizes: Sequence[int], whole_mode: int) -> None:
    """-Wsubview-bounds: a constant slice (offset, size or index) that leaves a mode whose
    size is known. Legal (docs/decisions.md: only an access through the view is undefined),
    but no access through that part of the view can be right."""
    if not ctx.wants("subview-bounds"):
        return
    operand = inst.operands[0]
    t = operand.type
    if not isinstance(t, MemrefType):
        return
    for mode, (offset, size) in enumerate(zip(offsets, sizes)):
        extent = t.shape[mode] if mode < len(t.shape) else DYNAMIC
        problem = _slice_problem(offset, size, extent, whole_mode)
        if problem:
            ctx.warn("subview-bounds", f"{inst.title}: {problem} of mode {mode}, whose size is "
                                       f"{extent}; an access through this part of the view is "
                                       f"undefined", inst.span, [ctx.defined_here(operand)])


def _slice_problem(offset: int, size: int, extent: int, whole_mode: int) -> str | None:
    if extent == DYNAMIC or size == whole_mode:
        return None
    if size == 0:  # a single index
        if offset != DYNAMIC and offset >= extent:
            return f"the index {offset} is past the end"
        return None
    if size == DYNAMIC:
        if offset != DYNAMIC and offset > extent:
            return f"the offset {offset} is past the end"
        return None
    if offset == DYNAMIC:
        return f"the slice size {size} is larger than the mode" if size > extent else None
    if offset + size > extent:
        return f"the slice {offset}:{size} ends at {offset + size}, past the end"
    return None


def empty_range(ctx: "LintContext", inst: Instruction, bounds: Sequence[tuple[Value, Value]]
                ) -> None:
    """-Wempty-loop: a mode of the loop's range whose bounds are constants with from >= to."""
    if not ctx.wants("empty-loop"):
        return
    for mode, (lower, upper) in enumerate(bounds):
        low, high = constant_of(lower), constant_of(upper)
        if low is None or high is None or low < high:
            continue
        where = f" in mode {mode}" if len(bounds) > 1 else ""
        ctx.warn("empty-loop", f"{inst.title}: the range {low}..{high}{where} is empty (the "
                               f"bounds are constants and the upper one is not larger): the body "
                               f"never runs", _head(inst, upper),
                 [ctx.defined_here(lower), ctx.defined_here(upper)])
        return


def _head(inst: Instruction, last: Value) -> Span | None:
    """From the start of the instruction to its operand `last` (a loop's header line)."""
    end = inst.operand_span(inst.operands.index(last))
    if inst.span is None or end is None or end is inst.span:
        return inst.span
    return Span(inst.span.line, inst.span.column, end.end_line, end.end_column, inst.span.source)


def constant_of(value: Value) -> int | None:
    """The integer a value is a `constant` of (its integer facts, tinyc/ir/addressing.py),
    else None."""
    owner = value.owner
    if not isinstance(owner, Instruction):
        return None
    op = owner.integer_facts().value
    if op is None or op.op != "constant":
        return None
    found = op.args[0]
    return found if isinstance(found, int) and not isinstance(found, bool) else None


# ---------------------------------------------------------------- per function

def function_rules(ctx: "LintContext", instructions: list[Instruction], used: set[Value],
                   result_types: set[Type]) -> None:
    """The rules that need every instruction of the function, given the values it uses and
    the types of its results. Kept to few passes over the instructions: the memory effects
    are asked only of the few instructions that need them (an unused result's, an access to
    local memory)."""
    if ctx.wants("unused-value"):
        _unused(ctx, instructions, used)
    if ctx.wants("unread-alloca"):
        _unread_allocas(ctx, instructions, result_types)


def _writes(inst: Instruction) -> bool:
    if type(inst).memory_accesses is no_memory_access:  # (most classes: no list to look through)
        return False
    return any(kind is not EffectKind.READ for _, kind in inst.memory_accesses())


_RESULTS = attrgetter("results")


def _unused(ctx: "LintContext", instructions: list[Instruction], used: set[Value]) -> None:
    """-Wunused-value: an instruction without side effects none of whose results is used."""
    for inst in instructions:
        results = inst.results
        if not results or results[0] in used or inst.regions:
            continue
        if len(results) > 1 and any(r in used for r in results):
            continue
        if _writes(inst):
            continue
        if len(results) == 1:  # (the common case without a generator)
            name = results[0].name
            names, verb = f"'%{name}'" if name else "the result", "is"
        else:
            names = ", ".join(f"'%{r.name}'" for r in results if r.name) or "the result"
            verb = "are"
        ctx.warn("unused-value", f"{inst.title}: {names} {verb} never used", results[0].span or inst.span)


def _unread_allocas(ctx: "LintContext", instructions: list[Instruction], result_types: set[Type]
                    ) -> None:
    """-Wunread-alloca: local memory written but never read (through any view of it)."""
    if not any(t.__class__ is MemrefType and t.space is AddressSpace.LOCAL
               for t in result_types):  # (types are interned: a few to look at)
        return
    results = list(chain.from_iterable(map(_RESULTS, instructions)))
    local = {id(r) for r in results
             if r.type.__class__ is MemrefType and r.type.space is AddressSpace.LOCAL}
    # Local memory's roots are alloca results: local memrefs that are no view of another.
    allocas = {id(r) for r in results if id(r) in local and view_root(r) is r}
    written: dict[int, tuple[Value, Instruction]] = {}  # alloca result -> its first write
    read: set[int] = set()
    for inst in instructions:
        if not any(id(v) in local for v in inst.operands):
            continue
        for value, kind in inst.memory_accesses():
            root = view_root(value)
            if id(root) not in allocas:
                continue
            if kind is not EffectKind.READ and not inst.results:
                written.setdefault(id(root), (root, inst))
            else:  # a read, or an atomic update whose result reads the memory
                read.add(id(root))
    for key, (root, first_write) in written.items():
        if key not in read:
            name = f"'%{root.name}'" if root.name else "the local memory"
            ctx.warn("unread-alloca", f"local memory {name} is written but never read: the "
                                      f"writes have no effect", root.span,
                     [Note("it is written here", first_write.span)])

