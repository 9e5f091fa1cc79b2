"""Helpers for verifier tests: parse source text, verify it, compare diagnostics."""

from __future__ import annotations

import textwrap

from tinyc.compiler import compile_to_spirv
from tinyc.diagnostics import CompilationError, Diagnostic
from tinyc.ir.core import Program
from tinyc.ir.verifier import verify
from tinyc.parser import parse as _parse

from ir_equality import roundtrip


def fn(body: str, args: str = "", attrs: str = "") -> str:
    """`func @k(args) [attributes attrs] {` + body + `}`; the body starts on line 2."""
    head = f"func @k({args})" + (f" attributes {attrs}" if attrs else "") + " {\n"
    return head + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n}\n"


def parse(source: str) -> Program:
    """Parse a test program; every one also survives parse → print → parse unchanged."""
    roundtrip(source)
    return _parse(source, "test.ir")


def diagnostics(source: str) -> list[Diagnostic]:
    """The verifier's diagnostics for a program that parses (empty when it verifies)."""
    program = parse(source)
    try:
        verify(program)
    except CompilationError as err:
        return err.diagnostics
    return []


def locate(source: str, needle: str, occurrence: int = 1, after: str | None = None) -> tuple[int, int]:
    """1-based (line, column) of the n-th occurrence of `needle`, searching from `after`."""
    start = source.index(after) - 1 if after else -1
    for _ in range(occurrence):
        start = source.index(needle, start + 1)
    line = source.count("\n", 0, start) + 1
    column = start - (source.rfind("\n", 0, start) + 1) + 1
    return line, column


def expect_ok(source: str) -> None:
    """The program verifies, and — like every accepted program — compiles to
    SPIR-V that spirv-val accepts."""
    found = diagnostics(source)
    assert not found, "unexpected errors:\n" + "\n".join(str(d) for d in found)
    compile_to_spirv(source, "accepted.ir", validate=True)


def expect_error(source: str, message: str, at: str, occurrence: int = 1, exact: bool = True,
                 after: str | None = None) -> Diagnostic:
    """Exactly one error, with this message (or containing it) at the start of `at`.

    `at` is looked for from the first occurrence of `after` (default: the start).
    """
    found = diagnostics(source)
    assert len(found) == 1, f"expected one error, got {len(found)}:\n" + "\n".join(map(str, found))
    d = found[0]
    if exact:
        assert d.message == message
    else:
        assert message in d.message, d.message
    assert (d.line, d.column) == locate(source, at, occurrence, after), str(d)
    return d


def expect_errors(source: str, expected: list[tuple[str, str]]) -> list[Diagnostic]:
    """Every error, in order: (message substring, location needle) pairs."""
    found = diagnostics(source)
    assert len(found) == len(expected), "\n".join(map(str, found))
    for d, (message, at) in zip(found, expected):
        assert message in d.message, d.message
        assert (d.line, d.column) == locate(source, at), str(d)
    return found
