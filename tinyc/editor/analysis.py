"""What the language server knows about one document: diagnostics, names, words.

Diagnostics come from `tinyc.compiler.check_source`, the function behind
`tinyc check`, so the editor shows exactly the CLI's errors. Names (hover,
definitions, references, completion of values) come from the IR the parser
builds, with its spans; while the text has a syntax error, the line of the
error is blanked (or a missing `}` added at the end) and the rest parsed
again, so hover and go-to-definition keep working while one types.

Everything here works on offsets into the text; `tinyc.editor.positions`
turns them into LSP positions. Nothing here may raise on any text.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from tinyc.diagnostics import CompilationError, Diagnostic, Span
from tinyc.editor import vocabulary
from tinyc.editor.positions import LineIndex
from tinyc.editor.tokens import EditorToken, editor_tokens

MAX_RECOVERY = 8
"""Syntax errors blanked out, at most, to recover a program for navigation."""


@dataclass
class Symbol:
    """A named value or function: where it is defined and what it is."""

    name: str              # `%A` or `@f`
    start: int             # offsets of the defining name
    end: int
    type: str | None       # the type as the printer writes it
    what: str              # "argument of @f", "result of gemm.n.t", ...
    function: str | None = None


@dataclass
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
class CompletionWord:
    """One completion: what to insert and how to show it."""

    label: str
    kind: str            # instruction, type, attribute, keyword, value
    detail: str = ""
    documentation: str = ""


@dataclass
class Analysis:
    text: str
    name: str = "<string>"
    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal_error: str | None = None
    occurrences: list[Occurrence] = field(default_factory=list)
    functions: list[FunctionInfo] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.index = LineIndex(self.text)
        self.tokens: list[EditorToken] = editor_tokens(self.text)
        self._token_starts = [t.start for t in self.tokens]
        program = self._check()
        self._navigate(program)
        self.occurrences.sort(key=lambda o: o.start)
        self._occurrence_starts = [o.start for o in self.occurrences]

    # ------------------------------------------------------------ diagnostics

    def _check(self):
        """The checked program (None if it has errors); the errors go to `diagnostics`."""
        from tinyc.compiler import check_source

        try:
            return check_source(self.text, self.name)
        except CompilationError as err:
            self.diagnostics = list(err.diagnostics)
        except RecursionError:
            self.internal_error = "the program is nested too deeply to check"
        except Exception as exc:  # a bug in tinyc: say so, never crash the server
            self.internal_error = f"internal error in tinyc: {type(exc).__name__}: {exc}"
        return None

    # ------------------------------------------------------------ names

    def _navigate(self, program) -> None:
        if not hasattr(program, "functions"):
            program = _recover_program(self.text, self.name)
        if program is None:
            self._lexical_functions()
            return
        for fn in program.functions:
            self._function(fn)

    def _function(self, fn) -> None:
        start, end = self._offsets(fn.span) if fn.span else (0, 0)
        name_token = next((t for t in self.tokens[self._token_at_or_after(start):]
                           if t.type == "GLOBAL_ID"), None)
        if name_token is None:
            return
        arg_types = ", ".join(f"%{a.name}: {a.type}" for a in fn.args)
        info = FunctionInfo(f"@{fn.name}", start, end, name_token.start, name_token.end,
                            f"func @{fn.name}({arg_types})")
        self.functions.append(info)
        fn_symbol = Symbol(info.name, info.name_start, info.name_end, None, info.signature)
        self.occurrences.append(Occurrence(info.name_start, info.name_end, fn_symbol, True))
        symbols: dict[int, Symbol] = {}
        for arg in fn.args:
            self._define(symbols, arg, f"argument of @{fn.name}", fn.name)
        self._region(symbols, fn.body, fn.name)

    def _region(self, symbols: dict[int, Symbol], region, fn_name: str) -> None:
        for inst in region.instructions:
            for value, span in zip(inst.operands, inst.operand_spans):
                symbol = symbols.get(id(value))
                if symbol is not None and span is not None:
                    self.occurrences.append(Occurrence(*self._offsets(span), symbol, False))
            spelled = self._spelling_after(self._offsets(inst.span)[0]) if inst.span else None
            for inner in inst.regions:
                for arg in inner.args:
                    self._define(symbols, arg, f"loop variable of {spelled or inst.opname}",
                                 fn_name)
                self._region(symbols, inner, fn_name)
            for result in inst.results:
                self._define(symbols, result, f"result of {spelled or inst.opname}", fn_name)

    def _define(self, symbols: dict[int, Symbol], value, what: str, fn_name: str) -> None:
        if value.span is None or not value.name:
            return
        start, end = self._offsets(value.span)
        if self.text[start:start + 1] != "%":
            return
        symbol = Symbol(f"%{value.name}", start, end, str(value.type), what, fn_name)
        symbols[id(value)] = symbol
        self.occurrences.append(Occurrence(start, end, symbol, True))

    def _lexical_functions(self) -> None:
        """Functions by their `func @name` tokens, when no program could be recovered."""
        heads = [i for i, t in enumerate(self.tokens)
                 if t.type == "FUNC" and i + 1 < len(self.tokens)
                 and self.tokens[i + 1].type == "GLOBAL_ID"]
        for n, i in enumerate(heads):
            end = self.tokens[heads[n + 1]].start if n + 1 < len(heads) else len(self.text)
            name = self.tokens[i + 1]
            self.functions.append(FunctionInfo(name.text, self.tokens[i].start, end, name.start,
                                               name.end, f"func {name.text}(…)"))

    def _offsets(self, span: Span) -> tuple[int, int]:
        return self.index.span_offsets(span)

    # ------------------------------------------------------------ tokens

    def _token_at_or_after(self, offset: int) -> int:
        return bisect.bisect_left(self._token_starts, offset)

    def token_at(self, offset: int) -> int | None:
        """Index of the token under (or just before) the cursor at `offset`."""
        i = bisect.bisect_right(self._token_starts, offset) - 1
        if i >= 0 and self.tokens[i].start <= offset <= self.tokens[i].end:
            if offset == self.tokens[i].end and i + 1 < len(self.tokens) \
                    and self.tokens[i + 1].start == offset:
                return i + 1
            return i
        return None

    def _spelling_after(self, offset: int) -> str | None:
        """The instruction spelled at or after `offset` (`gemm.n.t`), from its tokens."""
        i = self._token_at_or_after(offset)
        while i < len(self.tokens) and self.tokens[i].role not in ("instruction",):
            if self.tokens[i].type in ("RBRACE", "LBRACE"):
                return None
            i += 1
        return self.spelling_at(i) if i < len(self.tokens) else None

    def spelling_at(self, i: int) -> str | None:
        """The whole instruction name around token i: its head and glued modifiers."""
        tokens = self.tokens
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
        i = self.token_at(offset)
        if i is None:
            return None
        token = self.tokens[i]
        if token.role in ("instruction", "modifier"):
            spelling = self.spelling_at(i)
            return (_instruction_markdown(spelling), token.start, token.end) if spelling else None
        if token.type in ("LOCAL_ID", "GLOBAL_ID"):
            found = self.occurrence_at(offset)
            if found is None:
                return None
            symbol = found.symbol
            line = self.index.position(symbol.start)[0] + 1
            if symbol.type is None:
                return f"```tinyc\n{symbol.what}\n```", token.start, token.end
            text = (f"```tinyc\n{symbol.name}: {symbol.type}\n```\n"
                    f"{symbol.what}, defined on line {line}")
            return text, token.start, token.end
        return None

    # ------------------------------------------------------------ completion

    def completion(self, offset: int) -> tuple[int, list[CompletionWord]]:
        """(start of the word being typed, the words that may go there)."""
        offset = min(max(offset, 0), len(self.text))
        start = offset
        while start > 0 and _WORD_CHAR.match(self.text[start - 1]):
            start -= 1
        typed = self.text[start:offset]
        if typed.startswith("%"):
            return start, self._values_before(start)
        if typed.startswith("@"):
            return start, []
        expected = _expected_words(self.text[:start])
        words: list[CompletionWord] = []
        if expected is None or expected & vocabulary.instruction_heads():
            words += [CompletionWord(w.spelling, "instruction", w.summary, f"{w.kind} instruction")
                      for w in vocabulary.instructions()]
        types = vocabulary.type_words() if expected is None else expected & vocabulary.type_words()
        words += [CompletionWord(t, "type") for t in sorted(types)]
        attributes = [a for a in vocabulary.attribute_names() if expected is None or a in expected]
        words += [CompletionWord(a, "attribute") for a in attributes]
        others = (vocabulary.other_keywords() | vocabulary.constant_words())
        words += [CompletionWord(k, "keyword") for k in sorted(others)
                  if expected is not None and k in expected]
        if expected is not None and "LOCAL_ID" in expected:
            words += self._values_before(start)
        return start, words

    def _values_before(self, offset: int) -> list[CompletionWord]:
        """Values defined before `offset` in the function around it.

        Those the IR knows come with their type; names the text defines while
        it does not parse (`%x =`, `%a:`, `for %i`) are added without one.
        """
        function = next((f for f in self.functions if f.start <= offset <= f.end), None)
        seen: dict[str, CompletionWord] = {}
        for o in self.occurrences:
            s = o.symbol
            if (o.is_definition and s.name.startswith("%") and o.start < offset
                    and (function is None or s.function == function.name[1:])):
                seen.setdefault(s.name, CompletionWord(s.name, "value", s.type or "", s.what))
        first = self._token_at_or_after(function.start) if function is not None else 0
        last = self._token_at_or_after(offset)
        for i in range(first, last):
            token = self.tokens[i]
            after = self.tokens[i + 1].text if i + 1 < len(self.tokens) else ""
            before = self.tokens[i - 1].text if i > 0 else ""
            if token.type == "LOCAL_ID" and token.end < offset and (
                    after in ("=", ":", ",") or before == "for"):
                seen.setdefault(token.text, CompletionWord(token.text, "value"))
        return list(seen.values())


_WORD_CHAR = re.compile(r"[A-Za-z0-9_.%@]")


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


def _expected_words(before: str) -> set[str] | None:
    """The keywords (and `LOCAL_ID`) the grammar accepts after `before`; None if unknown."""
    from tinyc.parser import lalr
    from tinyc.parser.lexer import LexError
    from tinyc.editor.tokens import compiler_lexer
    from tinyc.parser.tables import KEYWORDS

    text_of = {terminal: text for text, terminal in KEYWORDS.items()}
    sentinel = lalr.Token("$COMPLETION", "", len(before), 1, 1, 1, 1, len(before))
    try:
        tokens = list(compiler_lexer().lex(before))
        lalr.parse([*tokens, sentinel])
    except LexError:
        return None
    except lalr.ParseError as err:
        if err.token is not sentinel:
            return None
        return {text_of.get(t, t) for t in err.accepts()}
    except Exception:  # the parser's own limits (nesting): nothing to suggest from
        return None
    return None


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
