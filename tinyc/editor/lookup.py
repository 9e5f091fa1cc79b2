"""Names found by looking, not by indexing: the language server's answer before the names of
a large file are all found (tinyc/editor/documents.py).

`PointNames` answers what `Analysis` answers — the name at an offset, its uses, the
functions, the values defined before an offset — by walking the IR of the text that
parsed, skipping every instruction that ends before the place asked about. No index is
built, so the first hover in a 40,000-instruction function costs a walk of its
instructions' line numbers, not the minutes of CPU of finding every name.
"""

from __future__ import annotations

import bisect
from typing import Iterator

from tinyc.diagnostics import Span
from tinyc.editor.analysis import FunctionInfo, Occurrence, Symbol, _INSTRUCTION_AT
from tinyc.positions import LineIndex


class PointNames:
    """The names of `text` (which parsed into `program`), looked up on demand."""

    def __init__(self, text: str, program) -> None:
        self.text = text
        self.program = program
        self.index = LineIndex(text)
        self._functions: list[FunctionInfo] | None = None

    # ------------------------------------------------------------ positions

    def _offsets(self, span: Span) -> tuple[int, int]:
        return self.index.span_offsets(span)

    def _place(self, offset: int) -> tuple[int, int]:
        """The compiler's (line, column) of an offset."""
        starts = self.index.compiler_lines
        line = bisect.bisect_right(starts, min(max(offset, 0), len(self.text))) - 1
        return line + 1, offset - starts[line] + 1

    @staticmethod
    def _covers(span: Span | None, line: int, column: int) -> bool:
        return span is not None and (span.line, span.column) <= (line, column) \
            <= (span.end_line, span.end_column + 1)

    # ------------------------------------------------------------ what Analysis answers

    @property
    def functions(self) -> list[FunctionInfo]:
        if self._functions is None:
            self._functions = []
            for fn in self.program.functions:
                start, end = self._offsets(fn.span) if fn.span else (0, 0)
                at = self.text.find(f"@{fn.name}", start)
                if at >= 0:
                    signature = ", ".join(f"%{a.name}: {a.type}" for a in fn.args)
                    self._functions.append(FunctionInfo(f"@{fn.name}", start, end, at,
                                                        at + len(fn.name) + 1,
                                                        f"func @{fn.name}({signature})"))
        return self._functions

    def function_at(self, offset: int) -> FunctionInfo | None:
        return next((f for f in self.functions if f.start <= offset <= f.end), None)

    def occurrence_at(self, offset: int) -> Occurrence | None:
        line, column = self._place(offset)
        for f, fn in zip(self.functions, self.program.functions):
            if f.name_start <= offset <= f.name_end:
                symbol = Symbol(f.name, f.name_start, f.name_end, None, f.signature)
                return Occurrence(f.name_start, f.name_end, symbol, True)
            if fn.span is None or not fn.span.line <= line <= fn.span.end_line:
                continue
            for arg in fn.args:
                if self._covers(arg.span, line, column):
                    return self._occurrence(arg, arg.span, fn, f"argument of @{fn.name}", True)
            return self._in_region(fn.body, fn, line, column)
        return None

    def _in_region(self, region, fn, line: int, column: int) -> Occurrence | None:
        for inst in region.instructions:
            span = inst.span
            if span is None or span.end_line < line:
                continue
            if span.line > line:
                break
            for value, at in zip(inst.operands, inst.operand_spans):
                if self._covers(at, line, column):
                    return self._occurrence(value, at, fn, None, False)
            for result in inst.results:
                if result.name and self._covers(result.span, line, column):
                    return self._occurrence(result, result.span, fn, self._what("result of", inst),
                                            True)
            for inner in inst.regions:
                for arg in inner.args:
                    if arg.name and self._covers(arg.span, line, column):
                        return self._occurrence(arg, arg.span, fn,
                                                self._what("loop variable of", inst), True)
                found = self._in_region(inner, fn, line, column)
                if found is not None:
                    return found
        return None

    def _what(self, kind: str, inst) -> str:
        at = self._offsets(inst.span)[0] if inst.span else None
        m = _INSTRUCTION_AT.match(self.text, at) if at is not None else None
        return f"{kind} {m.group(1) if m else inst.opname}"

    def _occurrence(self, value, span: Span, fn, what: str | None, is_definition: bool):
        if value.span is None or not value.name:
            return None
        start, end = self._offsets(value.span)
        if what is None:  # a use: say what its definition is
            definition = self._definition_of(value, fn)
            if definition is None:
                return None
            return Occurrence(*self._offsets(span), definition, False)
        symbol = Symbol(f"%{value.name}", start, end, value.type, what, fn.name)
        return Occurrence(start, end, symbol, is_definition)

    def _definition_of(self, value, fn) -> Symbol | None:
        found = self._occurrence_of_definition(value, fn)
        return found.symbol if found is not None else None

    def _occurrence_of_definition(self, value, fn) -> Occurrence | None:
        line, column = value.span.line, value.span.column
        if any(arg is value for arg in fn.args):
            return self._occurrence(value, value.span, fn, f"argument of @{fn.name}", True)
        found = self._in_region(fn.body, fn, line, column)
        return found if found is not None and found.is_definition else None

    def references(self, symbol: Symbol) -> list[Occurrence]:
        """The definition and every use of a value (or a function's name)."""
        fn = next((f for f in self.program.functions if f.name == (symbol.function or "")), None)
        if fn is None:
            return [Occurrence(symbol.start, symbol.end, symbol, True)]
        found = [Occurrence(symbol.start, symbol.end, symbol, True)]
        value = self._value_defined_at(fn, symbol.start)
        if value is None:
            return found
        for inst in _walk(fn.body):
            for operand, at in zip(inst.operands, inst.operand_spans):
                if operand is value and at is not None:
                    found.append(Occurrence(*self._offsets(at), symbol, False))
        return found

    def _value_defined_at(self, fn, offset: int):
        line, column = self._place(offset)
        for arg in fn.args:
            if self._covers(arg.span, line, column):
                return arg
        for inst in _walk(fn.body):
            for value in [*inst.results, *(a for r in inst.regions for a in r.args)]:
                if value.name and self._covers(value.span, line, column):
                    return value
        return None

    def definitions_before(self, offset: int) -> list[Symbol]:
        """The values defined before `offset` in its function (outside any: in every one)."""
        f = self.function_at(offset)
        found: list[Symbol] = []
        for fn in self.program.functions:
            if f is None or fn.name == f.name[1:]:
                found += self._definitions_before(fn, offset)
        return sorted(found, key=lambda s: s.start)  # (in the text's order, as Analysis)

    def _definitions_before(self, fn, offset: int) -> list[Symbol]:
        found = [Symbol(f"%{a.name}", *self._offsets(a.span), a.type, f"argument of @{fn.name}",
                        fn.name) for a in fn.args
                 if a.span is not None and a.name and self._offsets(a.span)[0] < offset]
        for inst in _walk(fn.body):
            values = [*(a for r in inst.regions for a in r.args), *inst.results]
            for value in values:
                if value.span is None or not value.name:
                    continue
                start, end = self._offsets(value.span)
                if start >= offset:
                    continue
                found.append(Symbol(f"%{value.name}", start, end, value.type,
                                    lambda inst=inst: self._what("result of", inst), fn.name))
        return found


def _walk(region) -> Iterator:
    for inst in region.instructions:
        yield inst
        for inner in inst.regions:
            yield from _walk(inner)
