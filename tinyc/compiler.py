"""`tinyc.compile`: the whole pipeline, readable top to bottom.

    text ─parse─▶ IR ─verify─▶ checked IR ─passes─▶ lowered IR
         ─codegen─▶ SPIR-V ─spirv-val─▶ bytes ─runtime─▶ kernels

The IR after each stage is kept as text for `Program.ir(stage)` and
`tinyc compile --emit`. `check_source` is the front half alone (parse,
verify), what `tinyc check` runs. The stages up to SPIR-V bytes are in
tinyc/pipeline.py (`compile_to_spirv`, `check_source`: importable from here too);
here the device, the tuner, the caches and the runtime join. Nothing here imports
dpctl or the SPIR-V layer before it is needed. A schedule (tinyc/schedule/) says
how each kernel is lowered: given by the caller, written in the source, or found
by the autotuner (tinyc/tune/) and cached on disk; the lowered IR shows the one used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tinyc.pipeline import (  # noqa: F401 (importable from here too)
    STAGES, CompileResult, InternalCompilerError, Tuned, _schedule, check_source, check_subgroup_size,
    compile_to_spirv, print_with_schedules, stage_text,
)

if TYPE_CHECKING:
    from tinyc.ir.core import Program as IRProgram


def device_limits(device: Any) -> Any:
    """The pass-level DeviceInfo of the launch device; CPU defaults if none is usable."""
    return target_device(device)[1]


def target_device(device: Any) -> tuple[Any, Any]:
    """(the dpctl device or None, its pass-level DeviceInfo; CPU defaults if there is none).

    An explicitly requested device that cannot be used is an error; without a
    request, compiling still works on a machine without SPIR-V devices (no
    dpctl, or no device that builds SPIR-V: LaunchError). Any other failure
    is a bug and is not hidden behind the defaults.
    """
    from tinyc.diagnostics import LaunchError
    from tinyc.target.device_info import CPU_DEVICE

    try:
        from tinyc.runtime.device import device_info, select_device

        found = select_device(device)
    except (ImportError, LaunchError):
        if device is not None:
            raise
        return None, CPU_DEVICE
    return found, device_info(found)


class Program:
    """A compiled program: SPIR-V bytes, IR text per stage, and its kernels."""

    def __init__(self, result: CompileResult, device: Any = None):
        self._result = result
        self._device = device
        self._kernels: dict[str, Any] = {}
        self._checked: CompileResult | None = None  # the bounds-checked module, made on demand

    @property
    def spirv(self) -> bytes:
        return self._result.spirv

    @property
    def kernel_names(self) -> list[str]:
        return list(self._result.kernels)

    @property
    def timings(self) -> dict[str, float]:
        return dict(self._result.timings)

    @property
    def warnings(self) -> list:
        """Warnings of the compilation (Diagnostics), also issued as CompilationWarning."""
        return list(self._result.warnings)

    @property
    def schedules(self) -> dict[str, dict]:
        """The complete schedule each kernel was lowered with (the format of `schedule=`)."""
        import copy

        return copy.deepcopy(self._result.schedules)

    def ir(self, stage: str = "lowered") -> str:
        """IR text after a stage: "parsed", "checked" or "lowered"."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage '{stage}'; stages are {', '.join(STAGES)}")
        return self._result.stages[stage]

    @property
    def std(self) -> str:
        """The language version the program was compiled as: "seed" or "newest" (tinyc.std)."""
        return self._result.std.value

    def checked_ir(self) -> IRProgram:
        """A fresh copy of the checked, unlowered IR (for the reference interpreter)."""
        from tinyc.parser import parse

        return parse(self._result.source, self._result.name, self._result.std,
                     self._result.defines)

    def __getitem__(self, name: str):
        if name not in self._result.kernels:
            raise KeyError(f"no kernel '{name}'; kernels: {', '.join(self._result.kernels)}")
        kernel = self._kernels.get(name)
        if kernel is None:
            from tinyc.runtime.kernel import Kernel

            kernel = Kernel(self.spirv, self._result.kernels[name], self._device,
                            checked_variant=lambda: self._checked_kernel(name))
            self._kernels[name] = kernel
        return kernel

    def _checked_kernel(self, name: str):
        """The bounds-checked variant of kernel `name` (the module compiled once more)."""
        from tinyc.runtime.kernel import Kernel

        if self._checked is None:
            from tinyc.compile_cache import checked_variant

            r = self._result
            self._checked = checked_variant(r, lambda: compile_to_spirv(
                r.source, r.name, subgroup_size=r.subgroup_size, device_info=r.device_info, std=r.std,
                defines=r.defines, schedule=r.given, tuned=r.tuned, check_bounds=True,
                fp_contract=r.fp_contract))
        return Kernel(self._checked.spirv, self._checked.kernels[name], self._device)

    def __iter__(self):
        return iter(self._result.kernels)


def source_text(source: Any, what: str = "tinyc.compile()") -> str:
    """The source as text: a str as is; bytes, bytearray or memoryview as UTF-8; a
    `tinyc.builder.Program` as the text it checked.

    A byte that is not UTF-8 becomes U+FFFD, so one inside a comment is
    harmless and one elsewhere is reported by the lexer at its place.
    Anything else is a TypeError that says what is expected.
    """
    if isinstance(source, str):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source).decode("utf-8", errors="replace")
    checked_source = getattr(source, "checked_source", None)
    if checked_source is not None:
        return checked_source()
    raise TypeError(f"{what} expects the source as str, UTF-8 bytes or a tinyc.builder.Program, "
                    f"got {type(source).__name__}")


class CompilationWarning(UserWarning):
    """Something in the program or the options that is probably not what was meant.

    `diagnostic` is the warning (tinyc.diagnostics.Diagnostic; its `warning`
    is the name `-W no-NAME` and `warnings=["no-NAME"]` turn off); the text is
    as `tinyc check` prints it, ending in `[-WNAME]`.
    """

    def __init__(self, diagnostic: Any):
        self.diagnostic = diagnostic
        super().__init__(str(diagnostic))


def compile(source: Any, *, name: str = "<string>", device: Any = None,
            subgroup_size: int | None = None, std: str | None = None,
            defines: dict[str, str] | None = None, schedule: Any = None,
            tune: bool = False, warnings: Any = None, fp_contract: bool = False) -> Program:
    """Compile tensor-language source for `device` (default: the first SPIR-V device).

    `source` is text, bytes in UTF-8, or a `tinyc.builder.Program`; a built
    program is verified as built (errors point at the Python lines that built
    it), then compiled from its text like any source. `std` ("seed" or
    "newest") overrides the language version the source declares or implies;
    `defines` gives preprocessor definitions, as `{"ty": "f64"}` for
    `$ty = f64` (docs/newest.md). `schedule` (dict, tinyc.schedule.Schedule
    or path to a JSON file) fixes knobs of the lowering, keyed by kernel and
    instruction (docs/schedules.md). A schedule the autotuner cached for a
    kernel on this device is used automatically; `tune=True` first tunes
    every kernel that has none (measuring on the device, up to
    TINYC_TUNE_BUDGET seconds per kernel, default 30) and caches the result.
    `warnings` are the command line's `-W` values (docs/warnings.md):
    `"error"` makes warnings errors, `"no-NAME"` turns one off, `"none"`
    (`-w`) all. Each warning kept is issued as a CompilationWarning and
    listed in `Program.warnings`. `fp_contract=True` fuses a real add of a
    single-use product into one fma (rounded once, as OpenCL C does by
    default; off: exact as NumPy). Raises CompilationError for errors in the
    program, TypeError/ValueError for bad arguments.
    """
    import warnings as python_warnings

    from tinyc.lint import WarningOptions

    if not isinstance(name, str):
        raise TypeError(f"tinyc.compile() expects name= as a str, got {type(name).__name__}")
    if name == "<string>" and getattr(source, "checked_source", None) is not None:
        name = getattr(source, "name", name)
    options = WarningOptions.of(warnings)  # UnknownWarning is a ValueError
    text = source_text(source)
    found, info = target_device(device)
    entry = None
    if schedule is None and not tune:  # everything it depends on is known: cached on disk
        from tinyc import compile_cache

        stored, entry = compile_cache.lookup(text, name, found, info, subgroup_size, std, defines,
                                             options, fp_contract)
        if stored is not None:
            return _loaded(stored, device, found)
    from tinyc.tune import cached_or_tuned

    given = _schedule(schedule)
    tuned = cached_or_tuned(found, device, given, subgroup_size, tune) if found is not None else None
    if tune and found is None:
        from tinyc.tune.cache import TuningWarning

        python_warnings.warn("tune=True: no SPIR-V device to measure on; compiling untuned",
                             TuningWarning, stacklevel=2)
    from tinyc.diagnostics import CompilationError

    try:
        result = compile_to_spirv(text, name, subgroup_size=subgroup_size, device_info=info,
                                  schedule=given, tuned=tuned, std=std, defines=defines,
                                  warnings=options, fp_contract=fp_contract)
    except CompilationError as error:
        relocate = getattr(source, "relocate", None)  # a built program: at its Python lines
        if relocate is None:
            raise
        raise relocate(error, text, name) from None
    relocate_warnings = getattr(source, "relocate_diagnostics", None)
    if relocate_warnings is not None and result.warnings:
        result.warnings = relocate_warnings(result.warnings, text, name)
    for diagnostic in result.warnings:
        python_warnings.warn(CompilationWarning(diagnostic), stacklevel=2)
    if entry is not None:
        compile_cache.store(entry, result)
    return Program(result, device)


def _loaded(result: CompileResult, device: Any, found: Any) -> Program:
    """`tinyc.compile`'s Program for a result from the compile cache: its warnings issued
    again, and its device binary loading in the background if it is on disk."""
    import warnings as python_warnings

    for diagnostic in result.warnings:
        python_warnings.warn(CompilationWarning(diagnostic), stacklevel=3)
    if found is not None and result.kernels:
        from tinyc.runtime.device import select_queue
        from tinyc.runtime.program_cache import prefetch

        prefetch(select_queue(device), result.spirv)  # a stored binary loads while the caller goes on
    return Program(result, device)
