"""`tinyc check` for an editor: the same diagnostics, re-checking only what changed.

Functions are independent: each has its own names, and the verifier and the
warnings look at one function at a time. So a file is cut into pieces at
the lines where a top-level `func` starts, and each piece is parsed and
verified on its own, cached by its text and the line it starts on (it is
parsed padded with empty lines, so every span, message and excerpt is the
one of the whole file). What is not local is put together as the parser
does it: the version (given, declared, or inferred from the first marker of
each version in the file), errors in source order, syntax errors first.

Whenever the pieces cannot reproduce the whole-file answer exactly — a
syntax error (its recovery may cross functions), the preprocessor (global
definitions), strings (a `;` or brace inside one), a function defined twice,
a malformed `; std:` declaration, or a single function — the whole file is
checked with `tinyc.compiler.check_source`. tests/editor/test_checking.py
compares both on many programs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tinyc.diagnostics import CompilationError, Diagnostic, Source, in_source_order
from tinyc.ir.core import Function, Program
from tinyc.std import Marker, Std, Version, declaration, decide, parse_std

_FUNC_LINE = re.compile(r"[ \t]*func(?![A-Za-z0-9_.])")


@dataclass
class Checked:
    """The outcome of checking one text: what `tinyc check` reports, and the program when it
    parsed (for navigation), even if it does not verify."""

    diagnostics: list[Diagnostic]          # errors and warnings, in the order check prints them
    program: Program | None = None
    internal_error: str | None = None

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


@dataclass
class _Piece:
    """One piece's parse: its functions, version markers and name errors; verification per
    version."""

    functions: list[Function]
    markers: list[Marker]
    name_errors: list[Diagnostic]
    verified: dict[Version, tuple[list[Diagnostic], list[Diagnostic]]] = field(default_factory=dict)


def pieces(text: str) -> list[tuple[int, str]] | None:
    """(first line, text) of each piece, every function starting a new one; None when the
    file cannot be cut safely (see the module docstring)."""
    if '"' in text or "$" in text or "!" in text:
        return None
    lines = text.split("\n")
    starts: list[int] = []
    depth = 0
    for number, line in enumerate(lines):
        code = line.split(";", 1)[0]
        if depth == 0 and _FUNC_LINE.match(code):
            starts.append(number)
        if "{" in code or "}" in code:
            depth += code.count("{") - code.count("}")
            if depth < 0:
                return None
    if len(starts) < 2:
        return None
    starts[0] = 0  # what comes before the first function belongs to it
    bounds = [*starts, len(lines)]
    return [(bounds[k] + 1, "\n".join(lines[bounds[k]:bounds[k + 1]])
             + ("\n" if bounds[k + 1] < len(lines) else ""))
            for k in range(len(starts))]


class FunctionChecker:
    """Checks successive texts of one document, reusing the pieces that did not change."""

    def __init__(self, name: str = "<string>", std: Std | str | None = None):
        self.name = name
        self.std = parse_std(std)
        self._pieces: dict[tuple[int, str], _Piece] = {}

    def check(self, text: str) -> Checked:
        """What `check_source(text, name, std)` reports, and the program if it parsed."""
        from tinyc.parser import gc_paused

        try:
            with gc_paused():
                cut = pieces(text)
                found = self._by_pieces(text, cut) if cut is not None else None
                return found if found is not None else _whole(text, self.name, self.std)
        except RecursionError:
            return Checked([], None, "the program is nested too deeply to check")
        except Exception as exc:  # a bug in tinyc: say so, never crash the editor
            return Checked([], None, f"internal error in tinyc: {type(exc).__name__}: {exc}")

    def _by_pieces(self, text: str, cut: list[tuple[int, str]]) -> Checked | None:
        source = Source(text, self.name)
        try:
            declared = declaration(source)
        except CompilationError:
            return None
        kept: dict[tuple[int, str], _Piece] = {}
        for key in cut:
            piece = self._pieces.get(key) or self._parse(*key)
            if piece is None:
                self._pieces = kept
                return None
            kept[key] = piece
        self._pieces = kept
        parsed = list(kept.values())
        functions = [fn for piece in parsed for fn in piece.functions]
        if len({fn.name for fn in functions}) != len(functions):
            return None  # the parser's redefinition error names both places
        name_errors = [d for piece in parsed for d in piece.name_errors]
        if name_errors:
            return Checked(in_source_order(name_errors))
        version = decide(self.std, declared, _first_markers(parsed))
        program = Program(functions, source=source, version=version)
        errors: list[Diagnostic] = []
        warnings: list[Diagnostic] = []
        for piece in parsed:
            found = piece.verified.get(version)
            if found is None:
                found = piece.verified[version] = _verify(piece.functions, version)
            errors += found[0]
            warnings += found[1]
        if not errors:
            program.warnings = in_source_order(warnings)
            return Checked(program.warnings, program)
        return Checked(CompilationError(in_source_order(errors), warnings).all_diagnostics, program)

    def _parse(self, first_line: int, piece: str) -> _Piece | None:
        from tinyc.parser import parse_functions

        try:
            functions, markers, name_errors = parse_functions("\n" * (first_line - 1) + piece,
                                                              self.name, self.std)
        except CompilationError:
            return None  # a syntax error: the whole file's recovering parse reports it
        return _Piece(functions, list(markers), list(name_errors))


def _first_markers(parsed: list[_Piece]) -> list[Marker]:
    """The first marker of each version in the file, as one parse of it keeps them."""
    first: dict[Std, Marker] = {}
    for piece in parsed:
        for marker in piece.markers:
            first.setdefault(marker.std, marker)
    return list(first.values())


def _verify(functions: list[Function], version: Version) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings) of some functions, as `verify` finds them in a whole program."""
    from tinyc.ir.verifier import verify
    from tinyc.lint import WarningOptions

    try:
        return [], verify(Program(functions, version=version), warnings=WarningOptions())
    except CompilationError as err:
        return err.diagnostics, err.warnings


def _whole(text: str, name: str, std: Any) -> Checked:
    """The whole file as `check_source` checks it (parse, then verify with the default
    warnings), keeping the program when only verification fails."""
    from tinyc.ir.verifier import verify
    from tinyc.lint import WarningOptions
    from tinyc.parser import parse

    try:
        program = parse(text, name, std)
    except CompilationError as err:
        return Checked(err.all_diagnostics)
    try:
        program.warnings = verify(program, warnings=WarningOptions())
    except CompilationError as err:
        return Checked(err.all_diagnostics, program)
    return Checked(program.warnings, program)
