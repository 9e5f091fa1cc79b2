"""What the language server knows about one text: diagnostics, names, words.

Diagnostics come from the editor's check (tinyc/editor/checking.py), which
gives exactly `tinyc check`'s. Names (hover, definitions, references,
completion of values) come from the IR that check built, with its spans: a
walk of it, no parse. A text that never parsed gets its names by blanking
the line of a syntax error (or adding a missing `}` at the end) and parsing
the rest again; once a text has parsed, the language server keeps its names
while one types (tinyc/editor/documents.py). Tokens are lexed a line at a
time, when a request needs them.

Everything here works on offsets into the text; `tinyc.positions`
turns them into LSP positions. Nothing here may raise on any text.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from typing import Iterator

from tinyc.diagnostics import CompilationError, Diagnostic, Span
from tinyc.editor import vocabulary
from tinyc.editor.checking import Checked
from tinyc.editor.completion import CompletionWord, complete  # noqa: F401 (CompletionWord: re-exported)
from tinyc.positions import LineIndex
from tinyc.editor.tokens import EditorToken, editor_tokens

MAX_RECOVERY = 8
"""Syntax errors blanked out, at most, to recover a program for navigation."""


class Symbol:
    """A named value or function: where it is defined and what it is.

    `type` and `what` are worked out when asked (a hover, a completion), not
    for each of the thousands of values of a generated kernel."""

    __slots__ = ("name", "start", "end", "_type", "_what", "function")

    def __init__(self, name: str, start: int, end: int, type, what, function: str | None = None):
        self.name = name          # `%A` or `@f`
        self.start = start        # offsets of the defining name
        self.end = end
        self._type = type         # a Type (or its text), None for functions
        self._what = what         # "argument of @f", or a function that says it
        self.function = function

    @property
    def type(self) -> str | None:
        """The type as the printer writes it."""
        return None if self._type is None else str(self._type)

    @property
    def what(self) -> str:
        """"argument of @f", "result of gemm.n.t", ..."""
        if callable(self._what):
            self._what = self._what()
        return self._what


@dataclass(slots=True)
class Occurrence:
    start: int
    end: int
    symbol: Symbol
    is_definition: bool


@dataclass
class FunctionInfo:
    name: str
    start: int           # the whole function
    end: int
    name_start: int      # its `@name`
    name_end: int
    signature: str


@dataclass
class Analysis:
    """Navigation of one text. `checked` is its check (tinyc/editor/checking.py; made here if
    not given). With `lazy`, the names are found by running `build()` (the language server
    does it a slice at a time, between requests); otherwise at once."""

    text: str
    name: str = "<string>"
    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal_error: str | None = None
    occurrences: list[Occurrence] = field(default_factory=list)
    functions: list[FunctionInfo] = field(default_factory=list)
    checked: Checked | None = field(default=None, repr=False)
    lazy: bool = False

    def __post_init__(self) -> None:
        self.index = LineIndex(self.text)
        self._tokens: list[EditorToken] | None = None
        self._line_tokens: dict[int, list[EditorToken]] = {}
        if self.checked is None:
            self.checked = check_text(self.text, self.name)
        self.diagnostics = list(self.checked.diagnostics)
        self.internal_error = self.checked.internal_error
        self._occurrence_starts: list[int] = []
        self.complete = False
        if not self.lazy:
            for _ in self.build():
                pass

    @property
    def tokens(self) -> list[EditorToken]:
        """Every token of the text (made on first use: the editor's queries lex one line)."""
        if self._tokens is None:
            self._tokens = editor_tokens(self.text)
        return self._tokens

    # ------------------------------------------------------------ names

    def build(self, slice_size: int = 400) -> Iterator[None]:
        """Find every name and function; yields after each `slice_size` instructions."""
        program = self.checked.program if self.checked is not None else None
        if program is None and self.internal_error is None:
            program = _recover_program(self.text, self.name)
        if program is None:
            self._lexical_functions()
        else:
            budget = [slice_size]
            for fn in program.functions:
                yield from self._function(fn, budget, slice_size)
        self.occurrences.sort(key=lambda o: o.start)
        self._occurrence_starts = [o.start for o in self.occurrences]
        self.complete = True

    def _function(self, fn, budget: list[int], slice_size: int) -> Iterator[None]:
        start, end = self._offsets(fn.span) if fn.span else (0, 0)
        name_start = self.text.find(f"@{fn.name}", start)
        if name_start < 0:
            return
        arg_types = ", ".join(f"%{a.name}: {a.type}" for a in fn.args)
        info = FunctionInfo(f"@{fn.name}", start, end, name_start, name_start + len(fn.name) + 1,
                            f"func @{fn.name}({arg_types})")
        self.functions.append(info)
        fn_symbol = Symbol(info.name, info.name_start, info.name_end, None, info.signature)
        self.occurrences.append(Occurrence(info.name_start, info.name_end, fn_symbol, True))
        symbols: dict[int, Symbol] = {}
        for arg in fn.args:
            self._define(symbols, arg, f"argument of @{fn.name}", fn.name)
        yield from self._region(symbols, fn.body, fn.name, budget, slice_size)

    def _region(self, symbols: dict[int, Symbol], region, fn_name: str, budget: list[int],
                slice_size: int) -> Iterator[None]:
        occurrences, offsets, lookup = self.occurrences, self._offsets, symbols.get
        for inst in region.instructions:
            budget[0] -= 1
            if budget[0] <= 0:
                budget[0] = slice_size
                yield
            for value, span in zip(inst.operands, inst.operand_spans):
                symbol = lookup(id(value))
                if symbol is not None and span is not None:
                    start, end = offsets(span)
                    occurrences.append(Occurrence(start, end, symbol, False))
            if not (inst.regions or inst.results):
                continue
            describe = self._describer(inst)
            for inner in inst.regions:
                for arg in inner.args:
                    self._define(symbols, arg, describe("loop variable of"), fn_name)
                yield from self._region(symbols, inner, fn_name, budget, slice_size)
            for result in inst.results:
                self._define(symbols, result, describe("result of"), fn_name)

    def _describer(self, inst):
        """`describe("result of")`: a function saying "result of gemm.n.t" when asked."""
        at = self._offsets(inst.span)[0] if inst.span else None

        def describe(kind: str):
            return lambda: f"{kind} {(at is not None and self._spelling_after(at)) or inst.opname}"

        return describe

    def _define(self, symbols: dict[int, Symbol], value, what, fn_name: str) -> None:
        if value.span is None or not value.name:
            return
        start, end = self._offsets(value.span)
        if self.text[start:start + 1] != "%":
            return
        symbol = Symbol(f"%{value.name}", start, end, value.type, what, fn_name)
        symbols[id(value)] = symbol
        self.occurrences.append(Occurrence(start, end, symbol, True))

    def _lexical_functions(self) -> None:
        """Functions by their `func @name` words, when no program could be recovered."""
        heads = list(_FUNCTION_HEAD.finditer(self.text))
        for n, m in enumerate(heads):
            end = heads[n + 1].start() if n + 1 < len(heads) else len(self.text)
            self.functions.append(FunctionInfo(m.group(1), m.start(), end, m.start(1), m.end(1),
                                               f"func {m.group(1)}(…)"))

    def _offsets(self, span: Span) -> tuple[int, int]:
        """[start, end) of a span; the parser's spans are inside the text (fast path)."""
        starts = self.index.compiler_lines
        try:
            start = starts[span.line - 1] + span.column - 1
            end = starts[span.end_line - 1] + span.end_column
        except IndexError:
            return self.index.span_offsets(span)
        if span.line < 1 or span.end_line < 1 or end < start or end > len(self.text):
            return self.index.span_offsets(span)
        return start, end

    # ------------------------------------------------------------ tokens

    def line_tokens(self, offset: int) -> list[EditorToken]:
        """The tokens of the line holding `offset` (lexed alone: no token spans lines)."""
        return line_tokens(self.text, self.index, offset, self._line_tokens)

    def _spelling_after(self, offset: int) -> str | None:
        """The instruction spelled at or after `offset` (`gemm.n.t`): after the results."""
        m = _INSTRUCTION_AT.match(self.text, offset)
        return m.group(1) if m else None

    @staticmethod
    def spelling_at(tokens: list[EditorToken], i: int) -> str | None:
        """The whole instruction name around token i: its head and glued modifiers."""
        if tokens[i].role not in ("instruction", "modifier"):
            return None
        while i > 0 and tokens[i].role == "modifier" and tokens[i - 1].end == tokens[i].start \
                and tokens[i - 1].role in ("instruction", "modifier"):
            i -= 1
        if tokens[i].role != "instruction":
            return None
        spelling, j = tokens[i].text, i + 1
        while j < len(tokens) and tokens[j].role == "modifier" and tokens[j].start == tokens[j - 1].end:
            spelling += tokens[j].text
            j += 1
        return spelling

    # ------------------------------------------------------------ queries

    def occurrence_at(self, offset: int) -> Occurrence | None:
        i = bisect.bisect_right(self._occurrence_starts, offset) - 1
        for j in (i, i - 1):
            if 0 <= j < len(self.occurrences):
                o = self.occurrences[j]
                if o.start <= offset <= o.end:
                    return o
        return None

    def references(self, symbol: Symbol) -> list[Occurrence]:
        return [o for o in self.occurrences if o.symbol is symbol]

    def hover(self, offset: int) -> tuple[str, int, int] | None:
        """(markdown, start, end) of what is under the cursor, or None."""
        return hover(self.line_tokens(offset), offset, self,
                     lambda symbol: self.index.position(symbol.start)[0] + 1)

    def function_at(self, offset: int) -> FunctionInfo | None:
        return next((f for f in self.functions if f.start <= offset <= f.end), None)

    def definitions_before(self, offset: int) -> list[Symbol]:
        """The values defined before `offset` in its function, in order."""
        function = self.function_at(offset)
        return [o.symbol for o in self.occurrences
                if o.is_definition and o.symbol.name.startswith("%") and o.start < offset
                and (function is None or o.symbol.function == function.name[1:])]

    def completion(self, offset: int) -> tuple[int, list[CompletionWord]]:
        """(start of the word being typed, the words that may go there): see completion.py."""
        return complete(self.text, offset, lambda: (self, _same, _same))[:2]


def line_tokens(text: str, index: LineIndex, offset: int,
                cache: dict[int, list[EditorToken]] | None = None) -> list[EditorToken]:
    """The tokens of the line of `text` holding `offset` (lexed alone: no token spans lines)."""
    starts = index.compiler_lines
    line = bisect.bisect_right(starts, min(max(offset, 0), len(text))) - 1
    found = cache.get(line) if cache is not None else None
    if found is None:
        begin = starts[line]
        end = starts[line + 1] if line + 1 < len(starts) else len(text)
        found = [EditorToken(t.type, t.text, t.role, t.start + begin, t.end + begin, line + 1,
                             t.column) for t in editor_tokens(text[begin:end])]
        if cache is not None:
            cache[line] = found
    return found


def hover(tokens: list[EditorToken], offset: int, names: "Analysis", line_of,
          to_names=lambda offset: offset) -> tuple[str, int, int] | None:
    """(markdown, start, end) for the cursor at `offset` on a line of `tokens`: an instruction's
    summary, or a name's type and definition from `names` (perhaps of an earlier text: `to_names`
    maps the offset there, `line_of(symbol)` gives the line of its definition)."""
    i = _token_at(tokens, offset)
    if i is None:
        return None
    token = tokens[i]
    if token.role in ("instruction", "modifier"):
        spelling = Analysis.spelling_at(tokens, i)
        return (_instruction_markdown(spelling), token.start, token.end) if spelling else None
    if token.type in ("LOCAL_ID", "GLOBAL_ID"):
        old = to_names(offset)
        found = names.occurrence_at(old) if old is not None else None
        if found is None:
            return None
        symbol = found.symbol
        if symbol.type is None:
            return f"```tinyc\n{symbol.what}\n```", token.start, token.end
        line = line_of(symbol)
        where = f", defined on line {line}" if line is not None else ""
        return f"```tinyc\n{symbol.name}: {symbol.type}\n```\n{symbol.what}{where}", token.start, token.end
    return None


def _token_at(tokens: list[EditorToken], offset: int) -> int | None:
    """Index of the token under (or just before) the cursor at `offset`."""
    i = bisect.bisect_right([t.start for t in tokens], offset) - 1
    if i >= 0 and tokens[i].start <= offset <= tokens[i].end:
        if offset == tokens[i].end and i + 1 < len(tokens) and tokens[i + 1].start == offset:
            return i + 1
        return i
    return None


def _same(offset: int, clamp: bool = False) -> int:
    return offset


def check_text(text: str, name: str = "<string>") -> Checked:
    """What `tinyc check` reports for `text`, with the program (tinyc/editor/checking.py)."""
    from tinyc.editor.checking import FunctionChecker

    return FunctionChecker(name).check(text)


_FUNCTION_HEAD = re.compile(r"\bfunc\s+(@[A-Za-z0-9_.$-]+)")
_INSTRUCTION_AT = re.compile(
    r"(?:%[A-Za-z0-9_.$]+\s*(?:,\s*%[A-Za-z0-9_.$]+\s*)*=\s*)?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)")
"""An instruction from its start: the results (if any), then its name with glued modifiers."""
def _instruction_markdown(spelling: str) -> str:
    """`**gemm.n.t** (collective)` and the one-line summary."""
    word = vocabulary.lookup(spelling)
    if word is None:  # an unfinished spelling such as `gemm.n`: the first variant tells
        head = spelling.split(".")[0]
        word = next((w for w in vocabulary.instructions()
                     if w.spelling.startswith(spelling) or w.head == head), None)
    if word is None:
        return f"`{spelling}`"
    return f"**{spelling}** ({word.kind} instruction)\n\n{word.summary}"


def _recover_program(text: str, name: str):
    """The IR of `text`, blanking lines with syntax errors (up to MAX_RECOVERY); or None."""
    from tinyc.parser import parse_partial

    attempt = text
    for _ in range(MAX_RECOVERY):
        try:
            program, _errors = parse_partial(attempt, name)
            return program
        except CompilationError as err:
            d = err.diagnostics[0] if err.diagnostics else None
            if d is None or d.span is None:
                return None
            if d.message.startswith("unexpected end of input"):
                attempt += "\n}"
                continue
            attempt = _blank_line(attempt, d.span)
            if attempt is None:
                return None
        except Exception:
            return None
    return None


def _blank_line(text: str, span: Span) -> str | None:
    """`text` with the line of a syntax error made white space (None if it already is).

    An error at the first token of a line is usually the previous line's
    fault (`%x = constant 1.0 :` then a new instruction), so that line goes.
    """
    starts = LineIndex(text).compiler_lines
    line = min(max(span.line, 1), len(starts))
    start = starts[line - 1]
    if not text[start:start + max(span.column - 1, 0)].strip():
        previous = line - 1
        while previous >= 1 and not text[starts[previous - 1]:starts[previous] - 1].strip():
            previous -= 1
        if previous >= 1:
            start = starts[previous - 1]
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if not text[start:end].strip():
        return None
    return text[:start] + " " * (end - start) + text[end:]
