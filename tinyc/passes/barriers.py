"""insert-barriers: barriers between collective instructions where data flow needs them.

A collective instruction spreads its work over the work-items in a way the
program cannot see, so when a later instruction touches memory that an
earlier one wrote (or writes memory an earlier one read or wrote), some
work-item may access an element another work-item handled: a work-group
barrier with a fence for that address space (`barrier.global` for function
arguments, `barrier.local` for allocas) must separate them.

The analysis tracks the *pending* accesses: those made since the last
barrier that fences their address space (see tinyc/analysis/memory_effects.py for what an
instruction accesses and when two accesses conflict). It runs on the
collective level, before lowering:

- Each instruction of a collective region is a unit; before a unit whose
  accesses conflict with a pending one, a barrier with the needed fences is
  planned. Reads after reads, atomic adds after atomic adds and accesses to
  different objects need none.
- `foreach` and `parallel` bodies are SPMD: their accesses are checked
  against what was pending before the region, never against each other
  (ordering inside an SPMD region is the programmer's job, with manual
  barriers), and the barrier goes before the `foreach`/`parallel`.
- `if`: both branches start from the same state; afterwards the union.
  `for`: the body is analysed from the union of the state before the loop
  and the state at the end of the body until nothing changes, so a
  dependency from one iteration into the next gets its barrier too. An
  access through a block that every iteration takes elsewhere (a subview
  of a memref from outside the loop with one mode fixed at the loop
  variable, or at it plus a loop-invariant value; the only view of that
  object and kind of access in the loop) meets the same view of a later
  iteration without a barrier: the two touch no common element. This is
  the loop over batch entries of a generated kernel (one collective per
  entry): on a GPU a work-group barrier per entry stalls every subgroup
  (the CPU runtime, with one subgroup per work-group, measured the same
  time with and without).
- Barriers already in the code (manual or earlier inserted) clear the
  pending accesses of the spaces they fence; they are kept. A planned
  barrier directly after an existing one is merged into it (its fences are
  added) instead of standing next to it.

`BarrierPlanner` is the reusable engine: the local-memory pass runs it with
its own conflict test to place barriers where memory of a dead alloca is
reused.
"""

from __future__ import annotations

from dataclasses import replace
from enum import Flag
from typing import TYPE_CHECKING, Callable, Iterable

from tinyc.ir.core import Function, Instruction, Kind, Region, Value
from tinyc.ir.instructions import Barrier, For, If
from tinyc.ir.types import AddressSpace
from tinyc.analysis.memory_effects import MemoryEffect, conflicts, direct_effects, effects, per_iteration_block

if TYPE_CHECKING:
    from tinyc.passes import PassOptions


class Fence(Flag):
    """Memory fences a barrier carries."""

    NONE = 0
    GLOBAL = 1
    LOCAL = 2


def fence_for(space: AddressSpace) -> Fence:
    """The fence that orders accesses to `space`."""
    return Fence.LOCAL if space is AddressSpace.LOCAL else Fence.GLOBAL


def fences_of(barrier: Barrier) -> Fence:
    return ((Fence.GLOBAL if barrier.global_fence else Fence.NONE)
            | (Fence.LOCAL if barrier.local_fence else Fence.NONE))


State = frozenset[MemoryEffect]
"""Accesses not yet ordered by a barrier fencing their address space."""

Plan = dict[Instruction, Fence]
"""Barriers to insert: before each instruction, a barrier with these fences."""

ConflictTest = Callable[[MemoryEffect, MemoryEffect], bool]
"""(pending access, new access) -> whether a barrier must separate them."""

PreCheck = Callable[[Instruction, State], Fence]
"""Extra fences needed before a unit of a collective region, given the pending state."""


def clear(state: State, fences: Fence) -> State:
    """The pending accesses that survive a barrier with `fences`."""
    if not fences:
        return state
    return frozenset(e for e in state if not fence_for(e.space) & fences)


class BarrierPlanner:
    """Finds where barriers are needed; `plan(fn)` returns them without changing the IR."""

    def __init__(self, conflict: ConflictTest = conflicts, pre_check: PreCheck | None = None):
        self.conflict = conflict
        self.pre_check = pre_check
        self._effects: dict[Instruction, list[MemoryEffect]] = {}
        self._views: dict[For, tuple[dict[tuple, set], dict[Value, bool]]] = {}

    def plan(self, fn: Function) -> Plan:
        plan: Plan = {}
        self._effects.clear()
        self._views.clear()
        self.region(fn.body, frozenset(), plan)
        return plan

    def effects(self, inst: Instruction) -> list[MemoryEffect]:
        """`effects(inst)`, computed once per plan (loops are walked until a fixed point)."""
        found = self._effects.get(inst)
        if found is None:
            found = self._effects[inst] = effects(inst)
        return found

    # -- collective regions ---------------------------------------------------
    def region(self, region: Region, state: State, plan: Plan) -> State:
        """Walk a collective region from `state`; returns the state at its end."""
        for inst in region.instructions:
            state = self.unit(inst, state, plan)
        return state

    def unit(self, inst: Instruction, state: State, plan: Plan) -> State:
        if self.pre_check is not None:
            state = _require(plan, inst, self.pre_check(inst, state), state)
        if isinstance(inst, Barrier):
            return clear(state, fences_of(inst))
        if isinstance(inst, For):
            return self._loop(inst, state, plan)
        if isinstance(inst, If):
            return self.region(inst.then, state, plan) | self.region(inst.otherwise, state, plan)
        if inst.region_kind is Kind.SPMD:  # foreach, parallel
            needed, _ = self.spmd(inst.body, state, frozenset())
            state = _require(plan, inst, needed, state)
            return self.spmd(inst.body, state, frozenset())[1]
        accesses = self.effects(inst)
        state = _require(plan, inst, self.needed(state, accesses), state)
        return state | frozenset(accesses)

    def _loop(self, loop: For, state: State, plan: Plan) -> State:
        """Fixed point over the back edge; only the last round's plan counts. An access through
        a block each iteration takes elsewhere (memory_effects.per_iteration_block) crosses the
        back edge marked, so that the same block in the next iteration needs no barrier (a loop
        over batch entries, each a collective on its own slice)."""
        body, var = loop.body, loop.body.args[0]
        views, blocks = self._loop_views(loop)

        def carried(e: MemoryEffect) -> MemoryEffect:
            """Marked only when the one view of its kind of access is a per-iteration block: a
            state holds one effect per object and kind, whatever the view."""
            if e.carried_view is not None or e.via is None or views.get((e.obj, e.kind)) != {e.via}:
                return e
            if e.via not in blocks:
                blocks[e.via] = per_iteration_block(e.via, var, body)
            return replace(e, carried_view=e.via) if blocks[e.via] else e

        entry = state
        while True:
            trial: Plan = {}
            after = entry | frozenset(carried(e) for e in self.region(body, entry, trial))
            if after == entry:
                _merge(plan, trial)
                return frozenset(replace(e, carried_view=None) if e.carried_view is not None else e
                                 for e in entry)
            entry = after

    def _loop_views(self, loop: For) -> tuple[dict[tuple, set], dict[Value, bool]]:
        """Per loop, once per plan (an outer loop's fixed point walks an inner loop again):
        every view the body uses per (object, kind), and the views found per-iteration blocks."""
        found = self._views.get(loop)
        if found is None:
            views: dict[tuple, set] = {}
            for nested in loop.body.walk():
                for e in direct_effects(nested):
                    views.setdefault((e.obj, e.kind), set()).add(e.via)
            found = self._views[loop] = (views, {})
        return found

    # -- SPMD regions -----------------------------------------------------------
    def spmd(self, region: Region, outer: State, inner: State) -> tuple[Fence, State]:
        """Fences needed before the SPMD region, and the state at its end.

        `outer` holds what was pending before the region (conflicts with it
        count), `inner` what the region itself accessed (conflicts with it
        are the programmer's business).
        """
        needed, outer, inner = self._spmd(region, outer, inner)
        return needed, outer | inner

    def _spmd(self, region: Region, outer: State, inner: State) -> tuple[Fence, State, State]:
        needed = Fence.NONE
        for inst in region.instructions:
            if isinstance(inst, Barrier):
                outer, inner = clear(outer, fences_of(inst)), clear(inner, fences_of(inst))
            elif isinstance(inst, If):
                n1, o1, i1 = self._spmd(inst.then, outer, inner)
                n2, o2, i2 = self._spmd(inst.otherwise, outer, inner)
                needed, outer, inner = needed | n1 | n2, o1 | o2, i1 | i2
            elif isinstance(inst, For):
                while True:
                    n, o, i = self._spmd(inst.body, outer, inner)
                    if o <= outer and i <= inner:
                        needed |= n
                        break
                    outer, inner = outer | o, inner | i
            else:
                accesses = self.effects(inst)
                found = self.needed(outer, accesses)
                if found:  # (most need none: a Flag's `|` is slow)
                    needed |= found
                inner = inner | frozenset(accesses)
        return needed, outer, inner

    def needed(self, pending: Iterable[MemoryEffect], accesses: Iterable[MemoryEffect]) -> Fence:
        """Fences that order every conflicting (pending, access) pair."""
        fences = Fence.NONE
        accesses = list(accesses)
        for p in pending:
            for a in accesses:
                if self.conflict(p, a):
                    fences |= fence_for(p.space) | fence_for(a.space)
        return fences


def _require(plan: Plan, inst: Instruction, fences: Fence, state: State) -> State:
    """Plan a barrier before `inst` and return the state after it."""
    if not fences:
        return state
    plan[inst] = plan.get(inst, Fence.NONE) | fences
    return clear(state, fences)


def _merge(plan: Plan, more: Plan) -> None:
    for inst, fences in more.items():
        plan[inst] = plan.get(inst, Fence.NONE) | fences


def apply_plan(plan: Plan) -> list[Barrier]:
    """Insert the planned barriers; a barrier right before the spot is widened instead.

    Returns the barriers inserted or widened.
    """
    touched: list[Barrier] = []
    for inst, fences in plan.items():
        region = inst.parent
        assert region is not None, "planned barrier before a detached instruction"
        position = region.instructions.index(inst)
        before = region.instructions[position - 1] if position else None
        if isinstance(before, Barrier):
            before.global_fence |= bool(fences & Fence.GLOBAL)
            before.local_fence |= bool(fences & Fence.LOCAL)
            touched.append(before)
        else:
            barrier = Barrier(bool(fences & Fence.GLOBAL), bool(fences & Fence.LOCAL), span=inst.span)
            region.insert(position, barrier)
            touched.append(barrier)
    return touched


def insert_barriers(fn: Function, options: "PassOptions | None" = None) -> None:
    """The pass: plan on the collective level, then insert."""
    apply_plan(BarrierPlanner().plan(fn))
