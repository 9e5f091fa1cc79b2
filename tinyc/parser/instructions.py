"""Each instruction's parse tree → its IR class, through the class's `from_syntax`.

An instruction class declares its `keywords` and `syntax` (gen_tables.py
turns them into its grammar rule, named `rule_name(cls)`), and builds
itself from a `Parsed`: the generic reading of that rule's tree. Nothing
here knows a particular instruction.

A `Parsed` holds, in textual order, the keyword as written, the modifiers
(`.t`, `.atomic`, ...), the values used (resolved in scope, spans kept) and
literals, types, a `{...}` dictionary and the nested bracketed parts
(`[...]` index lists, subview slices, `init(...)`), each a `Parsed` again.
`%names` under the grammar's `new_value(s)` are the instruction's own
definitions; `region(i, args)` builds region i with `args` bound to them.
After `from_syntax`, each operand gets the span where it was written.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.core import Instruction, Region, Value
from tinyc.ir.instructions import syntax_classes
from tinyc.ir.types import Type
from tinyc.parser.context import new_object, new_span, span_of
from tinyc.parser.lalr import Token, Tree
from tinyc.parser.literals import build_type, constant, dictionary

if TYPE_CHECKING:
    from tinyc.parser.tree_to_ir import ProgramBuilder
    from tinyc.std import Std

TYPE_RULES = frozenset({"void_type", "bool_type", "scalar_type", "integer_type", "index_type",
                        "memref_type", "group_type", "coopmatrix_type"})
DEFINITION_RULES = frozenset({"new_value", "new_values"})
"""Rules whose `%names` the instruction defines (loop variables, carried values)."""
_LITERAL_RULES = frozenset({"boolean", "complex"})


def rule_name(cls: type[Instruction]) -> str:
    """The grammar rule of an instruction class: its name in snake case (`CoopMatrixLoad` -> `coop_matrix_load`)."""
    name = cls.__name__
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


RULES: dict[str, type[Instruction]] = {rule_name(cls): cls for cls in syntax_classes()}
"""Grammar rule -> the instruction class it builds."""


def build_instruction(b: "ProgramBuilder", tree: Tree) -> Instruction:
    """The IR instruction for the operation subtree of an `instruction`."""
    parsed = Parsed(b, tree, None)
    cls = RULES[tree.data]
    std = cls.versions.get(parsed.keyword)
    if std is not None and b.ctx.unmarked(std):
        b.ctx.mark(std, f"'{parsed.keyword}'", tree.children[0])
    inst = cls.from_syntax(parsed)
    inst.spelling = parsed.keyword
    operands = inst.operands
    whole = parsed._whole
    # (the list itself when the class keeps the textual order: nothing else holds it now)
    inst.operand_spans = whole.use_spans if whole.used == operands else parsed.spans_of(operands)
    inst.type_span = whole.type_span
    return inst


def keyword_of(tree: Tree) -> str:
    """The instruction keyword as written in an operation subtree (`gemm`, `arith.add`)."""
    return tree.children[0].children[0].value


_NONE: tuple = ()
_NO_ATTRIBUTES: Any = MappingProxyType({})


class Parsed:
    """What the parser read of one instruction, or of a bracketed part of it.

    The parts most instructions lack (modifiers, nested parts, a dictionary,
    regions, names defined here) are shared empty values of the class and
    become lists of the instance's own when something is added (no slots:
    an instance stores only what it has, a large function makes 60,000).
    """

    keyword = ""
    modifiers: Sequence[str] = _NONE
    parts: "Sequence[Parsed]" = _NONE
    types_span: Span | None = None  # where the last of its types is written
    attributes: Mapping[str, Any] = _NO_ATTRIBUTES
    _regions: Sequence[Tree] = _NONE
    names_here: Sequence[Token] = _NONE  # names defined at this level (`new_values`)

    def __init__(self, b: "ProgramBuilder", tree: Tree, whole: "_Whole | None") -> None:
        self._b = b
        self.rule = rule = tree.data
        self._tree = tree  # its span is made only when asked for (errors): most never are
        self.items = items = []             # Values used and literals, at this level
        self.item_spans = item_spans = []
        self.types = types = []             # written types; a `-> (...)` list adds its entries
        if whole is None:
            whole = new_object(_Whole)  # (its fields one a statement: no __init__ call)
            self.names = whole.names = []  # the instruction's own definitions, in order
            self.used = used = whole.used = []  # the values used, in textual order ...
            self.use_spans = use_spans = whole.use_spans = []  # ... and where each use is written
            whole.keyword_rule = keyword_rule = _KEYWORD_RULES.get(rule) or _keyword_rule(rule)
            whole.type_span = None
        else:
            used, use_spans, keyword_rule = whole.used, whole.use_spans, whole.keyword_rule
        self._whole = whole
        ctx = b.ctx
        defines = rule in DEFINITION_RULES
        values, source = ctx.scope.values, ctx.source
        for child in tree.children:  # the common cases inline: names and types (no call each)
            if type(child) is Token:
                if child.type != "LOCAL_ID":
                    items.append(constant(child, ctx))
                    item_spans.append(ctx.span(child))
                elif defines:
                    whole.names.append(child)
                    self.names_here = [*self.names_here, child]
                else:
                    value = values.get(child.value[1:])
                    if value is None:  # in an enclosing region, or undefined
                        value, span = ctx.use(child)
                    else:  # (`ctx.use`'s span of a `%name`, without the call)
                        line = child.line
                        span = new_span(line, child.column, line, child.end_column - 1, source)
                    used.append(value)
                    use_spans.append(span)
                    items.append(value)
                    item_spans.append(span)
                continue
            data = child.data
            if data == keyword_rule and not self.keyword:
                self.keyword = child.children[0].value
            elif data in TYPE_RULES:  # one type
                types.append(build_type(child, ctx))
                self.types_span = whole.type_span = span_of(child, source)
            else:
                read = _READERS.get(data)
                if read is not None:
                    read(self, child)
                elif len(child.children) == 1 and type(child.children[0]) is Token \
                        and child.children[0].value.startswith("."):
                    self.modifiers = [*self.modifiers, child.children[0].value]
                else:
                    self.parts = [*self.parts, Parsed(b, child, whole)]

    @property
    def span(self) -> Span:
        return self._b.ctx.span(self._tree)

    def _read_return_types(self, child: Tree) -> None:
        """A `-> (...)` list (one type is read inline in `__init__`)."""
        ctx = self._b.ctx
        self.types += [build_type(t, ctx) for t in child.children]
        self.types_span = self._whole.type_span = span_of(child, ctx.source)

    def _read_literal(self, child: Tree) -> None:
        self._item(constant(child, self._b.ctx), self._b.ctx.span(child))

    def _read_dictionary(self, child: Tree) -> None:
        self.attributes = dictionary(child, self._b.ctx)

    def _read_region(self, child: Tree) -> None:
        self._regions = [*self._regions, child]

    def _item(self, item: Any, span: Span) -> None:
        self.items.append(item)
        self.item_spans.append(span)

    # ------------------------------------------------------------ what classes read

    @property
    def operands(self) -> list[Value]:
        """Every value used by the whole instruction, in textual order."""
        return list(self._whole.used)

    @property
    def values(self) -> list[Value]:
        """The values used at this level (not in nested parts)."""
        return [x for x in self.items if isinstance(x, Value)]

    @property
    def literals(self) -> list[Any]:
        """Integer, float, bool and complex literals at this level."""
        return [x for x in self.items if not isinstance(x, Value)]

    @property
    def type(self) -> Type | None:
        """The last type written at this level (the one after ':')."""
        return self.types[-1] if self.types else None

    def part(self, rule: str) -> "Parsed | None":
        """The first nested part read by grammar rule `rule`."""
        return next((p for p in self.parts if p.rule == rule), None)

    def selected(self, keywords: dict[str, Any]) -> Any:
        """What the keyword as written selects in a class's `keywords` dict."""
        return keywords[self.keyword]

    @property
    def region_count(self) -> int:
        return len(self._regions)

    def region(self, index: int = 0, args: Sequence[Value] = ()) -> Region:
        """Region `index`, whose arguments `args` take the instruction's defined names in order."""
        named = list(zip(args, self._whole.names))
        return self._b.region(self._regions[index], named)

    def mark(self, std: "Std", what: str, span: Span | None = None) -> None:
        """Note that the instruction is written in a way only `std` has (tinyc.std)."""
        self._b.ctx.mark(std, what, span or self.span)

    def error(self, message: str, span: Span | None = None) -> None:
        """Report a syntax-level error (at `span`, else at this part) and go on."""
        self._b.ctx.error(message, span or self.span)

    def nonnegative(self, k: int, what: str) -> int:
        """Literal item `k`, which the IR stores beside the `?` marker, so it must be >= 0."""
        value = self.items[k]
        if value < 0:
            self.error(f"{what} must not be negative, got {value}", self.item_spans[k])
            return 0
        return value

    # ------------------------------------------------------------ after building

    def spans_of(self, operands: Sequence[Value]) -> list[Span | None]:
        """Where each operand was written (a class may keep operands in another order)."""
        whole = self._whole
        if whole.used == operands:  # Values compare by identity: the textual order, as most keep
            return list(whole.use_spans)
        unused = list(zip(whole.used, whole.use_spans))
        spans: list[Span | None] = []
        for value in operands:
            at = next((i for i, (v, _) in enumerate(unused) if v is value), None)
            spans.append(unused.pop(at)[1] if at is not None else None)
        return spans


_KEYWORD_RULES: dict[str, str] = {}
"""Instruction rule -> the rule of its keyword (`arith_binary_keyword`), made once per rule."""


def _keyword_rule(rule: str) -> str:
    keyword_rule = _KEYWORD_RULES[rule] = rule + "_keyword"
    return keyword_rule


class _Whole:
    """What every part of one instruction adds to: its definitions, the values it uses and
    where, the rule of its keyword and where its type is written.

    Its own object rather than the top `Parsed`, which holds its parts: a part pointing
    back at it would make a cycle, which the collector paused while checking never frees
    (40,000 instructions kept ~40 MB more alive, paid in page faults)."""

    __slots__ = ("names", "used", "use_spans", "keyword_rule", "type_span")
    names: list[Token]
    used: list[Value]
    use_spans: list[Span]
    keyword_rule: str
    type_span: Span | None


_READERS = {"return_types": Parsed._read_return_types,
            **dict.fromkeys(_LITERAL_RULES, Parsed._read_literal),
            "dictionary": Parsed._read_dictionary, "region": Parsed._read_region}
"""How a `Parsed` reads a subtree, by its rule (keywords, modifiers and parts aside)."""
