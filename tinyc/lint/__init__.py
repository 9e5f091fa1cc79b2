"""Warnings: what the spec allows but is almost always a mistake (docs/warnings.md).

A warning is a `Diagnostic` of severity "warning" with a name (`WARNINGS`),
printed after its message as compilers do: `[-Wsubview-bounds]`. The
checks run on the checked IR of each function that verified without errors
(`lint_function`, linear in the size of the function); the instructions say
what is suspicious about themselves (`Instruction.lint`), the rules over a
whole function are in tinyc/lint/rules.py.

`WarningOptions` is what `-W`/`-w` ask for: which warnings are on, whether
they are errors. A program with warnings only still checks and compiles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Sequence

from tinyc.diagnostics import Diagnostic, Note, Span, did_you_mean

if TYPE_CHECKING:
    from tinyc.ir.core import Function, Value

WARNINGS: dict[str, str] = {
    "subview-bounds": "a subview whose constant slice leaves the mode of its operand",
    "empty-loop": "a for or foreach whose constant range is empty: the body never runs",
    "unused-value": "a value computed without side effects and never used",
    "unread-alloca": "local memory (alloca) that is written but never read",
    "subgroup-size-override": "a subgroup_size attribute that overrides the requested size",
}
"""Every warning by name (`-W no-NAME` turns one off), with what it catches."""


class UnknownWarning(ValueError):
    """A `-W` value that names no warning; the message suggests the closest name."""


@dataclass(frozen=True)
class WarningOptions:
    """Which warnings are reported and how (`-W error`, `-W no-NAME`, `-w`)."""

    disabled: frozenset[str] = frozenset()
    as_errors: bool = False
    silenced: bool = False

    @classmethod
    def parse(cls, flags: Iterable[str] = (), silence: bool = False) -> "WarningOptions":
        """From `-W` values in order: `error`, `no-error`, `NAME`, `no-NAME`; UnknownWarning
        for another value. `silence` is `-w`: no warning at all."""
        disabled: set[str] = set()
        as_errors = False
        for flag in flags:
            flag = flag.strip()
            if flag.startswith("-W"):
                flag = flag[2:]
            if flag in ("error", "no-error"):
                as_errors = flag == "error"
                continue
            off = flag.startswith("no-")
            name = flag[3:] if off else flag
            if name not in WARNINGS:
                choices = [*WARNINGS, "error", "no-error", *(f"no-{n}" for n in WARNINGS)]
                raise UnknownWarning(f"unknown warning '{flag}'{did_you_mean(flag, choices)}; "
                                     f"warnings: {', '.join(WARNINGS)}")
            (disabled.add if off else disabled.discard)(name)
        return cls(frozenset(disabled), as_errors, silence)

    @classmethod
    def of(cls, value: "WarningOptions | str | Sequence[str] | None") -> "WarningOptions":
        """The options from what a caller gave: an instance, one `-W` value, several, or None
        (the defaults: every warning on, none an error); `"none"` silences them all."""
        if value is None:
            return cls()
        if isinstance(value, WarningOptions):
            return value
        flags = [value] if isinstance(value, str) else list(value)
        silence = "none" in flags
        return cls.parse([f for f in flags if f != "none"], silence)

    def enabled(self, name: str) -> bool:
        return not self.silenced and name not in self.disabled

    def apply(self, warnings: Iterable[Diagnostic]) -> list[Diagnostic]:
        """The warnings these options keep; as errors (same text, `[-Werror,-W...]`) if asked."""
        if self.silenced or self.disabled:
            kept = [w for w in warnings if w.warning is None or self.enabled(w.warning)]
        else:  # every warning on (the default): nothing to ask of each
            kept = list(warnings)
        if self.as_errors:
            kept = [_as_error(w) if w.severity == "warning" else w for w in kept]
        return kept


def _as_error(warning: Diagnostic) -> Diagnostic:
    return Diagnostic(warning.message, warning.span, warning.notes, "error", warning.hint,
                      warning.warning)


def split(diagnostics: Iterable[Diagnostic]) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, the others) of a list of diagnostics."""
    errors, others = [], []
    for d in diagnostics:
        (errors if d.severity == "error" else others).append(d)
    return errors, others


@dataclass
class LintContext:
    """What a check needs: where to report, and the options (a disabled warning is not
    even computed)."""

    options: WarningOptions = field(default_factory=WarningOptions)
    found: list[Diagnostic] = field(default_factory=list)

    def wants(self, name: str) -> bool:
        return self.options.enabled(name)

    def warn(self, name: str, message: str, span: Span | None, notes: Iterable[Note] = ()) -> None:
        assert name in WARNINGS, name
        if self.wants(name):
            self.found.append(Diagnostic(message, span, tuple(notes), "warning", warning=name))

    def defined_here(self, value: "Value") -> Note:
        """`'%A' is defined here with type memref<f32x8x8>`, as the verifier's notes."""
        name = f"'%{value.name}'" if value.name else "the value"
        return Note(f"{name} is defined here with type {value.type}", value.span)


def lint_function(fn: "Function", options: WarningOptions | None = None) -> list[Diagnostic]:
    """The warnings of one verified function, in the order found."""
    from tinyc.ir.core import Instruction
    from tinyc.lint.rules import function_rules

    no_lint = Instruction.lint
    ctx = LintContext(options or WarningOptions())
    if ctx.options.silenced:
        return []
    instructions = list(fn.walk())
    used: set[Value] = set()  # what the function rules need, gathered in the same walk:
    result_types: set = set()  # reading 40,000 instructions again costs ~15 ms a walk
    note_uses, note_type = used.update, result_types.add
    for inst in instructions:
        if type(inst).lint is not no_lint:  # (most classes have nothing to say: no call)
            inst.lint(ctx)
        note_uses(inst.operands)
        for result in inst.results:
            note_type(result.type)
    function_rules(ctx, instructions, used, result_types)
    return ctx.found
