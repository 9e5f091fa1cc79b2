"""Helpers for the parser tests: structural IR equality, round trips, error capture."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinyc.diagnostics import CompilationError, Diagnostic
from tinyc.parser import parse

from ir_equality import assert_same_ir, roundtrip  # noqa: F401  (re-exported for the parser tests)

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "samples").glob("*.ir"))

def errors_of(text: str, name: str = "test.ir") -> list[Diagnostic]:
    """The diagnostics `parse` raises for `text` (fails the test if it parses)."""
    with pytest.raises(CompilationError) as info:
        parse(text, name)
    return info.value.diagnostics


def error_of(text: str) -> Diagnostic:
    """The single diagnostic for `text`."""
    diagnostics = errors_of(text)
    assert len(diagnostics) == 1, [str(d) for d in diagnostics]
    return diagnostics[0]


def where(d: Diagnostic) -> tuple[int, int, int]:
    """(line, column, end_column) of a diagnostic."""
    return d.line, d.column, d.end_column
