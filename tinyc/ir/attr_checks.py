"""Device-independent rules for attribute dictionaries.

Each function returns the problems it finds as message fragments; the caller
reports them at the span it has (the argument's type, the function, the
instruction), so attributes need no spans of their own.

The spec leaves the exact limits to the device; at check time tinyc uses the
union of what the devices it targets can do (see tinyc/ir/verifier.py):
subgroup sizes 4, 8, 16, 32, 64 and at most 8192 work-items per work-group.
Device-specific limits are checked again when a device is chosen.
"""

from __future__ import annotations

from typing import Any, Iterable

from tinyc.diagnostics import did_you_mean
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType, ScalarType, Type

SUBGROUP_SIZES: tuple[int, ...] = (4, 8, 16, 32, 64)
"""Subgroup sizes some target device supports (Intel GPUs: 8/16/32; the CPU runtime: 4..64)."""

MAX_WORK_GROUP_SIZE: int = 8192
"""The largest work-group any target allows (the CPU runtime); GPUs allow less."""

PARAMETER_ATTRIBUTES = ("alignment", "shape_gcd", "stride_gcd")
FUNCTION_ATTRIBUTES = ("subgroup_size", "work_group_size")
ALLOCA_ATTRIBUTES = ("alignment",)
COMPILER_ATTRIBUTES = frozenset({"local_memory_size", "local_memory_alignment", "stack_offset"})
"""The local-memory layout pass's own attributes: accepted without being advertised,
so lowered IR (as `tinyc compile --emit lowered` prints it) checks again."""
FOR_ATTRIBUTES = ("unroll",)


def is_int_attr(value: Any) -> bool:
    """An integer-attribute (Python's bool is an int; it is not one here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def attr_text(value: Any) -> str:
    """An attribute value as the source spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(attr_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={attr_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def unknown_names(attrs: dict[str, Any], known: tuple[str, ...], where: str) -> list[str]:
    """`unknown attribute 'alignmnt' on <where> (did you mean 'alignment'?)`."""
    return [f"unknown attribute '{name}' on {where}{did_you_mean(name, known)}; "
            f"allowed: {', '.join(known)}" for name in attrs
            if name not in known and name not in COMPILER_ATTRIBUTES]


def alignment_problems(value: Any, element: ScalarType) -> list[str]:
    """Alignment in bytes: a positive power of two and a multiple of the element size."""
    if not is_int_attr(value):
        return [f"alignment must be an integer, got {attr_text(value)}"]
    if value < 1 or value & (value - 1):
        return [f"alignment must be a positive power of two, got {value}"]
    if value % element.size:
        return [f"alignment {value} is not a multiple of the size of the element type "
                f"{element} ({element.size} bytes)"]
    return []


def _gcd_problems(name: str, value: Any, known: tuple[int, ...], what: str,
                  extra_ok: bool = False) -> list[str]:
    """shape_gcd / stride_gcd: positive divisors, at most one per mode, true where known.

    `extra_ok` (the newest language): entries beyond the order are ignored, as the
    reference compiler does (its own examples write them).
    """
    if not isinstance(value, (list, tuple)) or not all(is_int_attr(v) for v in value):
        return [f"{name} must be an array of integers, got {attr_text(value)}"]
    if len(value) > len(known) and not extra_ok:
        return [f"{name} has {len(value)} entries but the memref has order {len(known)}"]
    problems = []
    for mode, (d, s) in enumerate(zip(value, known)):
        if d < 1:
            problems.append(f"{name} entry {d} for mode {mode} must be positive")
        elif s != DYNAMIC and s % d:
            problems.append(f"{name} entry {d} does not divide the {what} {s} of mode {mode}")
    return problems


def parameter_problems(t: Type, attrs: dict[str, Any], extra_gcd_ok: bool = False) -> list[str]:
    """Attributes of a function parameter (spec: parameter attributes); `extra_gcd_ok`
    as in `_gcd_problems`."""
    if not attrs:
        return []
    memref = t.memref if isinstance(t, GroupType) else t
    if not isinstance(memref, MemrefType):
        return [f"only memref and group parameters take attributes, not {t}"]
    problems = unknown_names(attrs, PARAMETER_ATTRIBUTES, "a parameter")
    if "alignment" in attrs:
        problems += alignment_problems(attrs["alignment"], memref.element)
    if "shape_gcd" in attrs:
        problems += _gcd_problems("shape_gcd", attrs["shape_gcd"], memref.shape, "size",
                                  extra_gcd_ok)
    if "stride_gcd" in attrs:
        problems += _gcd_problems("stride_gcd", attrs["stride_gcd"], memref.stride, "stride",
                                  extra_gcd_ok)
    return problems


def function_problems(attrs: dict[str, Any]) -> list[str]:
    """subgroup_size and work_group_size of a function (spec: functions)."""
    problems = unknown_names(attrs, FUNCTION_ATTRIBUTES, "a function")
    sgs = attrs.get("subgroup_size")
    if "subgroup_size" in attrs:
        if not is_int_attr(sgs):
            problems.append(f"subgroup_size must be an integer, got {attr_text(sgs)}")
            sgs = None
        elif sgs not in SUBGROUP_SIZES:
            problems.append(f"subgroup_size {sgs} is not supported by any target device; "
                            f"use one of {', '.join(map(str, SUBGROUP_SIZES))}")
            sgs = None
    if "work_group_size" in attrs:
        problems += _work_group_problems(attrs["work_group_size"], sgs)
    return problems


def _work_group_problems(wgs: Any, sgs: int | None) -> list[str]:
    if (not isinstance(wgs, (list, tuple)) or len(wgs) != 2
            or not all(is_int_attr(v) for v in wgs)):
        return [f"work_group_size must be an array of 2 integers, got {attr_text(wgs)}"]
    rows, cols = wgs
    if rows < 1 or cols < 1:
        return [f"work_group_size entries must be positive, got {attr_text(wgs)}"]
    problems = []
    if sgs is not None and rows % sgs:
        problems.append(f"the first work_group_size mode ({rows}) must be a multiple of the "
                        f"subgroup_size ({sgs})")
    elif sgs is None and not any(rows % s == 0 for s in SUBGROUP_SIZES):
        problems.append(f"the first work_group_size mode ({rows}) must be a multiple of a "
                        f"supported subgroup size ({', '.join(map(str, SUBGROUP_SIZES))})")
    if rows * cols > MAX_WORK_GROUP_SIZE:
        problems.append(f"work_group_size {rows}x{cols} has {rows * cols} work-items; "
                        f"the maximum is {MAX_WORK_GROUP_SIZE}")
    return problems


def bool_attr_problems(attrs: dict[str, Any], names: Iterable[str]) -> list[str]:
    """Boolean attributes such as `unroll`."""
    return [f"{name} must be true or false, got {attr_text(attrs[name])}"
            for name in names if name in attrs and not isinstance(attrs[name], bool)]
