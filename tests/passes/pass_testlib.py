"""Helpers for pass tests written as annotated .ir text.

An annotated text is the *expected* output with two kinds of marks:

    barrier.global                 ; +                      only in the output
    barrier.local                  ; => barrier.global.local  input left, output right

The input is the text with `; +` lines removed and `; =>` lines cut before
the mark; the expected output is the text with `; +` marks dropped and `; =>`
lines replaced by their right side. Both sides are parsed; the input is also
verified; the comparison is between printed IR, so white space is free.
"""

from __future__ import annotations

import difflib
from typing import Callable, Iterable

from tinyc.ir.core import Function, Program
from tinyc.ir.printer import print_program
from tinyc.ir.verifier import verify
from tinyc.parser import parse
from tinyc.passes import PassOptions

Pass = Callable[[Function, PassOptions], None]

LAYOUT_ATTRS = ("stack_offset", "local_memory_size", "local_memory_alignment")


def split(annotated: str) -> tuple[str, str]:
    """(input text, expected text) of an annotated text."""
    source, expected = [], []
    for line in annotated.splitlines():
        code, mark, comment = line.partition(";")
        comment = comment.strip()
        if mark and comment == "+":
            expected.append(code)
        elif mark and comment.startswith("=>"):
            source.append(code)
            expected.append(comment[2:])
        else:
            source.append(line)
            expected.append(line)
    return "\n".join(source), "\n".join(expected)


def parse_checked(text: str) -> Program:
    """Parse and verify, so every test input is valid tensor language."""
    program = parse(text, "test.ir")
    verify(program)
    return program


def run(text: str, passes: Iterable[Pass], options: PassOptions | None = None) -> Program:
    """The checked program after `passes` ran on each function."""
    program = parse_checked(text)
    options = options or PassOptions()
    for run_pass in passes:
        for fn in program.functions:
            run_pass(fn, options)
    return program


def strip_attrs(program: Program, names: Iterable[str]) -> Program:
    """Drop attributes `names` from functions and instructions (to compare the rest)."""
    names = tuple(names)
    for fn in program.functions:
        for name in names:
            fn.attrs.pop(name, None)
        for inst in fn.walk():
            for name in names:
                inst.attrs.pop(name, None)
    return program


def check_rewrite(annotated: str, passes: Iterable[Pass], options: PassOptions | None = None,
                  ignore: Iterable[str] = ()) -> Program:
    """Run `passes` on the input of `annotated`; assert the printed result is the expected text."""
    source, expected = split(annotated)
    program = run(source, passes, options)
    actual = print_program(strip_attrs(program, ignore))
    wanted = print_program(parse(expected, "expected.ir"))
    if actual != wanted:
        diff = "\n".join(difflib.unified_diff(wanted.splitlines(), actual.splitlines(),
                                              "expected", "actual", lineterm=""))
        raise AssertionError(f"IR differs from the expected text:\n{diff}")
    return program


def instructions(fn: Function, opname: str) -> list:
    """Instructions of `fn` with this opname, in program order."""
    return [inst for inst in fn.walk() if inst.opname == opname]
