"""Which lowering turns each collective class into SPMD code: registered by class.

A lowering module decorates its function with `@lowers(Class)`, as codegen's
emitters do with `@emits`; lower-collectives dispatches on the class through
LOWERINGS, and tests/test_instruction_definitions.py checks that every
collective class has one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TypeVar

if TYPE_CHECKING:
    from tinyc.ir.core import Instruction
    from tinyc.passes.lowering.lowering_builder import LoweringBuilder
    from tinyc.passes.lowering.context import LoweringContext

Lowering = Callable[["LoweringContext", "LoweringBuilder", "Instruction"], None]
LOWERINGS: dict[type, Lowering] = {}
"""The lowering of each collective class (filled by the lowering modules on import)."""

L = TypeVar("L", bound=Callable)


def lowers(*classes: type) -> Callable[[L], L]:
    """Register the decorated function as the lowering of `classes`."""

    def register(fn: L) -> L:
        for cls in classes:
            LOWERINGS[cls] = fn
        return fn

    return register
