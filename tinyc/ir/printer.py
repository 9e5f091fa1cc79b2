"""IR back to tensor-language text that parses to an equal IR.

Source names are kept; compiler-made values get fresh numbers that do not
clash with any name in the function. The text is spelled in one version of
the language (tinyc.std): the program's own by default, or the one asked
for, which makes the printer a migration aid (`--emit ir --std newest`).
What the chosen version cannot spell is a diagnostic (`NotExpressible`).
"""

from __future__ import annotations

from typing import Any

from tinyc.diagnostics import CompilationError, DiagnosticSink
from tinyc.ir.core import Function, Instruction, Program, Region, Value
from tinyc.std import DEFAULT, Std


class Printer:
    """Holds the naming state while one function is printed in version `std`."""

    def __init__(self, indent: str = "  ", std: Std = DEFAULT):
        self.indent_unit = indent
        self.std = std
        self.depth = 0
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.counter = 0
        self.sink = DiagnosticSink()   # what `std` cannot spell
        self._preludes: list[str] = []
        self._unnamed = False

    @property
    def newest(self) -> bool:
        return self.std is Std.NEWEST

    def spell(self, inst: Instruction, seed: str | None, newest: str | None) -> str:
        """The word of the printer's version; a diagnostic if that version has none."""
        word = newest if self.newest else seed
        if word is None:
            other = seed if self.newest else newest
            self.cannot(inst, f"'{other}'")
            return str(other)
        return word

    def cannot(self, inst: Instruction, what: str) -> None:
        """Report that the printer's version has no spelling for `what` of `inst`."""
        self.sink.error(f"{what} cannot be written in {self.std.language}", inst.span)

    def fresh(self, hint: str) -> str:
        """`%name` for a value the printed text needs and the IR does not have."""
        name, k = hint, 0
        while name in self.used:
            k += 1
            name = f"{hint}{k}"
        self.used.add(name)
        return "%" + name

    def prelude(self, line: str) -> None:
        """An instruction printed before the current one (`%n_x = num_subgroups.x : i32`)."""
        self._preludes.append(line)

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
        outer, self._preludes = self._preludes, []
        self._unnamed = False
        body = inst.format(self)
        before = "".join(pad + line + "\n" for line in self._preludes)
        self._preludes = outer
        if self._unnamed:
            names = ""
        return before + pad + (names + " = " if names else "") + body

    def without_results(self) -> None:
        """Print the current instruction without its result names: its spelling in this
        version has none (the seed's `store.atomic_add` for an unused `atomic_add`)."""
        self._unnamed = True

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


def print_function(fn: Function, std: Std = DEFAULT) -> str:
    return Printer(std=std).function(fn)


def print_program(program: Program, std: Std | None = None, declare: bool = False) -> str:
    """The whole program as source text, spelled in `std` (default: the program's version).

    With `declare`, the text starts with the version's declaration (`; std:
    newest`), so that it keeps the version's meaning when read back even
    where it only uses spellings both versions share. Raises
    CompilationError for what `std` cannot spell (a newest-only instruction
    printed as seed), each located at its instruction.
    """
    printer = Printer(std=std or program.std)
    text = "\n\n".join(printer.function(f) for f in program.functions) + "\n"
    printer.sink.raise_if_any()
    return f"; std: {printer.std.value}\n" + text if declare else text
