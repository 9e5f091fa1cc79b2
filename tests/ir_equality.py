"""Structural IR equality and the parse → print → parse round trip, for every test that parses."""

from __future__ import annotations

from tinyc.ir.core import Function, Instruction, Program, Region, Value
from tinyc.ir.printer import print_program
from tinyc.parser import parse

# Instruction fields that are not part of its meaning, or compared separately.
_SKIP_FIELDS = {"operands", "results", "regions", "span", "parent", "operand_spans", "type_span",
                "spelling", "loop_type_written"}  # the keyword as written: seed and newest spellings mean the same


class _Numbering:
    """Values numbered in definition order, so two IRs can be compared by position."""

    def __init__(self) -> None:
        self.numbers: dict[int, int] = {}

    def define(self, value: Value) -> None:
        self.numbers[id(value)] = len(self.numbers)

    def of(self, value: Value) -> int:
        assert id(value) in self.numbers, f"{value!r} is used but never defined"
        return self.numbers[id(value)]


def assert_same_ir(a: Program, b: Program) -> None:
    """Same functions, argument types and attributes, instructions field by field."""
    assert [f.name for f in a.functions] == [f.name for f in b.functions]
    for fa, fb in zip(a.functions, b.functions):
        _same_function(fa, fb)


def _same_function(fa: Function, fb: Function) -> None:
    assert fa.attrs == fb.attrs, fa.name
    assert [(v.type, v.attrs) for v in fa.args] == [(v.type, v.attrs) for v in fb.args]
    na, nb = _Numbering(), _Numbering()
    for va, vb in zip(fa.args, fb.args):
        na.define(va)
        nb.define(vb)
    _same_region(fa.body, fb.body, na, nb)


def _same_region(ra: Region, rb: Region, na: _Numbering, nb: _Numbering) -> None:
    assert [v.type for v in ra.args] == [v.type for v in rb.args]
    for va, vb in zip(ra.args, rb.args):
        na.define(va)
        nb.define(vb)
    assert len(ra.instructions) == len(rb.instructions)
    for ia, ib in zip(ra.instructions, rb.instructions):
        _same_instruction(ia, ib, na, nb)


def _same_instruction(ia: Instruction, ib: Instruction, na: _Numbering, nb: _Numbering) -> None:
    assert type(ia) is type(ib), (ia, ib)
    fields_a = {k: v for k, v in vars(ia).items() if k not in _SKIP_FIELDS}
    fields_b = {k: v for k, v in vars(ib).items() if k not in _SKIP_FIELDS}
    assert fields_a == fields_b, (ia, fields_a, fields_b)
    assert [na.of(v) for v in ia.operands] == [nb.of(v) for v in ib.operands], ia
    assert [v.type for v in ia.results] == [v.type for v in ib.results], ia
    assert len(ia.regions) == len(ib.regions)
    for ra, rb in zip(ia.regions, ib.regions):
        _same_region(ra, rb, na, nb)
    for va, vb in zip(ia.results, ib.results):
        na.define(va)
        nb.define(vb)


def roundtrip(text: str) -> Program:
    """parse → print → parse; asserts both parses agree in text and in structure."""
    first = parse(text)
    printed = print_program(first)
    second = parse(printed)
    assert print_program(second) == printed
    assert_same_ir(first, second)
    return first
