"""Parse tree → IR: functions, regions and scoping.

The instructions themselves are built by their classes (`from_syntax`, fed
by the generic reader in `instructions.py`); this module walks
functions and regions, resolves `%names` through `BuildContext` and checks
that the names on the left of `=` match what the instruction returns.
"""

from __future__ import annotations

from typing import Sequence

from tinyc.diagnostics import CompilationError, Note, Source, Span
from tinyc.ir.core import Function, Instruction, Program, Region, Value
from tinyc.parser.context import MAX_NESTING, BuildContext, new_span
from tinyc.parser.instructions import build_instruction, keyword_of
from tinyc.parser.lalr import Token, Tree
from tinyc.parser.literals import build_type, dictionary
from tinyc.std import Std, decide, declaration


class ProgramBuilder:
    """Builds a `Program` from the parse tree, collecting every name error."""

    def __init__(self, source: Source, std: Std | None = None):
        self.ctx = BuildContext(source)
        self.std = std

    def program(self, tree: Tree, raise_errors: bool = True) -> Program:
        """The program; CompilationError with every name error, unless not `raise_errors`
        (editors want the program as far as it goes; errors are in `self.ctx.sink`)."""
        functions: list[Function] = []
        seen: dict[str, Span] = {}
        for fn_tree in tree.children:
            fn = self.function(fn_tree)
            name_token = fn_tree.children[0]
            if fn.name in seen:
                self.ctx.error(f"redefinition of function '@{fn.name}'", name_token,
                               (Note(f"'@{fn.name}' is first defined here", seen[fn.name]),))
                continue
            seen[fn.name] = self.ctx.span(name_token)
            functions.append(fn)
        if not tree.children:  # empty or only comments: nothing to compile or run
            self.ctx.error("the program defines no function", Span(1, 1, 1, 1, self.ctx.source))
        if raise_errors:
            self.ctx.sink.raise_if_any()
        try:
            declared = declaration(self.ctx.source)
        except CompilationError as err:  # a malformed `; std:` declaration
            if raise_errors:
                raise
            self.ctx.sink.diagnostics += err.diagnostics
            declared = None
        version = decide(self.std, declared, self.ctx.markers)
        return Program(functions, source=self.ctx.source, version=version)

    def function(self, tree: Tree) -> Function:
        ctx = self.ctx
        ctx.new_function()
        name_token, *rest = tree.children
        args: list[Value] = []
        attrs: dict = {}
        body_tree = rest[-1]
        for child in rest[:-1]:
            if child.data == "argument":
                args.append(self.argument(child))
            elif child.data == "legacy_fn_attribute":  # `subgroup_size(16)`, before the seed
                values = [int(token.value) for token in child.children]
                legacy = "subgroup_size" if len(values) == 1 else "work_group_size"
                if legacy in attrs:
                    ctx.error(f"attribute '{legacy}' is given twice", child)
                attrs[legacy] = values[0] if len(values) == 1 else values
            else:  # fn_attributes
                for name, value in dictionary(child.children[0], ctx).items():
                    if name in attrs:
                        ctx.error(f"attribute '{name}' is given twice", child)
                    attrs[name] = value
        body = self.region(body_tree, [], new_scope=False)
        return Function(name_token.value[1:], args, body, attrs, ctx.span(tree))

    def argument(self, tree: Tree) -> Value:
        name_token, type_tree, *attr_tree = tree.children
        value = Value(build_type(type_tree, self.ctx))
        value.type_span = self.ctx.span(type_tree)
        if attr_tree and attr_tree[0].data == "legacy_align":  # `align(64)`, before the seed
            value.attrs = {"alignment": int(attr_tree[0].children[0].value)}
        else:
            value.attrs = dictionary(attr_tree[0] if attr_tree else None, self.ctx)
        self.ctx.define(value, name_token)
        return value

    # ------------------------------------------------------------ regions

    def region(self, tree: Tree, args: Sequence[tuple[Value, Token]],
               new_scope: bool = True) -> Region:
        """A region whose arguments (`args`, with their name tokens) are visible inside only."""
        ctx = self.ctx
        if ctx.depth >= MAX_NESTING:
            ctx.error(f"regions nested more than {MAX_NESTING} deep", tree)
            return Region(span=ctx.span(tree))
        ctx.depth += 1
        if new_scope:
            ctx.push()
        for value, token in args:
            ctx.define(value, token)
        instructions = [self.instruction(child) for child in tree.children]
        if new_scope:
            ctx.pop()
        ctx.depth -= 1
        return Region([v for v, _ in args], instructions, span=ctx.span(tree))

    def instruction(self, tree: Tree) -> Instruction:
        """One instruction with its results named and defined after its operands."""
        children = tree.children
        if len(children) == 2:
            names: list[Token] = children[0].children
            op_tree = children[1]
        else:
            names, op_tree = [], children[0]
        inst = build_instruction(self, op_tree)
        ctx = self.ctx
        first, last = tree._own or (tree._first, tree._last)  # (`span_of`, without the call)
        end = last.end_column - 1
        inst.span = span = new_span(first.line, first.column, last.end_line, end if end > 1 else 1,
                                    ctx.source)
        results = inst.results
        if len(results) != len(names):
            for value in results[len(names):]:  # (a named result gets its name's span below)
                value.span = span
            self._check_result_count(inst, names, op_tree)
        values = ctx.scope.values
        for value, token in zip(results, names):
            name = token.value[1:]
            if name in values or ctx.scope.parent is not None:  # (maybe) a redefinition
                ctx.define(value, token)
                continue
            # (`define` of a new name in a function's outermost region, without the call)
            value.name = name
            line = token.line
            values[name] = value
            ctx.defined[name] = value.span = new_span(line, token.column, line, token.end_column - 1,
                                                       ctx.source)
        return inst

    def _check_result_count(self, inst: Instruction, names: list[Token], op_tree: Tree) -> None:
        want, got = len(inst.results), len(names)
        if want == got:
            return
        spelled = keyword_of(op_tree)
        if want == 0:
            span = self.ctx.span(names[0]).join(self.ctx.span(names[-1]))
            self.ctx.error(f"'{spelled}' does not return a value", span)
        elif got == 0:
            self.ctx.error(f"'{spelled}' returns {_count(want)}; name {_them(want)} with "
                           f"'%name = {spelled} ...'", op_tree)
        else:
            span = self.ctx.span(names[0]).join(self.ctx.span(names[-1]))
            self.ctx.error(f"'{spelled}' returns {_count(want)} but {got} "
                           f"name{'s are' if got != 1 else ' is'} given", span)


def _count(n: int) -> str:
    return "one value" if n == 1 else f"{n} values"


def _them(n: int) -> str:
    return "it" if n == 1 else "them"
