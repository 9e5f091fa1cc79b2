"""check-shapes (bounds-checked variant only): a collective runs only if its operands' sizes agree.

Before each collective with a shape rule (`addressing().rules`), the pass computes
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

from tinyc.analysis.own_writes import addressing_reads_own_writes
from tinyc.ir.insertion import Builder
from tinyc.ir.core import Function, Instruction, Value, erase
from tinyc.ir.instructions import ArithBinaryOp, CmpCond, If
from tinyc.ir.addressing import SizeRule
from tinyc.ir.types import DYNAMIC, bool_
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
    decide whether the checks may run as a dry run (`fn.bounds_dry`:
    tinyc/analysis/own_writes.py)."""
    if not getattr(options, "check_bounds", False):
        return
    fn.bounds_dry = not addressing_reads_own_writes(fn)
    for inst in list(collective_region_instructions(fn.body)):
        rules = inst.addressing().rules  # (collectives)
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
