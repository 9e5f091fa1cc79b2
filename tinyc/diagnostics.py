"""Source locations and the one error type users see.

Every token, value and instruction carries a `Span`, so a message points at
the user's text. All user errors (syntax, types, regions, attributes) become
`CompilationError`, whose `str()` is the full, printable diagnostic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Source:
    """A named source text; spans refer to it for excerpts."""

    text: str
    name: str = "<string>"

    def line(self, number: int) -> str:
        """The 1-based line `number`, without its newline."""
        lines = self.text.splitlines()
        return lines[number - 1] if 0 < number <= len(lines) else ""


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

    def __str__(self) -> str:
        parts = [_render(self.severity, self.message, self.span)]
        parts += [_render("note", n.message, n.span) for n in self.notes]
        return "\n".join(parts)

    def to_json(self) -> dict:
        """The diagnostic as a plain dict, for editors (`--format json`)."""
        return {
            "file": self.span.source.name if self.span and self.span.source else None,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "severity": self.severity,
            "message": self.message,
            "notes": [
                {
                    "message": n.message,
                    "line": n.span.line if n.span else 0,
                    "column": n.span.column if n.span else 0,
                    "end_line": n.span.end_line if n.span else 0,
                    "end_column": n.span.end_column if n.span else 0,
                }
                for n in self.notes
            ],
        }


def _render(severity: str, message: str, span: Span | None) -> str:
    """`FILE:LINE.COL-END: severity: message`, source line, carets."""
    if span is None:
        return f"{severity}: {message}"
    name = span.source.name if span.source else "<string>"
    head = f"{name}:{span}: {severity}: {message}"
    if span.source is None:
        return head
    text = span.source.line(span.line).expandtabs(1)
    last = span.end_column if span.end_line == span.line else max(len(text), span.column)
    carets = " " * (span.column - 1) + "^" * max(1, last - span.column + 1)
    return f"{head}\n{text}\n{carets}"


class CompilationError(Exception):
    """Every user error in a program; `str()` is the printable diagnostic."""

    def __init__(self, diagnostics: Sequence[Diagnostic] | Diagnostic):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    def to_json(self) -> str:
        import json

        return json.dumps([d.to_json() for d in self.diagnostics], indent=2)


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
    if a[:1] == b[:1] and a[:1] in "%@.":  # the sigil is no part of the name
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

    def raise_if_any(self) -> None:
        if self.diagnostics:
            ordered = sorted(self.diagnostics, key=lambda d: (d.line, d.column))
            raise CompilationError(ordered)


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
