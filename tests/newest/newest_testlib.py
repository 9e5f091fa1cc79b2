"""Helpers for the tests of the newest language and of the version rules (docs/newest.md)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from tinyc.diagnostics import CompilationError, Diagnostic
from tinyc.ir.core import Program
from tinyc.ir.printer import print_program
from tinyc.ir.verifier import verify
from tinyc.parser import parse
from tinyc.std import Std

from ir_equality import assert_same_ir

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "samples").glob("*.ir"))


def fn(body: str, args: str = "", attrs: str = "") -> str:
    """`func @k(args) [attributes attrs] {` + body + `}`; the body starts on line 2."""
    head = f"func @k({args})" + (f" attributes {attrs}" if attrs else "") + " {\n"
    return head + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n}\n"


def checked(text: str, std: Std | None = None) -> Program:
    """Parsed and verified; also survives printing in its own version and reading back."""
    program = parse(text, "test.ir", std)
    verify(program)
    printed = print_program(program)
    again = parse(printed, "printed.ir", std)
    assert print_program(again) == printed
    assert_same_ir(program, again)
    return program


def errors(text: str, std: Std | None = None) -> list[Diagnostic]:
    """The diagnostics of parsing and verifying `text` (fails the test if it checks)."""
    with pytest.raises(CompilationError) as info:
        verify(parse(text, "test.ir", std))
    return info.value.diagnostics


def error(text: str, std: Std | None = None) -> Diagnostic:
    found = errors(text, std)
    assert len(found) == 1, [str(d) for d in found]
    return found[0]


def at(text: str, needle: str) -> tuple[int, int]:
    """1-based (line, column) of the first `needle` in `text`."""
    start = text.index(needle)
    return text.count("\n", 0, start) + 1, start - (text.rfind("\n", 0, start) + 1) + 1


def located(d: Diagnostic, text: str, needle: str) -> bool:
    return (d.line, d.column) == at(text, needle)


def migrated(text: str, to: Std) -> str:
    """`text` printed in the spelling of version `to` (what `--emit ir --std` does)."""
    return print_program(parse(text, "test.ir"), to)


def same_meaning(a: str, b: str) -> None:
    """Two texts read to the same IR (spellings aside)."""
    assert_same_ir(parse(a, "a.ir"), parse(b, "b.ir"))


def only(program: Program) -> Any:
    """The single instruction of the single function."""
    (inst,) = program.functions[0].body.instructions
    return inst
