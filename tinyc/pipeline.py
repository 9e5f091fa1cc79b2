"""The compiler's pipeline from source text to SPIR-V bytes, readable top to bottom.

    text ─parse─▶ IR ─verify─▶ checked IR ─passes─▶ lowered IR
         ─codegen─▶ SPIR-V ─spirv-val─▶ bytes

The IR after each stage is kept as text for `Program.ir(stage)` and
`tinyc compile --emit`. `check_source` is the front half alone (parse,
verify), what `tinyc check` runs. A schedule (tinyc/schedule/) says how each
kernel is lowered: given by the caller, written in the source, or tuned (the
`tuned=` schedules, or a function giving them: tinyc/tune/); the lowered IR
shows the one used. Nothing here touches a device: `tinyc.compile`
(tinyc/compiler.py) adds the device, the tuner, the caches and the runtime, and
the tuner (below it) compiles its candidates with this.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from tinyc.ir.core import Program as IRProgram
    from tinyc.std import Std

STAGES = ("parsed", "checked", "lowered")


@dataclass
class CompileResult:
    """What the pipeline produced, before anything touches a device."""

    ir: IRProgram
    stages: dict[str, str]
    spirv: bytes
    kernels: dict[str, Any]  # name -> tinyc.signature.KernelInfo
    timings: dict[str, float] = field(default_factory=dict)
    source: str = ""
    name: str = "<string>"
    std: Any = None  # the program's language version (tinyc.std.Std)
    defines: dict[str, str] = field(default_factory=dict)  # preprocessor definitions from outside
    warnings: list = field(default_factory=list)  # Diagnostics of severity "warning"
    subgroup_size: int | None = None  # the options it was compiled with (for its variants)
    device_info: Any = None
    schedules: dict[str, dict] = field(default_factory=dict)  # kernel -> complete schedule used
    tuned: dict[str, dict] = field(default_factory=dict)      # kernel -> tuned knobs applied
    given: Any = None  # the caller's schedule (tinyc.schedule.Schedule), for the variants
    fp_contract: bool = False  # real adds of single-use products emitted as fma


def _timed(timings: dict[str, float], stage: str, step: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = step()
    timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - start
    return result


Tuned = Callable[["IRProgram"], dict] | dict | None
"""Tuned schedules by kernel, or a function of the checked program giving them."""


def check_source(source: str, name: str = "<string>",
                 timings: dict[str, float] | None = None, std: "Std | str | None" = None,
                 defines: dict[str, str] | None = None, warnings: Any = None) -> IRProgram:
    """Parse and verify; raises CompilationError with every independent error.

    `std` ("seed" or "newest") overrides the version the source declares or
    implies (tinyc.std); ValueError for another name. `defines` are
    preprocessor definitions given from outside (`{"ty": "f64"}`).
    `warnings` (a tinyc.lint.WarningOptions, `-W` values, or None for the
    defaults) says which warnings to look for; the program's `warnings` holds
    those found (a CompilationError carries them beside the errors).
    """
    from tinyc.ir.verifier import verify
    from tinyc.lint import WarningOptions
    from tinyc.parser import parse
    from tinyc.std import parse_std

    given = parse_std(std)
    options = WarningOptions.of(warnings)
    timings = {} if timings is None else timings
    program = _timed(timings, "parse", lambda: parse(source, name, given, defines))
    program.warnings = _timed(timings, "verify", lambda: verify(program, warnings=options))
    return program


def stage_text(program: IRProgram) -> str:
    """The program's IR text in its own version; in the newest spelling where that one
    cannot spell it (a newest-only instruction in a program compiled with --std seed)."""
    from tinyc.diagnostics import CompilationError
    from tinyc.ir.printer import print_program
    from tinyc.std import Std

    try:
        return print_program(program)
    except CompilationError:
        return print_program(program, Std.NEWEST)


def compile_to_spirv(source: str, name: str = "<string>", subgroup_size: int | None = None,
                     device_info: Any = None, validate: bool = True,
                     print_after: Callable[[str, IRProgram], None] | None = None,
                     schedule: Any = None, tuned: Tuned = None,
                     std: "Std | str | None" = None,
                     defines: dict[str, str] | None = None,
                     check_bounds: bool = False, fp_contract: bool = False,
                     warnings: Any = None) -> CompileResult:
    """Run every stage up to SPIR-V bytes; raises CompilationError for bad input.

    `print_after(pass_name, program)` is called after each pass (`--print-after`).
    `schedule` (a tinyc.schedule.Schedule, a dict or a JSON path) is the
    caller's; `tuned` the autotuner's (weaker than the source's attributes).
    `std` overrides the language version (tinyc.std); `defines` are
    preprocessor definitions from outside. `check_bounds`: the bounds-checked
    variant of every kernel (check-shapes pass, codegen/bounds.py), which
    takes a report buffer as its last argument. `warnings`: as check_source;
    the result's `warnings` are the checker's and the passes'. `fp_contract`: a
    real (f32, f64) `arith.add` of a single-use `arith.mul` is emitted as one
    fused multiply-add, rounded once (C compilers' -ffp-contract; off by default,
    so scalar arithmetic stays exact as NumPy's; docs/decisions.md).
    """
    from tinyc.diagnostics import CompilationError
    from tinyc.lint import WarningOptions, split
    from tinyc.passes import run_pipeline
    from tinyc.spirv.codegen import generate
    from tinyc.spirv.tools import validate as spirv_validate

    check_subgroup_size(subgroup_size, device_info)
    timings: dict[str, float] = {}
    stages: dict[str, str] = {}
    given = _schedule(schedule)
    options = WarningOptions.of(warnings)
    program = check_source(source, name, timings, std, defines, options)
    stages["parsed"] = stages["checked"] = stage_text(program)
    if given is not None:
        given.check_kernels(program.functions)
    tuned_entries = tuned(program) if callable(tuned) else dict(tuned or {})
    used: dict[str, dict] = {}
    from_passes = _timed(timings, "passes", lambda: run_pipeline(
        program, subgroup_size=subgroup_size, device_info=device_info, print_after=print_after,
        check_bounds=check_bounds, schedule=given, tuned=tuned_entries, used=used))
    made_errors, from_passes = split(options.apply(from_passes))
    if made_errors:  # -W error
        raise CompilationError(made_errors)
    found = [*program.warnings, *from_passes]
    _timed(timings, "verify-lowered", lambda: _verify_lowered(program))
    stages["lowered"] = print_with_schedules(program, used, tuned_entries)
    spirv, kernels = _timed(timings, "codegen", lambda: generate(program, check_bounds, fp_contract))
    if validate:
        _timed(timings, "spirv-val", lambda: spirv_validate(spirv))
    return CompileResult(program, stages, spirv, kernels, timings, source, name, std=program.std,
                         defines=dict(defines or {}), warnings=found,
                         subgroup_size=subgroup_size, device_info=device_info, schedules=used,
                         tuned=tuned_entries, given=given, fp_contract=fp_contract)


def _schedule(schedule: Any) -> Any:
    if schedule is None:
        return None
    from tinyc.schedule import Schedule

    return Schedule.of(schedule)


def print_with_schedules(program: IRProgram, used: dict[str, dict],
                         tuned: dict[str, dict]) -> str:
    """The program's text (stage_text), each function after a comment with the schedule it
    was lowered with.

    The comment is JSON in the format of `schedule=`/`--schedule`, so it can be
    copied into a schedule file.
    """
    import json

    text = stage_text(program)
    if not used:
        return text
    comments = {fn.name: "; schedule" + (" (tuned: tinyc tune)" if tuned.get(fn.name) else "")
                + ": " + json.dumps({fn.name: used[fn.name]}, separators=(", ", ": "))
                for fn in program.functions if fn.name in used}
    lines = []
    for line in text.splitlines():
        head = line.split("(", 1)[0].split()
        if len(head) == 2 and head[0] == "func" and head[1].lstrip("@") in comments:
            lines.append(comments[head[1].lstrip("@")])
        lines.append(line)
    return "\n".join(lines) + "\n"


def check_subgroup_size(subgroup_size: Any, device_info: Any = None) -> None:
    """The caller's subgroup size must be one the device supports: a usage error
    (TypeError/ValueError), not a diagnostic in the source."""
    if subgroup_size is None:
        return
    if isinstance(subgroup_size, bool) or not isinstance(subgroup_size, int):
        raise TypeError(f"subgroup_size must be an int or None, got {type(subgroup_size).__name__}")
    from tinyc.target.device_info import CPU_DEVICE

    sizes = (device_info or CPU_DEVICE).subgroup_sizes
    if subgroup_size not in sizes:
        raise ValueError(f"subgroup size {subgroup_size} is not supported by the device; "
                         f"use one of {', '.join(map(str, sizes))}")


class InternalCompilerError(RuntimeError):
    """A pass produced IR that fails verification: a bug in tinyc, not in the input."""


def _verify_lowered(program: IRProgram) -> None:
    """Verify first and last: the passes must leave valid IR behind."""
    from tinyc.diagnostics import CompilationError
    from tinyc.ir.verifier import verify
    from tinyc.std import Std, Version

    try:
        verify(program, Version(Std.SEED, "lowered"))
    except CompilationError as err:
        raise InternalCompilerError(
            "internal compiler error: the lowered IR fails verification\n" + str(err)) from None
