"""Which SPIR-V values are live across a barrier: the pattern the CPU runtime miscompiles.

The text of `spirv-dis` lists blocks in dominance order, so a value defined above an
OpControlBarrier and named below it is live across it (docs/decisions.md, "Local memory
and barriers", "Builtins and barriers").
"""

from __future__ import annotations

import re
from typing import Callable

Definition = Callable[[str, str, str, str], bool]
"""(result id, opcode, result type, first operand or "") -> whether the value is one to watch."""


def values_across_barriers(asm: str, watched: Definition) -> list[str]:
    """Watched ids defined before an OpControlBarrier and used after it, per function."""
    defined: set[str] = set()
    stale: set[str] = set()
    found: list[str] = []
    for line in asm.splitlines():
        if "OpControlBarrier" in line:
            stale |= defined
            continue
        if "OpFunctionEnd" in line:
            defined, stale = set(), set()
            continue
        used = re.findall(r"%\w+", line.split("=", 1)[1] if " = " in line else line)
        found += [v for v in used if v in stale]
        result = re.match(r"\s*(%\w+) = Op(\w+) (%\w+)(?: (%\w+))?", line)
        if result and watched(result[1], result[2], result[3], result[4] or ""):
            defined.add(result[1])
    return found
