"""Schedules kept apart from the source: `tinyc.compile(src, schedule={...})`, `--schedule s.json`.

A schedule is keyed by kernel, then by function knob or instruction:

    {"gemm_nn": {"subgroup_size": 8, "work_group_size": [8, 1],
                 "gemm": {"tile": [2, 6], "k_unroll": 1},        # every gemm of the kernel
                 "gemm#1": {"stage": true}}}                      # the second one (from 0)

An instruction is named by its opname, alone (all of them in the kernel) or
with `#i`, its position among the kernel's collectives of that opname in
source order. `"*"` as a kernel name applies to every kernel. The checks
here need no device; `verify-schedule` (passes) checks the fit on the device.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tinyc.diagnostics import CompilationError, Diagnostic, did_you_mean
from tinyc.ir.attr_checks import function_problems
from tinyc.ir.core import Function, Instruction, Kind, Region
from tinyc.ir.instructions import BlasInstruction
from tinyc.ir.knobs import FUNCTION_KNOBS
from tinyc.schedule.knobs import COLLECTIVE_KNOBS, knob_problems

ALL_KERNELS = "*"

KernelSchedule = dict[str, Any]
"""{"subgroup_size": 8, "gemm": {...}, "gemm#0": {...}}"""


def scheduled_instructions(fn: Function) -> list[tuple[str, BlasInstruction]]:
    """The collectives a schedule can name, with their keys (`gemm#0`, …), in source order."""
    counts: dict[str, int] = {}
    out = []
    for inst in _collective_walk(fn.body):
        if inst.knobs:
            i = counts.get(inst.opname, 0)
            counts[inst.opname] = i + 1
            out.append((f"{inst.opname}#{i}", inst))
    return out


def _collective_walk(region: Region) -> Iterator[Instruction]:
    for inst in region.instructions:
        yield inst
        if inst.region_kind is not Kind.SPMD:  # not into parallel or foreach bodies
            for nested in inst.regions:
                yield from _collective_walk(nested)


def instruction_knobs(entry: KernelSchedule, key: str) -> dict[str, Any]:
    """The knobs an entry gives instruction `key` (`gemm#1`): `gemm`, then `gemm#1` over it."""
    opname = key.split("#")[0]
    return {**entry.get(opname, {}), **entry.get(key, {})}


def function_knobs(entry: KernelSchedule) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k in FUNCTION_KNOBS}


def merge(*entries: KernelSchedule | None) -> KernelSchedule:
    """Later entries win, knob by knob (instruction dictionaries merge too)."""
    out: KernelSchedule = {}
    for entry in entries:
        for key, value in (entry or {}).items():
            if isinstance(value, dict):
                out[key] = {**out.get(key, {}), **value}
            else:
                out[key] = value
    return out


class Schedule:
    """Validated knob values for the kernels of a program (no device needed)."""

    def __init__(self, entries: dict[str, KernelSchedule] | None = None, origin: str = "schedule"):
        self.origin = origin
        self.entries: dict[str, KernelSchedule] = {}
        problems = _problems(entries, origin)
        if problems:
            raise CompilationError([Diagnostic(p) for p in problems])
        for kernel, entry in (entries or {}).items():
            self.entries[kernel] = {k: (dict(v) if isinstance(v, dict) else _plain(v))
                                    for k, v in entry.items()}

    @classmethod
    def of(cls, value: "Schedule | dict | str | Path | None", origin: str = "schedule") -> "Schedule":
        """A Schedule from a Schedule, a dict, or a path to a JSON file."""
        if isinstance(value, Schedule):
            return value
        if isinstance(value, (str, Path)):
            return cls.load(value)
        return cls(value, origin)

    @classmethod
    def load(cls, path: str | Path) -> "Schedule":
        """Read a JSON schedule file; a malformed file is a CompilationError naming it."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CompilationError(Diagnostic(f"cannot read the schedule {path}: {exc}")) from None
        return cls(data, str(path))

    def __bool__(self) -> bool:
        return bool(self.entries)

    def for_kernel(self, name: str) -> KernelSchedule:
        """The `"*"` entry with the kernel's own entry over it."""
        return merge(self.entries.get(ALL_KERNELS), self.entries.get(name))

    def check_kernels(self, functions: list[Function]) -> None:
        """Every kernel and instruction key the schedule names must exist in the program."""
        names = [fn.name for fn in functions]
        problems = []
        for kernel, entry in self.entries.items():
            if kernel == ALL_KERNELS:
                continue
            if kernel not in names:
                problems.append(f"{self.origin}: no kernel '{kernel}'{did_you_mean(kernel, names)}; "
                                f"kernels: {', '.join(names) or '(none)'}")
                continue
            fn = functions[names.index(kernel)]
            keys = [key for key, _ in scheduled_instructions(fn)]
            opnames = {key.split("#")[0] for key in keys}
            for key in entry:
                if key in FUNCTION_KNOBS or key in keys or key in opnames:
                    continue
                known = sorted(opnames) + keys
                problems.append(f"{self.origin}: kernel '{kernel}' has no collective '{key}'"
                                f"{did_you_mean(key, known)}; it has: {', '.join(keys) or '(none)'}")
        if problems:
            raise CompilationError([Diagnostic(p) for p in problems])

    def to_json(self) -> str:
        return json.dumps(self.entries, indent=2, sort_keys=True)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _problems(entries: Any, origin: str) -> list[str]:
    """Shape and knob ranges of a schedule dictionary."""
    if entries is None:
        return []
    if not isinstance(entries, dict):
        return [f"{origin}: expected a dictionary of kernels, got {type(entries).__name__}"]
    problems = []
    for kernel, entry in entries.items():
        where = f"{origin}: kernel '{kernel}'"
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected a dictionary of knobs, got {type(entry).__name__}")
            continue
        fn_knobs = {k: _plain(v) for k, v in entry.items() if k in FUNCTION_KNOBS}
        problems += [f"{where}: {p}" for p in function_problems(fn_knobs)]
        for key, value in entry.items():
            if key in FUNCTION_KNOBS:
                continue
            opname, _, index = key.partition("#")
            if opname not in COLLECTIVE_KNOBS or (_ and not index.isdigit()):
                known = list(FUNCTION_KNOBS) + list(COLLECTIVE_KNOBS)
                problems.append(f"{where}: unknown key '{key}'{did_you_mean(opname, known)}; keys are "
                                f"function knobs ({', '.join(FUNCTION_KNOBS)}) or collectives "
                                f"('gemm', 'gemm#0', …)")
                continue
            if not isinstance(value, dict):
                problems.append(f"{where}: '{key}' expects a dictionary of knobs, got {value!r}")
                continue
            problems += [f"{where}, {key}: {p}" for p in
                         knob_problems(opname, {k: _plain(v) for k, v in value.items()})]
    return problems
