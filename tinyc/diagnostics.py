"""Source locations and the one error type users see.

Every token, value and instruction carries a `Span`, so a message points at
the user's text. All user errors (syntax, types, regions, attributes) become
`CompilationError`, whose `str()` is the full, printable diagnostic.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Source:
    """A named source text; spans refer to it for excerpts."""

    text: str
    name: str = "<string>"

    def line(self, number: int) -> str:
        """The 1-based line `number`, without its newline."""
        lines = self._lines
        return lines[number - 1] if 0 < number <= len(lines) else ""

    @functools.cached_property
    def _lines(self) -> list[str]:
        """The text split once (a file with 20,000 warnings split it for each: minutes)."""
        return self.text.splitlines()

    def __getstate__(self) -> dict:
        return {"text": self.text, "name": self.name}  # not the split lines


@dataclass(unsafe_hash=True, slots=True)
class Span:
    """A range of source text: 1-based lines and columns, end column inclusive.

    Not frozen: the parser makes one per token it keeps, and a frozen
    dataclass's __init__ costs five object.__setattr__ calls. Treat spans as
    values all the same (they hash and compare by position).
    """

    line: int
    column: int
    end_line: int
    end_column: int
    source: Source | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        if self.end_line == self.line:
            return f"{self.line}.{self.column}-{self.end_column}"
        return f"{self.line}.{self.column}-{self.end_line}.{self.end_column}"

    def join(self, other: "Span | None") -> "Span":
        """The smallest span covering both."""
        if other is None:
            return self
        start = min((self.line, self.column), (other.line, other.column))
        end = max((self.end_line, self.end_column), (other.end_line, other.end_column))
        return Span(start[0], start[1], end[0], end[1], self.source or other.source)


@dataclass(frozen=True)
class Note:
    """A secondary location, e.g. where an operand was defined."""

    message: str
    span: Span | None = None


@dataclass(frozen=True)
class Diagnostic:
    """One error with its location; `str()` renders it with a caret excerpt."""

    message: str
    span: Span | None = None
    notes: tuple[Note, ...] = ()
    severity: str = "error"
    hint: str | None = None  # a suggestion of its own line (`hint: write ...`)
    warning: str | None = None  # a warning's name (`subview-bounds`): `-W no-subview-bounds`

    def __init__(self, message: str, span: Span | None = None, notes: tuple[Note, ...] = (),
                 severity: str = "error", hint: str | None = None, warning: str | None = None):
        # The fields in one update (the generated __init__ of a frozen dataclass makes six
        # object.__setattr__ calls; a file with 20,000 warnings makes 20,000 diagnostics).
        self.__dict__.update(message=message, span=span, notes=notes, severity=severity,
                             hint=hint, warning=warning)

    @property
    def option(self) -> str:
        """What follows the message in brackets, as compilers print it: `[-Wsubview-bounds]`,
        `[-Werror,-Wsubview-bounds]` for a warning made an error; '' for other diagnostics."""
        if self.warning is None:
            return ""
        return f" [-Werror,-W{self.warning}]" if self.severity == "error" else f" [-W{self.warning}]"

    @property
    def line(self) -> int:
        return self.span.line if self.span else 0

    @property
    def column(self) -> int:
        return self.span.column if self.span else 0

    @property
    def end_line(self) -> int:
        return self.span.end_line if self.span else 0

    @property
    def end_column(self) -> int:
        return self.span.end_column if self.span else 0

    @property
    def hints(self) -> list[str]:
        """The "did you mean" suggestions in the message (`did you mean 'gemm'?`), then `hint`."""
        found = [f"did you mean '{m.group(1)}'?" for m in _HINT.finditer(self.message)]
        return found + ([self.hint] if self.hint else [])

    @property
    def suggestions(self) -> list[str]:
        """The names the hints suggest (`gemm`), for editors' quick fixes."""
        return [m.group(1) for m in _HINT.finditer(self.message)]

    @property
    def bare_message(self) -> str:
        """The message without its hints (they are a field of their own in JSON)."""
        return _HINT.sub("", self.message)

    def __str__(self) -> str:
        return self.render()

    def render(self, color: bool = False) -> str:
        """The text form; `color` adds ANSI colours as clang does (bold location, red error)."""
        if not self.notes and not self.hint:  # (most: `tinyc check` prints 20,000 warnings)
            return _render(self.severity, self.message + self.option, self.span, color)
        parts = [_render(self.severity, self.message + self.option, self.span, color)]
        parts += [_render("note", n.message, n.span, color) for n in self.notes]
        if self.hint:
            parts.append(_render("hint", self.hint, None, color))
        return "\n".join(parts)

    def to_json(self) -> dict:
        """The diagnostic as a plain dict, for editors (`--format json`).

        `line`/`column`/`end_line`/`end_column` are as in the text output:
        1-based, end inclusive, counted in characters. `range` is the LSP's:
        0-based lines, 0-based `character` in UTF-16 code units, end exclusive.
        """
        return {
            "file": _file_of(self.span),
            "severity": self.severity,
            "warning": self.warning,
            "message": self.bare_message,
            "hints": self.hints,
            **_location_json(self.span),
            "notes": [{"file": _file_of(n.span), "message": n.message, **_location_json(n.span)}
                      for n in self.notes],
        }


_HINT = re.compile(r" \(did you mean '([^']*)'\?\)")
"""The hint `did_you_mean` appends to a message; `Diagnostic.hints` reads it back."""


def _file_of(span: Span | None) -> str | None:
    return span.source.name if span and span.source else None


def _location_json(span: Span | None) -> dict:
    if span is None:
        return {"line": 0, "column": 0, "end_line": 0, "end_column": 0, "range": None}
    return {"line": span.line, "column": span.column, "end_line": span.end_line,
            "end_column": span.end_column, "range": lsp_range(span)}


def lsp_range(span: Span) -> dict | None:
    """`span` in the Language Server Protocol's terms: 0-based, UTF-16, end exclusive."""
    if span.source is None:
        return None
    from tinyc.positions import line_index

    return line_index(span.source.text).span_range(span)


_COLORS = {"error": "\033[1;31m", "warning": "\033[1;35m", "note": "\033[1;36m",
           "hint": "\033[1;32m"}
_BOLD, _GREEN, _RESET = "\033[1m", "\033[1;32m", "\033[0m"


def _render(severity: str, message: str, span: Span | None, color: bool = False) -> str:
    """`FILE:LINE.COL-END: severity: message`, source line, carets."""
    label = f"{_COLORS.get(severity, _BOLD)}{severity}:{_RESET}" if color else f"{severity}:"
    if color:
        message = f"{_BOLD}{message}{_RESET}"
    if span is None:
        return f"{label} {message}"
    source = span.source
    name = source.name if source else "<string>"
    where = f"{_BOLD}{name}:{span}:{_RESET}" if color else f"{name}:{span}:"
    if source is None:
        return f"{where} {label} {message}"
    line, column = span.line, span.column
    text = source.line(line).expandtabs(1)
    last = span.end_column if span.end_line == line else max(len(text), column)
    carets = " " * (column - 1) + "^" * max(1, last - column + 1)
    if color:
        carets = f"{_GREEN}{carets}{_RESET}"
    return f"{where} {label} {message}\n{text}\n{carets}"


class CompilationError(Exception):
    """Every user error in a program; `str()` is the printable diagnostic.

    `diagnostics` are the errors; `warnings` the warnings (and notes) found
    beside them in the parts of the program without errors. `str()`,
    `render()` and `to_json()` show both, in the order of the source.
    """

    def __init__(self, diagnostics: Sequence[Diagnostic] | Diagnostic,
                 warnings: Sequence[Diagnostic] = ()):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self.warnings: list[Diagnostic] = list(warnings)
        super().__init__("\n".join(str(d) for d in self.all_diagnostics))

    @property
    def all_diagnostics(self) -> list[Diagnostic]:
        """Errors and warnings in source order (errors first where they share a place)."""
        if not self.warnings:
            return self.diagnostics
        return in_source_order([*self.diagnostics, *self.warnings])

    def render(self, color: bool = False) -> str:
        """Every diagnostic as text, in colour if asked."""
        return "\n".join(d.render(color) for d in self.all_diagnostics)

    def to_json(self) -> str:
        import json

        return json.dumps([d.to_json() for d in self.all_diagnostics], indent=2)


def in_source_order(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Sorted by (line, column); a stable sort keeps the order of those at one place."""
    return sorted(diagnostics, key=_position)


def _position(d: Diagnostic) -> tuple[int, int]:
    """(line, column) of a diagnostic (0, 0 without a span): `in_source_order`'s key."""
    span = d.span
    return (span.line, span.column) if span else (0, 0)


_KEYBOARD_ROWS = ("1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEIGHBOURS: dict[str, set[str]] = {}
for _r, _row in enumerate(_KEYBOARD_ROWS):
    for _c, _ch in enumerate(_row):
        _near = _NEIGHBOURS.setdefault(_ch, set())
        for _dr in (-1, 0, 1):
            if 0 <= _r + _dr < len(_KEYBOARD_ROWS):
                _near.update(_KEYBOARD_ROWS[_r + _dr][max(_c - 1, 0): _c + 2])


def _typo_distance(a: str, b: str) -> float:
    """Edit distance where likely slips cost half: a neighbouring key, a doubled letter,
    two neighbouring letters swapped."""
    prev2: list[float] = []
    prev = [float(j) for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        cur = [float(i)] + [0.0] * len(b)
        for j in range(1, len(b) + 1):
            sub = 0.0 if a[i - 1] == b[j - 1] else (
                0.5 if b[j - 1] in _NEIGHBOURS.get(a[i - 1], ()) else 1.0)
            ins = 0.5 if j > 1 and b[j - 1] == b[j - 2] else 1.0
            dele = 0.5 if i > 1 and a[i - 1] == a[i - 2] else 1.0
            cur[j] = min(prev[j - 1] + sub, cur[j - 1] + ins, prev[j] + dele)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 0.5)
        prev2, prev = prev, cur
    return prev[-1]


ALIASES = {
    "float": "f32", "float32": "f32", "single": "f32", "double": "f64", "float64": "f64",
    "half": "f16", "float16": "f16", "bfloat16": "bf16", "bfloat": "bf16", "char": "i8",
    "int8": "i8", "byte": "i8", "short": "i16", "int16": "i16", "int": "i32", "int32": "i32",
    "long": "i64", "int64": "i64", "size_t": "index", "complex": "c32", "complex64": "c32",
    "cfloat": "c32", "complex128": "c64", "cdouble": "c64", "boolean": "bool",
}
"""Names from other languages for the tensor language's types: `float` means `f32`."""


def _distance(word: str, candidate: str) -> float | None:
    """How far a candidate is from a misspelled word, or None if it is not a close match.

    Close: an abbreviation (`align` for `alignment`), the name without its
    family or suffix (`group_id`, `subgroup_add`), or a few slips relative to
    the length of the part that differs; names of one family (`math.log`,
    `math.exp`) are compared after the shared `family.`.
    """
    if word.lower() == candidate.lower():
        return 0.0
    if len(word) >= 3 and (candidate.startswith(word) or candidate.endswith("." + word)
                           or candidate.startswith(word + ".")):
        return 0.25
    a, b = word, candidate
    if a[:1] == b[:1] and a[:1] in "%@.$":  # the sigil is no part of the name
        a, b = a[1:], b[1:]
    if "." in a[1:] and "." in b[1:] and a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0]:
        a, b = a.rsplit(".", 1)[1], b.rsplit(".", 1)[1]
    distance = _typo_distance(a, b)
    return distance if distance <= max(len(a), len(b)) / 3 else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the likeliest intended name, or ''.

    Only close matches are offered (`_distance`): `gemn` suggests `gemm`
    (a neighbouring key beats `gemv`), `math.log` suggests nothing, and a
    type from another language suggests ours (`float` -> `f32`).
    """
    pool = list(dict.fromkeys(candidates))
    if not pool:
        return ""
    alias = ALIASES.get(word.lower())
    if alias is None:  # a slip in an alias: `flaot`
        near = [(d, target) for key, target in ALIASES.items()
                if (d := _distance(word.lower(), key)) is not None and d <= 1.0]
        alias = min(near)[1] if near else None
    if alias in pool:
        return f" (did you mean '{alias}'?)"
    scored = [(d, c) for c in pool if (d := _distance(word, c)) is not None]
    if not scored:
        return ""
    import difflib  # only on errors: keeps `tinyc compile` start-up lean

    best = min(scored, key=lambda dc: (dc[0], -difflib.SequenceMatcher(None, word, dc[1]).ratio(), dc[1]))
    return f" (did you mean '{best[1]}'?)"


class DiagnosticSink:
    """Collects independent errors so one run reports them all."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def error(self, message: str, span: Span | None, notes: Iterable[Note] = ()) -> None:
        self.diagnostics.append(Diagnostic(message, span, tuple(notes)))

    def raise_if_any(self, warnings: Sequence[Diagnostic] = ()) -> None:
        """CompilationError with every error (and `warnings` beside them), if there is one."""
        if self.diagnostics:
            raise CompilationError(in_source_order(self.diagnostics), warnings)


class LaunchError(Exception):
    """A kernel call whose arguments do not fit the kernel; raised before launch."""

    def __init__(self, message: str, argument: str | None = None):
        self.argument = argument
        super().__init__(f"argument '{argument}': {message}" if argument else message)


class BoundsError(LaunchError):
    """A bounds-checked launch found an access outside its memref (or a view or a
    collective's shapes that do not fit); nothing was written back.

    `site` is where (tinyc.signature.BoundsSite: file, line, column, source
    text, kind of check), `work_group` which work-group, `index` and `shape`
    the offending values and the bounds they broke (for a shape rule: the two
    sizes that differ).
    """

    def __init__(self, message: str, *, kernel: str = "", site=None, work_group: int = -1,
                 index: tuple = (), shape: tuple = (), extra: tuple = ()):
        self.kernel = kernel
        self.site = site
        self.work_group = work_group
        self.index = tuple(index)
        self.shape = tuple(shape)
        self.extra = tuple(extra)
        super().__init__(message)

    @property
    def kind(self) -> str:
        return getattr(self.site, "kind", "")

    @property
    def line(self) -> int:
        return getattr(self.site, "line", 0)

    @property
    def column(self) -> int:
        return getattr(self.site, "column", 0)


class UsageError(Exception):
    """A command was asked for something its options cannot give: exit code 2.

    Raised by command bodies and what they use to make a launch (tinyc/harness/: a
    malformed `--size`, a kernel name that does not exist). Only this type becomes a usage
    error; any other exception from a command body is a bug and is not disguised as bad input.
    """
