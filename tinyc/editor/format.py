"""`tinyc fmt`: the canonical layout of a tensor-language file, comments kept.

The formatter works on the compiler's own tokens (so it cannot change what a
file means) and on the parse tree (which tells it where instructions start
and which braces open regions). Layout rules, in short:

* one instruction per line, indented two spaces per region level; one
  blank line at most between instructions (kept where the author left one),
  exactly one between functions, none after `{` or before `}`;
* `} else {` and `} {unroll=true}` stay on the closing brace's line;
* spacing inside a line: `%a = op %b, %c : f32`, arguments `%A: memref<…>`,
  types without spaces (`memref<f32x16x8,local>`, `group<…x?, offset: 2>`),
  `%A[%i, 0:4]`, `init(%a = %b) -> (f32)`, `yield (%x)`, `{alignment=64}`;
* a function header longer than 100 characters, or with a comment inside,
  puts one argument per line, aligned after `(`;
* comments keep their text (trailing white space removed); a comment at the
  end of a line stays there, two spaces after the code (aligned with the
  comments of the lines around it at the same indentation); a comment on
  its own line keeps its own line at the indentation of the code around it.

The output is checked to lex to exactly the tokens of the input; formatting
is idempotent (`format(format(x)) == format(x)`, tested on every sample).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from tinyc.editor.tokens import EditorToken, editor_tokens, lex
from tinyc.diagnostics import Source
from tinyc.parser import parse_tree
from tinyc.parser.preprocessor import definition_spans
from tinyc.parser.lalr import Tree

MAX_HEADER = 100
"""Longest function header kept on one line."""

INDENT = "  "
CONTINUATION = "    "  # extra indentation of an instruction broken by a comment

_OPENERS = {"(": ")", "[": "]", "<": ">", "{": "}"}
_SELF_DELIMITING = set("()[]{}<>,:=")


class FormatterError(Exception):
    """The formatter would have changed the tokens: a bug in tinyc, never the input's fault."""


def format_source(text: str, name: str = "<string>") -> str:
    """The canonical form of `text`; CompilationError if it has a syntax error."""
    structure = _Structure(parse_tree(text, name))
    if "$" in text:  # preprocessor definitions are statements of their own (not in the tree)
        for start, end in definition_spans(lex(text), Source(text, name)):
            structure.line_starts.add(start)
            structure.statement_ends.add(end)
    tokens = editor_tokens(text)
    result = _Layout(text, tokens, structure).render()
    _check_same_tokens(tokens, result)
    return result


@dataclass
class _Structure:
    """Where lines must start and which braces open or close regions (offsets)."""

    tree: Tree
    line_starts: set[int] = field(default_factory=set)
    statement_ends: set[int] = field(default_factory=set)
    region_open: set[int] = field(default_factory=set)
    region_close: set[int] = field(default_factory=set)
    functions: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        todo = [self.tree]
        while todo:
            node = todo.pop()
            meta = node.meta
            if node.data in ("instruction", "function") and not meta.empty:
                self.line_starts.add(meta.start_pos)
                self.statement_ends.add(meta.end_pos)
                if node.data == "function":
                    self.functions.add(meta.start_pos)
            elif node.data == "region" and not meta.empty:
                self.region_open.add(meta.start_pos)
                self.region_close.add(meta.end_pos - 1)
            todo.extend(c for c in node.children if isinstance(c, Tree))


def _bracket_kind(token: EditorToken, prev: EditorToken | None) -> str:
    """What a bracket opens: `args` of a function, an `index` list, `angle` of a type, ..."""
    if token.text == "(":
        return "args" if prev is not None and prev.type == "GLOBAL_ID" else "paren"
    if token.text == "[":
        return "index" if prev is not None and prev.type == "LOCAL_ID" else "list"
    return {"<": "angle", "{": "dict"}[token.text]


def _space(prev: EditorToken | None, cur: EditorToken, stack: list[str]) -> bool:
    """Whether one space separates `prev` and `cur` on a line (the layout rules)."""
    if prev is None:
        return False
    inner = stack[-1] if stack else ""
    p, c = prev.text, cur.text
    if cur.role == "modifier" or cur.type == "DOTWORD":
        return False  # gemm.n.t, barrier.local
    if p in ("(", "[", "<") or (p == "{" and inner == "dict"):
        return False
    if c in (")", "]", ">", ",") or (c == "}" and inner == "dict"):
        return False
    if p == ",":
        return not (inner == "angle" and c != "offset")
    if c == "(":
        return not (prev.type == "GLOBAL_ID" or p == "init")
    if c == "[":
        return not (prev.type == "LOCAL_ID" or (p == "=" and inner == "dict"))
    if c == "<":
        return False
    if "x" in (p, c) and c != "->" and p != "->":
        return inner == "index"  # `memref<f32x4>`, but `[0 -> 4 x %n]`
    if c == "=" or p == "=":
        return inner != "dict"
    if c == ":":
        return not (inner in ("args", "index") or p == "offset")
    if p == ":":
        return inner != "index"
    return True


class _Layout:
    """Walks the tokens once, building output lines."""

    def __init__(self, text: str, tokens: list[EditorToken], structure: _Structure):
        self.text = text
        self.tokens = tokens
        self.s = structure
        self.lines: list[list[str] | None] = []  # [indent, code, comment] or None for a blank
        self.current: list[str] | None = None    # the line being built
        self.break_pending = False
        self.complete = True                      # the last code token ended a statement or `{`
        self.prev: EditorToken | None = None      # the previous code token on this line
        self.stack: list[str] = []
        self.depth = 0
        self.header_align: int | None = None      # column of a multi-line header's arguments
        self.after_open = True                    # nothing emitted since `{` or the file start
        self.after_function = False

    # ------------------------------------------------------------ output lines

    def _flush(self) -> None:
        if self.current is not None:
            self.lines.append(self.current)
            self.current = None
            self.prev = None
        self.break_pending = False

    def _blank(self) -> None:
        if self.lines and self.lines[-1] is not None:
            self.lines.append(None)

    def _start(self, indent: str) -> None:
        self._flush()
        self.current = [indent, "", ""]

    def _indent(self) -> str:
        return INDENT * self.depth

    def _continuation(self) -> str:
        if self.header_align is not None:
            return " " * self.header_align
        return self._indent() + CONTINUATION

    # ------------------------------------------------------------ the walk

    def render(self) -> str:
        position = 0
        for index, token in enumerate(self.tokens):
            newlines = self.text.count("\n", position, token.start)
            position = token.end
            if token.is_comment:
                self._comment(token, newlines)
            else:
                self._code(index, token, newlines)
        self._flush()
        while self.lines and self.lines[-1] is None:
            self.lines.pop()
        return _join(self.lines)

    def _comment(self, token: EditorToken, newlines: int) -> None:
        text = token.text.rstrip()
        if newlines == 0 and self.current is not None and not self.current[2]:
            self.current[2] = text
            self.break_pending = True
            return
        inside = self.current is not None and not self.complete
        if not inside:
            self._separate(newlines)
        self._start(self._continuation() if inside else self._indent())
        self.current[1] = text
        self.current[2] = ""
        self.break_pending = True
        self.after_open = False

    def _separate(self, newlines: int) -> None:
        """The blank line before a new statement or own-line comment, if any."""
        if self.after_function and self.depth == 0:
            self._flush()
            self._blank()
        elif newlines >= 2 and not self.after_open:
            self._flush()
            self._blank()
        self.after_function = False

    def _code(self, index: int, token: EditorToken, newlines: int) -> None:
        closes_region = token.start in self.s.region_close
        if closes_region:
            self.depth -= 1
        if token.start in self.s.line_starts or closes_region:
            self._flush()
            if not closes_region:
                self._separate(newlines)
                if token.start in self.s.functions:
                    self.header_align = self._header_alignment(index)
            else:
                self.after_function = False
            self._start(self._indent())
        elif self.current is None or self.break_pending:
            self._start(self._continuation())
        self._append(token)
        self.after_open = False
        self.complete = token.end in self.s.statement_ends
        if token.start in self.s.region_open:
            self.complete = True
            self.depth += 1
            self.header_align = None
            self.after_open = True
            self.break_pending = True
        elif closes_region and self.depth == 0:
            self.after_function = True
        elif (self.header_align is not None and token.text == "," and self.stack == ["args"]):
            self.break_pending = True

    def _append(self, token: EditorToken) -> None:
        line = self.current
        assert line is not None
        if token.text in _OPENERS and not (token.text == "{" and token.start in self.s.region_open):
            kind = _bracket_kind(token, self.prev)
        else:
            kind = None
        if token.text in _OPENERS.values() and not (
                token.text == "}" and token.start in self.s.region_close) and self.stack:
            spaced = _space(self.prev, token, self.stack)
            self.stack.pop()
        else:
            spaced = _space(self.prev, token, self.stack)
        if self.prev is not None and not spaced and _must_separate(self.prev, token):
            spaced = True
        line[1] += (" " if spaced else "") + token.text
        if kind is not None:
            self.stack.append(kind)
        self.prev = token

    def _header_alignment(self, index: int) -> int | None:
        """Column of the arguments if the header at tokens[index] must span several lines."""
        stack: list[str] = []
        prev = None
        width = 0
        for token in self.tokens[index:]:
            if token.is_comment:
                return self._open_paren_column(index)
            if token.start in self.s.region_open:
                break
            spaced = _space(prev, token, stack)
            if token.text in _OPENERS.values() and stack:
                stack.pop()
            if token.text in _OPENERS:
                stack.append(_bracket_kind(token, prev))
            width += len(token.text) + (1 if spaced or (prev and _must_separate(prev, token)) else 0)
            prev = token
        if width + 2 <= MAX_HEADER:
            return None
        return self._open_paren_column(index)

    def _open_paren_column(self, index: int) -> int | None:
        """`func @name(` is followed by arguments at this column."""
        head = self.tokens[index: index + 3]
        if len(head) == 3 and head[1].type == "GLOBAL_ID" and head[2].text == "(":
            return len(head[0].text) + 1 + len(head[1].text) + 1
        return None


def _must_separate(prev: EditorToken, cur: EditorToken) -> bool:
    """Would gluing the two tokens lex differently (`%i` `x` is `%ix`)?"""
    if prev.text[-1:] in _SELF_DELIMITING or cur.text[:1] in _SELF_DELIMITING:
        return prev.text[-1:] == "-" and cur.text[:1] == ">"
    return _glue_changes(prev.type, prev.text, cur.type, cur.text)


@lru_cache(maxsize=4096)
def _glue_changes(prev_type: str, prev: str, cur_type: str, cur: str) -> bool:
    glued = lex(prev + cur)
    return [(t.type, t.value) for t in glued] != [(prev_type, prev), (cur_type, cur)]


def _join(lines: list[list[str] | None]) -> str:
    """The text of the lines, with runs of trailing comments aligned."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line is None:
            out.append("")
            i += 1
            continue
        run = [line]
        while (line[1] and line[2] and i + len(run) < len(lines)
               and (nxt := lines[i + len(run)]) is not None and nxt[1] and nxt[2]
               and nxt[0] == line[0]):
            run.append(nxt)
        column = max(len(r[0]) + len(r[1]) for r in run) + 2
        for indent, code, comment in run:
            text = indent + code
            if comment:
                text = text.ljust(column) + comment if code else indent + comment
            out.append(text.rstrip())
        i += len(run)
    return "\n".join(out) + "\n" if out else ""


def _check_same_tokens(tokens: list[EditorToken], result: str) -> None:
    """The output must be the input's tokens and comments, in order, nothing else."""
    before = [(t.type, t.text.rstrip()) for t in tokens]
    after = [(t.type, t.text.rstrip()) for t in editor_tokens(result)]
    if before != after:
        for i, (a, b) in enumerate(zip(before, after)):
            if a != b:
                raise FormatterError(f"token {i} changed from {a} to {b}")
        raise FormatterError(f"{len(before)} tokens became {len(after)}")
