"""Instruction dispatch: one emit function per IR instruction class.

Emitter modules register with `@emits(Class)`; `emit_region` walks a region
and returns what its closing `yield` hands back (lowered values), so `for`
and `if` can build their Phis.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from tinyc.ir.core import Instruction, Region
from tinyc.ir.instructions import Yield
from tinyc.spirv.codegen.context import CodegenError, Ctx, Lowered

Emitter = Callable[[Ctx, Instruction], None]
EMITTERS: dict[type, Emitter] = {}
E = TypeVar("E", bound=Emitter)


def emits(*classes: type) -> Callable[[E], E]:
    """Register the decorated function as the emitter of `classes`."""

    def register(fn: E) -> E:
        for cls in classes:
            EMITTERS[cls] = fn
        return fn

    return register


def emit(ctx: Ctx, inst: Instruction) -> None:
    for cls in type(inst).__mro__:
        fn = EMITTERS.get(cls)
        if fn is not None:
            outer, ctx.current = ctx.current, inst
            fn(ctx, inst)
            ctx.current = outer
            return
    raise CodegenError(f"no SPIR-V lowering for '{inst.opname}' ({type(inst).__name__}); "
                       "it should have been lowered by a pass")


def emit_region(ctx: Ctx, region: Region) -> list[Lowered]:
    """Emit every instruction; the values of the final `yield`, if any."""
    for inst in region.instructions:
        if isinstance(inst, Yield):
            return [ctx[v] for v in inst.operands]
        emit(ctx, inst)
    return []
