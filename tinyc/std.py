"""The two versions of the tensor language: the seed and the newest.

tinyc reads both with one superset grammar (`docs/newest.md`): every
spelling of either version is accepted, and both normalise to the same IR
(`arith.add` and `add` are one instruction). A version only decides what the
two versions mean differently:

- launch geometry: the seed batches work-groups along z, the newest along x;
- the newest language's restrictions (coopmatrix rows a multiple of the
  subgroup size, `lifetime_stop` collective);
- the spelling `tinyc compile --emit ir` prints (a migration aid).

A program's version is, first match wins: the `std` given by the caller
(`--std`, `tinyc.compile(std=...)`), a declaration in the file (a comment line
`; std: newest`), or inferred from the spellings it uses: newest if it
uses any spelling only the newest language has, else seed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from tinyc.diagnostics import CompilationError, Diagnostic, Source, Span


class Std(Enum):
    """A version of the tensor language."""

    SEED = "seed"
    NEWEST = "newest"

    @property
    def language(self) -> str:
        """`the newest language`, as diagnostics name it."""
        return f"the {self.value} language"


DEFAULT = Std.SEED
"""The version of a program that uses only spellings both versions share."""

BATCH_AXIS = {Std.SEED: 2, Std.NEWEST: 0}
"""The OpenCL dimension the batch of work-groups runs along: z in the seed
(global (X, Y, N)), x in the newest language (global (X·N, Y, 1)), as the
reference's runtimes launch them."""


@dataclass(frozen=True)
class Marker:
    """A spelling that belongs to one version only: evidence for inference."""

    std: Std
    what: str                # `'add'`, `'.atomic' before the transposes`
    span: Span | None = None


@dataclass(frozen=True)
class Version:
    """A program's version and how it was decided (diagnostics say so)."""

    std: Std
    how: str                 # "given", "declared", "inferred", "default"
    marker: Marker | None = None
    span: Span | None = None  # the declaration

    def describe(self) -> str:
        """`the newest language (inferred from 'add' at 3.10)`."""
        if self.how == "given":
            why = f"--std {self.std.value}"
        elif self.how == "declared":
            why = f"declared at line {self.span.line}" if self.span else "declared"
        elif self.how == "inferred" and self.marker is not None:
            where = f" at {self.marker.span.line}.{self.marker.span.column}" if self.marker.span else ""
            why = f"inferred from {self.marker.what}{where}"
        else:
            why = "no spelling of the newest language is used"
        return f"{self.std.language} ({why})"

    @property
    def newest_extensions(self) -> bool:
        """What the newest language takes beyond the seed's letter (docs/newest.md): in a
        newest program, and in lowered IR (checked after the passes of either version)."""
        return self.std is Std.NEWEST or self.how == "lowered"

    def rule(self) -> str:
        """The suffix of a message that holds in this version only."""
        return f"; a rule of {self.describe()}, --std {other_std(self.std).value} lifts it"


def other_std(std: Std) -> Std:
    """The other version."""
    return Std.SEED if std is Std.NEWEST else Std.NEWEST


def parse_std(value: "Std | str | None") -> Std | None:
    """A `--std`/`std=` value; ValueError for a name that is no version."""
    if value is None or isinstance(value, Std):
        return value
    try:
        return Std(value)
    except ValueError:
        names = ", ".join(s.value for s in Std)
        raise ValueError(f"unknown language version '{value}'; versions are {names}") from None


_DECLARATION = re.compile(r"^[ \t]*;[ \t]*std[ \t]*:[ \t]*([^\s;]+)[ \t]*\r?$", re.MULTILINE)
"""A comment line that is only `; std: NAME` (a longer comment about std is no declaration)."""


def declaration(source: Source) -> tuple[Std, Span] | None:
    """The version a file declares with a comment line `; std: seed|newest`.

    Two different declarations, or a name that is no version, are errors.
    """
    found: tuple[Std, Span] | None = None
    if "std" not in source.text:  # (a search for the word is faster than the regex's at each line)
        return None
    for m in _DECLARATION.finditer(source.text):
        line = source.text.count("\n", 0, m.start()) + 1
        start = m.start(1) - (source.text.rfind("\n", 0, m.start()) + 1) + 1
        span = Span(line, start, line, max(start, start + len(m.group(1)) - 1), source)
        try:
            std = Std(m.group(1))
        except ValueError:
            names = " or ".join(f"'{s.value}'" for s in Std)
            raise CompilationError(Diagnostic(
                f"unknown language version '{m.group(1)}' in the declaration; write {names}",
                span)) from None
        if found is not None and found[0] is not std:
            raise CompilationError(Diagnostic(
                f"the file declares {std.language} here but {found[0].language} at line "
                f"{found[1].line}", span))
        found = found or (std, span)
    return found


def decide(given: Std | None, declared: tuple[Std, Span] | None,
           markers: list[Marker]) -> Version:
    """The version of a program: given, else declared, else inferred from `markers`."""
    if given is not None:
        return Version(given, "given")
    if declared is not None:
        return Version(declared[0], "declared", span=declared[1])
    newest = [m for m in markers if m.std is Std.NEWEST]
    if newest:
        return Version(Std.NEWEST, "inferred", newest[0])
    seed = [m for m in markers if m.std is Std.SEED]
    if seed:
        return Version(Std.SEED, "inferred", seed[0])
    return Version(DEFAULT, "default")
