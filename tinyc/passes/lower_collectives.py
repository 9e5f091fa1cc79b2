"""Placeholder until the pass lands (being written now)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinyc.ir.core import Function

if TYPE_CHECKING:
    from tinyc.passes import PassOptions


def lower_collectives(fn: Function, options: "PassOptions") -> None:
    """Not yet implemented: leaves the function unchanged."""
