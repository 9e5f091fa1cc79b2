"""Python arguments of the builder's methods turned into the IR's: flags and enums given by
name ("t", "atomic_add", ".device"), memref operands checked, results handed back."""

from __future__ import annotations

from typing import Any

from tinyc.ir import instructions as I
from tinyc.ir.core import Instruction, Value
from tinyc.ir.types import MemrefType

FLAGS = {None: I.StoreFlag.NONE, "": I.StoreFlag.NONE, "atomic": I.StoreFlag.ATOMIC,
          "atomic_add": I.StoreFlag.ATOMIC_ADD}
CHECKED = {None: I.CheckedFlag.NONE, "": I.CheckedFlag.NONE, "rows": I.CheckedFlag.ROWS,
            "cols": I.CheckedFlag.COLS, "both": I.CheckedFlag.BOTH}


def transposed(value: Any, what: str) -> bool:
    """`True`/"t"/"T" for a transpose, `False`/"n"/"N" (or None) for none."""
    if value in (None, False, "n", "N", ".n"):
        return False
    if value in (True, "t", "T", ".t"):
        return True
    raise ValueError(f"{what} must be a bool or 't'/'n', got {value!r}")


def enum_of(enum: type, value: Any, what: str):
    if isinstance(value, enum):
        return value
    try:
        return enum(value)
    except ValueError:
        choices = ", ".join(repr(e.value) for e in enum)
        raise ValueError(f"unknown {what} {value!r}; choose one of {choices}") from None


def memref_of(v: Value, what: str) -> MemrefType:
    if not isinstance(v, Value):
        raise TypeError(f"{what} must be a value, got {v!r}")
    if not isinstance(v.type, MemrefType):
        raise TypeError(f"{what} must be a memref, got {v.type}")
    return v.type


def ordering(scope: Any, semantics: Any) -> tuple[I.MemoryScope, I.MemorySemantics]:
    """Scope and semantics of an atomic: the enums, or their names with or without the dot
    ("device", ".acquire"); None for the defaults (work_group, relaxed)."""
    def dotted(value: Any) -> Any:
        return f".{value}" if isinstance(value, str) and not value.startswith(".") else value

    return (enum_of(I.MemoryScope, dotted(scope or I.MemoryScope.WORK_GROUP), "memory scope"),
            enum_of(I.MemorySemantics, dotted(semantics or I.MemorySemantics.RELAXED), "memory semantics"))


def store_flag(value: Any) -> I.StoreFlag:
    if isinstance(value, str) and value.startswith("."):
        value = value[1:]
    return enum_of(I.StoreFlag, FLAGS.get(value, value), "store flag")


def checked_flag(value: Any) -> I.CheckedFlag:
    return enum_of(I.CheckedFlag, CHECKED.get(value, value), "checked flag")


def results_of(inst: Instruction):
    if not inst.results:
        return None
    return inst.results[0] if len(inst.results) == 1 else list(inst.results)
