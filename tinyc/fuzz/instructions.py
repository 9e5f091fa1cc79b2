"""The generator's table, taken from the instruction classes.

Every emitter registers with the class it writes (`@generates`, registry.py),
in the emit_*.py module of its family; the table lists the entries in the
order they register. That order decides what a seed draws: the modules are
imported as the campaigns of docs/fuzzing.md had their entries (scalars,
memory, control, collectives, subgroups), the newest language's last, so
their seeds still give the same programs. Instructions written only as part of
another (a `yield` ends the regions of for, if and cooperative_matrix_apply;
coopmatrix loads, products and stores make up the chain a `parallel` region
writes) need no entry of their own; tests/test_fuzz.py checks that generated
programs use every instruction class.
"""

from __future__ import annotations

from tinyc.fuzz import emit_scalars  # noqa: F401,I001  (each registers its emitters, in this order)
from tinyc.fuzz import emit_memory  # noqa: F401
from tinyc.fuzz import emit_control  # noqa: F401
from tinyc.fuzz import emit_collectives  # noqa: F401
from tinyc.fuzz import emit_subgroup  # noqa: F401
from tinyc.fuzz import emit_newest  # noqa: F401
from tinyc.fuzz.registry import ENTRIES, MAX_COLLECTIVES, Entry

TABLE: list[Entry] = list(ENTRIES)

__all__ = ["MAX_COLLECTIVES", "TABLE", "Entry"]
