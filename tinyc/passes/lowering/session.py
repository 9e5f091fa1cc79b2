"""Per-pass state of the lowerings: unique value names and constant tidying."""

from __future__ import annotations

import re

from tinyc.ir.core import Function, Instruction, Kind, Region, Value, erase
from tinyc.ir.instructions import Constant
from tinyc.ir.types import ScalarType, index


class Session:
    """State shared by the builders of one pass over one function.

    Hands out value names that no other value of the function uses, and
    remembers the constants the lowering made so `tidy` can merge them.
    """

    def __init__(self, fn: Function):
        self.fn = fn
        self.used: set[str] = {a.name for a in fn.args if a.name}
        for inst in fn.walk():
            if _is_hoisted_constant(inst):
                continue  # a sibling `parallel` may reuse its name
            self.used.update(r.name for r in inst.results if r.name)
            for region in inst.regions:
                self.used.update(a.name for a in region.args if a.name)
        self.constants: list[Constant] = []

    def fresh(self, hint: str) -> str:
        name, n = hint, 0
        while name in self.used:
            n += 1
            name = f"{hint}_{n}"
        self.used.add(name)
        return name

    def tidy(self) -> None:
        """Merge the lowering's constants per SPMD region, drop unused ones.

        Folding leaves many equal constants behind. A constant has no
        operands, so one copy at the top of the enclosing `parallel` or
        `foreach` body dominates every use there; index constants there are
        named `c<value>` (sibling regions may reuse a name).
        """
        canonical: dict[tuple, Constant] = {}
        merged: dict[int, Value] = {}  # id of a dropped copy's result -> the kept one's
        for inst in self.constants:
            home = _spmd_home(inst)
            if inst.parent is None or home is None:
                continue
            key = (id(home), inst.result.type, repr(inst.value))
            first = canonical.get(key)
            if first is None:
                canonical[key] = inst
                erase(inst)
                home.insert(sum(1 for c in canonical.values() if c.parent is home), inst)
                inst.result.name = self._constant_name(inst)
            else:
                merged[id(inst.result)] = first.result
                erase(inst)
        if merged:  # one walk for all copies (a copy's uses all lie in its home region)
            for user in self.fn.walk():
                if any(id(v) in merged for v in user.operands):
                    user.operands = [merged.get(id(v), v) for v in user.operands]
        used = {id(v) for i in self.fn.walk() for v in i.operands}
        made = {id(inst) for inst in self.constants}
        for inst in [*self.constants, *self.fn.walk()]:
            if isinstance(inst, Constant) and inst.parent is not None \
                    and id(inst.result) not in used \
                    and (id(inst) in made or inst.result.name is None):
                erase(inst)
        self.constants.clear()

    def adopt_constant(self, inst: Constant) -> None:
        """Let `tidy` merge and hoist a constant made by an earlier lowering."""
        if inst.result.name is None or _CONSTANT_NAME.fullmatch(inst.result.name):
            inst.result.name = None
            self.constants.append(inst)

    def _constant_name(self, inst: Constant) -> str | None:
        """`c16` for index, `c16_i32` for other integers; other constants stay numbered."""
        value, t = inst.value, inst.result.type
        if not isinstance(value, int) or isinstance(value, bool) or \
                not (isinstance(t, ScalarType) and t.is_int):
            return None
        name = f"c{value}" if value >= 0 else f"c_minus{-value}"
        if t is not index:
            name += f"_{t}"
        return None if name in self.used else name


_CONSTANT_NAME = re.compile(r"c(_minus)?\d+(_i\d+)?(_\d+)?")


def _is_hoisted_constant(inst: Instruction) -> bool:
    """A `c<value>` constant directly in a `parallel` or `foreach` body, as `tidy` leaves them."""
    region = inst.parent
    return (isinstance(inst, Constant) and inst.result.name is not None
            and _CONSTANT_NAME.fullmatch(inst.result.name) is not None
            and region is not None and _opens_spmd(region.parent))


def _spmd_home(inst: Instruction) -> Region | None:
    """The body of the innermost `parallel` or `foreach` around `inst`."""
    region = inst.parent
    while region is not None:
        owner = region.parent
        if _opens_spmd(owner):
            return region
        if not isinstance(owner, Instruction):
            return None
        region = owner.parent
    return None


def _opens_spmd(owner: object) -> bool:
    """A `parallel` or `foreach` (an instruction whose regions are SPMD)."""
    return isinstance(owner, Instruction) and owner.region_kind is Kind.SPMD


def constant_value(v: Value) -> bool | int | float | complex | None:
    """The value of a `constant` result, None for anything computed at run time."""
    owner = v.owner
    return owner.value if isinstance(owner, Constant) else None
