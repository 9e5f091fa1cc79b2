"""The generator's table: one entry per instruction kind.

An entry names the instruction, says where it may appear (`collective`,
`spmd` or `parallel` regions, or `any`) and how often, and writes one
instance with the `Writer`'s helpers, returning False when nothing suitable
is in scope (the writer then tries another entry). A new instruction plugs
in with one `Entry(...)` line in `TABLE` and its emitter function (in the
emit_*.py module of its family).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tinyc.fuzz.emit_collectives import (
    emit_axpby, emit_cumsum, emit_gemm, emit_gemv, emit_ger, emit_hadamard, emit_sum,
)
from tinyc.fuzz.emit_control import (
    emit_barrier, emit_broadcast, emit_for, emit_foreach, emit_if, emit_parallel, emit_subgroup_op,
)
from tinyc.fuzz.emit_memory import (
    emit_alloca, emit_expand, emit_fuse, emit_lifetime_stop, emit_load, emit_size, emit_store,
    emit_subview,
)
from tinyc.fuzz.emit_scalars import (
    emit_arith, emit_builtin, emit_cast, emit_cmp, emit_complex_parts, emit_constant, emit_logic,
    emit_math,
)
from tinyc.fuzz.generator import Writer
from tinyc.fuzz.program import LANE, SUBGROUP


COLLECTIVES = frozenset({"gemm", "gemv", "ger", "axpby", "sum", "cumsum", "hadamard_product"})
MAX_COLLECTIVES = 3
"""Per kernel: lowered collectives dominate the device compiler's time (seconds for a
kernel with several gemms), so a campaign runs more, smaller programs."""


@dataclass
class Entry:
    name: str
    emit: Callable[[Writer], bool | None]
    weight: float = 1.0
    where: str = "any"  # "any", "collective", "spmd", "parallel"
    level: int = LANE  # the least uniform control flow it may appear in

    def allowed(self, w: Writer) -> bool:
        if w.region.level < self.level:
            return False
        if self.name in COLLECTIVES and w.collectives >= MAX_COLLECTIVES:
            return False
        if self.where == "collective":
            return not w.spmd
        if self.where == "spmd":
            return w.spmd
        if self.where == "parallel":
            return w.in_parallel()
        return True


# ---------------------------------------------------------------- the table

TABLE: list[Entry] = [
    Entry("constant", emit_constant, 1.0),
    Entry("arith", emit_arith, 3.0),
    Entry("arith.bool", emit_logic, 0.5),
    Entry("arith.complex", emit_complex_parts, 0.4),
    Entry("cast", emit_cast, 1.2),
    Entry("cmp", emit_cmp, 0.8),
    Entry("math", emit_math, 0.5),
    Entry("builtin", emit_builtin, 0.8),
    Entry("load", emit_load, 2.0),
    Entry("store", emit_store, 2.0),
    Entry("size", emit_size, 0.5),
    Entry("subview", emit_subview, 1.0),
    Entry("expand", emit_expand, 0.5),
    Entry("fuse", emit_fuse, 0.5),
    Entry("alloca", emit_alloca, 0.4, "collective"),
    Entry("lifetime_stop", emit_lifetime_stop, 0.6, "collective"),
    Entry("for", emit_for, 1.0),
    Entry("if", emit_if, 1.0),
    Entry("foreach", emit_foreach, 1.0, "collective"),
    Entry("parallel", emit_parallel, 1.0, "collective"),
    Entry("barrier", emit_barrier, 0.3),
    Entry("gemm", emit_gemm, 1.0, "collective"),
    Entry("gemv", emit_gemv, 0.8, "collective"),
    Entry("ger", emit_ger, 0.6, "collective"),
    Entry("axpby", emit_axpby, 0.8, "collective"),
    Entry("sum", emit_sum, 0.6, "collective"),
    Entry("cumsum", emit_cumsum, 0.6, "collective"),
    Entry("hadamard_product", emit_hadamard, 0.6, "collective"),
    Entry("subgroup_op", emit_subgroup_op, 0.8, "parallel", SUBGROUP),
    Entry("subgroup_broadcast", emit_broadcast, 0.5, "parallel", SUBGROUP),
]
