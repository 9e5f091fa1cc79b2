"""The schedule knobs of every collective, gathered from the instruction classes.

Each collective class declares its knobs (ranges, the tuner's search space,
what changes the order of its additions) in its body, built from the pieces
of tinyc/ir/knobs.py; nothing here is kept by hand. These tables serve the
schedule files (`--schedule`, keyed by opname), the tuner and
docs/schedules.md.
"""

from __future__ import annotations

from typing import Any

from tinyc.ir.attr_checks import attr_text
from tinyc.ir.core import Instruction
from tinyc.ir.instructions import instruction_classes
from tinyc.ir.knobs import FUNCTION_KNOBS, Knob, knob_problems as _problems


def scheduled_classes() -> dict[str, type[Instruction]]:
    """The instruction classes with schedule knobs, by opname (the collectives)."""
    return {cls.opname: cls for cls in instruction_classes() if cls.knobs}


COLLECTIVE_KNOBS: dict[str, dict[str, Knob]] = {
    opname: cls.knobs for opname, cls in scheduled_classes().items()}
"""The knobs of each collective, by opname (derived from the classes, in their order)."""

ORDER_CHANGING: dict[str, tuple[str, ...]] = {
    opname: cls.order_changing for opname, cls in scheduled_classes().items() if cls.order_changing}
"""Knobs that change the order of floating-point additions, by opname (derived)."""


def knob_problems(opname: str, attrs: dict[str, Any]) -> list[str]:
    """Device-independent problems of schedule attributes given for collective `opname`."""
    return _problems(opname, COLLECTIVE_KNOBS.get(opname, {}), attrs)


def markdown_table() -> str:
    """The knob reference of docs/schedules.md (tests/schedule/test_docs.py keeps them equal)."""
    rows = ["| collective | knob | range | tuner tries | what it sets |", "|---|---|---|---|---|"]
    for opname, knobs in COLLECTIVE_KNOBS.items():
        for knob in knobs.values():
            tries = ", ".join(attr_text(v) for v in knob.space)
            if len(knob.space) > 8:
                tries = f"{len(knob.space)} values"
            rows.append(f"| {opname} | `{knob.name}` | {knob.range.describe()} | {tries} "
                        f"| {knob.doc} |")
    for knob in FUNCTION_KNOBS.values():
        tries = ", ".join(attr_text(v) for v in knob.space) or "[S, 1] (CPU)"
        rows.append(f"| (function) | `{knob.name}` | {knob.range.describe()} | {tries} "
                    f"| {knob.doc} |")
    return "\n".join(rows)
