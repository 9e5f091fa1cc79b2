"""IR back to tensor-language text that parses to an equal IR.

Source names are kept; compiler-made values get fresh numbers that do not
clash with any name in the function.
"""

from __future__ import annotations

from typing import Any

from tinyc.ir.core import Function, Instruction, Program, Region, Value


class Printer:
    """Holds the naming state while one function is printed."""

    def __init__(self, indent: str = "  "):
        self.indent_unit = indent
        self.depth = 0
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.counter = 0

    def _reserve_source_names(self, fn: Function) -> None:
        self.used.update(a.name for a in fn.args if a.name)
        for inst in fn.walk():
            self.used.update(r.name for r in inst.results if r.name)
            for region in inst.regions:
                self.used.update(a.name for a in region.args if a.name)

    def v(self, value: Value) -> str:
        """`%name` of a value, inventing one for compiler-made values."""
        name = self.names.get(id(value))
        if name is None:
            if value.name:
                name = value.name
            else:
                while str(self.counter) in self.used:
                    self.counter += 1
                name = str(self.counter)
                self.used.add(name)
            self.names[id(value)] = name
        return "%" + name

    def attrs(self, attrs: dict[str, Any]) -> str:
        return "{" + ", ".join(f"{_attr_name(k)}={format_attribute(v)}" for k, v in attrs.items()) + "}"

    def region(self, region: Region) -> str:
        self.depth += 1
        lines = [self.instruction(inst) for inst in region.instructions]
        self.depth -= 1
        pad = self.indent_unit * self.depth
        if not lines:
            return "{\n" + pad + "}"
        return "{\n" + "\n".join(lines) + "\n" + pad + "}"

    def instruction(self, inst: Instruction) -> str:
        pad = self.indent_unit * self.depth
        names = ", ".join(self.v(r) for r in inst.results)
        body = inst.format(self)
        return pad + (names + " = " if names else "") + body

    def function(self, fn: Function) -> str:
        self.names.clear()
        self.used.clear()
        self.counter = 0
        self._reserve_source_names(fn)
        args = []
        for a in fn.args:
            text = f"{self.v(a)}: {a.type}"
            if a.attrs:
                text += " " + self.attrs(a.attrs)
            args.append(text)
        head = f"func @{fn.name}(" + ",\n    ".join(args) + ")"
        if fn.attrs:
            head += " attributes " + self.attrs(fn.attrs)
        return head + " " + self.region(fn.body)


_KEYWORD_ATTRIBUTES = {"alignment", "shape_gcd", "stride_gcd", "subgroup_size", "unroll",
                       "work_group_size"}


def _attr_name(name: str) -> str:
    return name if name in _KEYWORD_ATTRIBUTES else format_attribute(name)


def format_attribute(value: Any) -> str:
    """An attribute value in the grammar's syntax."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_attribute(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_attr_name(k)}={format_attribute(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not an attribute: {value!r}")


def print_function(fn: Function) -> str:
    return Printer().function(fn)


def print_program(program: Program) -> str:
    """The whole program as source text."""
    return "\n\n".join(print_function(f) for f in program.functions) + "\n"
