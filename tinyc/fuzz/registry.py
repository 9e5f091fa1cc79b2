"""The generator's entries, registered by instruction class (as codegen's emitters are).

An emitter function writes one instance of its instruction (`emit(w) -> bool`,
False when nothing suitable is in scope) and registers with
`@generates(Class, ...)`, saying where the instruction may appear (`any`,
`collective`, `spmd` or `parallel` regions), how often, how uniform its
control flow must be, and whether it belongs to the newest language only.
tinyc/fuzz/instructions.py makes the table; a completeness test checks that
generated programs hold every instruction class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, TypeVar

from tinyc.fuzz.program import LANE

if TYPE_CHECKING:
    from tinyc.fuzz.generator import Writer

MAX_COLLECTIVES = 3
"""Per kernel: lowered collectives dominate the device compiler's time (seconds for a
kernel with several gemms), so a campaign runs more, smaller programs."""


@dataclass
class Entry:
    """One way to write an instruction of class `cls`; `name` is the feature it counts as."""

    cls: type
    name: str
    emit: Callable[["Writer"], bool | None]
    weight: float = 1.0
    where: str = "any"  # "any", "collective", "spmd", "parallel"
    level: int = LANE  # the least uniform control flow it may appear in
    newest: bool = False  # the newest language only (the kernel is then a newest program)

    @property
    def collective(self) -> bool:
        """A BLAS-like collective (they count against MAX_COLLECTIVES)."""
        return bool(self.cls.knobs)

    def allowed(self, w: "Writer") -> bool:
        if self.newest and not w.newest:
            return False
        if w.region.level < self.level:
            return False
        if self.collective and w.collectives >= MAX_COLLECTIVES:
            return False
        if self.where == "collective":
            return not w.spmd
        if self.where == "spmd":
            return w.spmd
        if self.where == "parallel":
            return w.in_parallel()
        return True


ENTRIES: list[Entry] = []
"""Every entry, in the order of registration (filled by the emit_*.py modules on import)."""

E = TypeVar("E", bound=Callable)


def generates(cls: type, name: str, weight: float = 1.0, where: str = "any", level: int = LANE,
              newest: bool = False) -> Callable[[E], E]:
    """Register the decorated emitter as a way to write an instruction of class `cls`."""

    def register(emit: E) -> E:
        ENTRIES.append(Entry(cls, name, emit, weight, where, level, newest))
        return emit

    return register
