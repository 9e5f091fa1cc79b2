"""check-shapes (bounds-checked variant only): a collective runs only if its operands' sizes agree.

Before each collective with a shape rule (`size_rules()`), the pass computes
the `?` sizes the rule relates with `size`, compares them with `cmp.eq` and
moves the collective into `if %ok { ... }` (`%ok` is `true` when all sizes
are static; codegen adds that every memref operand is a valid view). The
`if` carries a
`BoundsCheck` (a Python attribute, not IR text) from which codegen records
the first rule that fails in the else branch: its location, the two sizes,
the work-group. The lowered code of such a collective (marked with
`lowered_from` by lower-collectives) is then in bounds by construction and
is not checked access by access, which keeps the checked variant within 2x
of the plain kernel on the benchmark suite.

Every other memory access and view is checked in codegen
(tinyc/spirv/codegen/bounds.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tinyc.ir.builder import Builder
from tinyc.ir.core import Function, Instruction, Value, erase
from tinyc.ir.instructions import (
    Alloca, ArithBinaryOp, BlasInstruction, CmpCond, CoopMatrixLoad, CoopMatrixStore, Expand, For,
    Foreach, Fuse, If, Load, Store, SubgroupBroadcast, Subview, Yield,
)
from tinyc.ir.instructions.collective import SizeRule
from tinyc.ir.types import DYNAMIC, MemrefType, bool_
from tinyc.passes.lower_collectives import collective_region_instructions

if TYPE_CHECKING:
    from tinyc.passes import PassOptions


@dataclass
class RuleCheck:
    """One rule of a collective checked at run time: its sizes and whether they agree."""

    rule: SizeRule
    equal: Value  # bool
    left: Value  # index
    right: Value  # index


@dataclass
class BoundsCheck:
    """What the `if` around a checked collective must record when a rule fails."""

    collective: Instruction
    rules: list[RuleCheck]


def check_shapes(fn: Function, options: "PassOptions | None" = None) -> None:
    """Guard each collective with a `?` size in its shape rule (check_bounds only), and
    decide whether the checks may run as a dry run (`fn.bounds_dry`, see below)."""
    if not getattr(options, "check_bounds", False):
        return
    fn.bounds_dry = not addressing_reads_own_writes(fn)
    for inst in list(collective_region_instructions(fn.body)):
        if not isinstance(inst, BlasInstruction):
            continue
        rules = inst.size_rules()
        if rules is not None:  # (guarded even when static: codegen adds its operands' validity)
            _guard(inst, [r for r in rules if _dynamic(inst, r)])


def _dynamic(inst: Instruction, rule: SizeRule) -> bool:
    (i, m), (j, n) = rule.left, rule.right
    return DYNAMIC in (inst.operands[i].type.shape[m], inst.operands[j].type.shape[n])


def _guard(inst: Instruction, rules: list[SizeRule]) -> None:
    b = Builder.before(inst)
    checks: list[RuleCheck] = []
    ok: Value | None = None if rules else b.constant(True, bool_)
    for rule in rules:
        (i, m), (j, n) = rule.left, rule.right
        left, right = b.size(inst.operands[i], m), b.size(inst.operands[j], n)
        equal = b.cmp(CmpCond.EQ, left, right)
        checks.append(RuleCheck(rule, equal, left, right))
        ok = equal if ok is None else b.arith(ArithBinaryOp.AND, ok, equal)
    region = inst.parent
    guard = If(ok, [], span=inst.span)
    b.insert(guard)
    erase(inst)
    guard.then.append(inst)
    guard.bounds_check = BoundsCheck(inst, checks)
    del region


# ---------------------------------------------------------------- dry runs

def addressing_reads_own_writes(fn: Function) -> bool:
    """Can an index, a view's offset or size, a loop bound or a branch depend on memory
    this kernel writes (an output argument or local memory)?

    If not, the accesses of a run do not depend on what the kernel stores, so
    the checks can run first as a *dry run* that stores nothing (the checked
    variant with its global stores left out, whose arithmetic the device
    compiler then drops), and the plain kernel runs after it only if no
    violation was found: no snapshot of the outputs is needed, and no output
    is touched when a check fails. Else the checked kernel runs for real on
    the outputs, which are restored from snapshots on a violation
    (tinyc/runtime/bounds.py). A conservative taint analysis: every result
    of an instruction with a tainted operand is tainted.
    """
    roots: dict[Value, Value] = {a: a for a in fn.args}
    written: set[Value] = set()
    for inst in fn.walk():
        if isinstance(inst, Alloca):
            roots[inst.result] = inst.result
            written.add(inst.result)  # local memory: written and read by the kernel itself
        elif isinstance(inst, (Subview, Expand, Fuse)) or (isinstance(inst, Load) and isinstance(
                inst.result.type, MemrefType)):
            if inst.operands[0] in roots:
                roots[inst.result] = roots[inst.operands[0]]
        target = inst.output if isinstance(inst, BlasInstruction) else inst.tensor if isinstance(
            inst, Store) else inst.operands[1] if isinstance(inst, CoopMatrixStore) else None
        if target is not None and target in roots:
            written.add(roots[target])
    tainted: set[Value] = set()
    changed = True
    while changed:
        changed = False
        for inst in fn.walk():
            if isinstance(inst, (Load, CoopMatrixLoad)) and roots.get(inst.operands[0]) in written:
                fresh = [r for r in inst.results if r not in tainted]
            elif any(v in tainted for v in inst.operands):
                fresh = [r for r in inst.results if r not in tainted]
                for region in inst.regions:  # loop-carried values and loop variables
                    fresh += [a for a in region.args if a not in tainted]
            else:
                fresh = []
            if isinstance(inst, Yield) and any(v in tainted for v in inst.operands):
                owner = inst.parent.parent if inst.parent is not None else None
                if isinstance(owner, (For, If)):
                    fresh += [r for r in owner.results if r not in tainted]
                    if isinstance(owner, For):
                        fresh += [a for a in owner.carried if a not in tainted]
            if fresh:
                tainted.update(fresh)
                changed = True
    return any(v in tainted for inst in fn.walk() for v in _addressing_operands(inst))


def _addressing_operands(inst: Instruction) -> list[Value]:
    """The operands that decide where memory is accessed or which code runs."""
    if isinstance(inst, (Load, Store)):
        return list(inst.indices)
    if isinstance(inst, (Subview, Expand)):
        return inst.operands[1:]
    if isinstance(inst, (CoopMatrixLoad, CoopMatrixStore)):
        return inst.operands[-2:]
    if isinstance(inst, (For, Foreach)):
        return [v for v in inst.operands[:3 if isinstance(inst, For) and inst.has_step else
                                          2 if isinstance(inst, For) else len(inst.operands)]]
    if isinstance(inst, If):
        return [inst.cond]
    if isinstance(inst, SubgroupBroadcast):
        return [inst.operands[1]]
    return []
