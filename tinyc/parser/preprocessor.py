"""The newest language's preprocessor: `$name = ...` definitions and `!calc(...)`.

It works on the token stream, between the lexer and the parser, as the
reference resolves it at parse time (spec/newest/preprocessor.rst): a
definition `$name = rhs` binds the tokens of `rhs` (a constant, an array,
dictionary or string attribute, a type, another definition, or a `!calc`
result), and every later use `$name` is replaced by them, carrying the
use's position so diagnostics point at it. Definitions are global or belong
to the region they are written in (scopes follow the regions' `{` `}`),
must precede their uses, and a name is defined once in a scope and the
scopes inside it. `$name =` is a definition where an instruction or a
function may start (at the top level or directly in a region); inside
brackets, parentheses or a dictionary (`{$key=$value}`) it is a use.
Nothing of the preprocessor reaches the IR, so printing loses it, as in the
reference.

`!calc` evaluates integer reverse Polish notation: integers, definitions
of integers, and the operators `^ - + * / % min max` of the spec, plus
`shl shr and or xor` (the reference's examples use `shl`); `/` and `%`
round toward zero as in C.

Definitions may also come from outside the text (`tinyc check -D ty=f64`,
`tinyc.compile(..., defines={"ty": "f64"})`), as the reference's host code
gives them: they are global and a definition in the text may not repeat them.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator

from tinyc.diagnostics import CompilationError, Diagnostic, Note, Source, Span, did_you_mean
from tinyc.parser.lalr import LEX_ERROR, Token
from tinyc.parser.lexer import CALC, DEF_ID

_TYPE_HEADS = frozenset({"memref", "group", "coopmatrix"})
_RPN = re.compile(r"\s*([+-]?[0-9]+|\$(?:[0-9]+|[A-Za-z][A-Za-z0-9_]*)|\^|-|\+|\*|/|%"
                  r"|(?:min|max|shl|shr|and|or|xor)(?![A-Za-z0-9_]))")
_INT_LIMIT = 2 ** 63
MAX_DEFINITION_TOKENS = 100_000
"""Longest a definition may grow (definitions of definitions double quickly: `[$a, $a]`)."""
MAX_SUBSTITUTED_TOKENS = 2_000_000
"""Most tokens all uses together may bring into a program."""


class Definition:
    """The tokens a `$name` stands for, and where it was defined."""

    def __init__(self, name: str, tokens: list[Token], span: Span | None):
        self.name = name
        self.tokens = tokens
        self.span = span


class Preprocessor:
    """Resolves definitions in a token stream; raises CompilationError at the first misuse."""

    def __init__(self, source: Source, defines: dict[str, list[Token]] | None = None):
        self.source = source
        self.scopes: list[dict[str, Definition]] = [{}]
        for name, tokens in (defines or {}).items():
            self.scopes[0][name] = Definition(name, tokens, None)
        self.first_use: Span | None = None   # where the preprocessor is first used (a newest marker)
        self._pending: list[Token] = []
        self._tokens: Iterator[Token] = iter(())
        self._open: list[str] = []   # open brackets: "(", "[", "<", "dict", "region"
        self._previous: Token | None = None
        self._func_depth: int | None = None  # len(_open) inside a function's argument list
        self._last_read: Token | None = None
        self.definitions: list[tuple[int, int]] = []  # (start, end) offsets of `$x = ...` in the text
        self._substituted = 0

    def run(self, tokens: Iterable[Token]) -> Iterator[Token]:
        """The stream with every definition removed and every use replaced."""
        self._tokens = iter(tokens)
        while True:
            token = self._next()
            if token is None:
                return
            if token.type == DEF_ID:
                self._note(token)
                following = self._next()
                at_statement = not self._open or self._open[-1] == "region"
                if at_statement and following is not None and following.value == "=" \
                        and following.type != "STRING":
                    self._define(token)
                    continue
                if following is not None:
                    self._pending.insert(0, following)
                for used in self._use(token):
                    self._track(used)
                    yield used
            elif token.type == CALC:
                self._note(token)
                yield self._track(self._calc(token))
            else:
                yield self._track(token)

    def _track(self, token: Token) -> Token:
        """Follow the brackets: which `{` opens a region (a scope) and which a dictionary."""
        text = "" if token.type == "STRING" else token.value
        previous = self._previous.value if self._previous is not None \
            and self._previous.type != "STRING" else ""
        if text == "{":
            in_arguments = self._func_depth is not None and len(self._open) == self._func_depth
            dictionary = previous in ("attributes", "=", ",", "[", "alloca") or in_arguments \
                or (self._open and self._open[-1] == "dict")
            self._open.append("dict" if dictionary else "region")
            if not dictionary:
                self.scopes.append({})
        elif text in ("(", "[", "<"):
            if text == "(" and self._previous is not None and self._previous.type == "GLOBAL_ID":
                self._func_depth = len(self._open) + 1
            self._open.append(text)
        elif text in ("}", ")", "]", ">") and self._open:
            closed = self._open.pop()
            if closed == "region" and len(self.scopes) > 1:
                self.scopes.pop()
            if text == ")" and self._func_depth is not None and len(self._open) < self._func_depth:
                self._func_depth = None
        self._previous = token
        return token

    # ------------------------------------------------------------ tokens

    def _next(self) -> Token | None:
        token = self._pending.pop(0) if self._pending else next(self._tokens, None)
        if token is not None:
            self._last_read = token
        return token

    def _span(self, token: Token) -> Span:
        return Span(token.line, token.column, token.end_line, max(token.end_column - 1, 1), self.source)

    def _fail(self, message: str, token: Token, notes: tuple[Note, ...] = ()) -> None:
        raise CompilationError(Diagnostic(message, self._span(token), notes))

    def _note(self, token: Token) -> None:
        if self.first_use is None:
            self.first_use = self._span(token)

    # ------------------------------------------------------------ definitions

    def _lookup(self, name: str) -> Definition | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def _define(self, name_token: Token) -> None:
        name = name_token.value
        earlier = self._lookup(name)
        if earlier is not None:
            note = Note(f"'{name}' is defined here", earlier.span) if earlier.span else \
                Note(f"'{name}' is defined outside the source (-D {name[1:]}=...)")
            self._fail(f"'{name}' is already defined; a name is defined once in a scope and the "
                       f"scopes inside it", name_token, (note,))
        tokens = self._rhs(name_token)
        if len(tokens) > MAX_DEFINITION_TOKENS:
            self._fail(f"'{name}' stands for {len(tokens)} tokens; a definition may hold at most "
                       f"{MAX_DEFINITION_TOKENS}", name_token)
        self.scopes[-1][name] = Definition(name, tokens, self._span(name_token))
        if self._last_read is not None and name_token.start_pos is not None:
            self.definitions.append((name_token.start_pos, self._last_read.end_pos))

    def _rhs(self, name_token: Token) -> list[Token]:
        """The tokens of a definition's right-hand side, uses inside it resolved."""
        first = self._next()
        if first is None:
            self._fail(f"'{name_token.value} =' needs a value: a constant, an attribute, a type, "
                       f"a definition or !calc(...)", name_token)
        if first.type == DEF_ID:
            return list(self._use(first))
        if first.type == LEX_ERROR:  # text the lexer could not read: its own message says why
            self._fail(getattr(first, "message", f"unexpected '{first.value}'"), first)
        if first.type == CALC:
            return [self._calc(first)]
        if first.value in ("[", "{") and first.type != "STRING":
            return self._balanced(first, first.value, "]" if first.value == "[" else "}")
        if first.value in _TYPE_HEADS and first.type != "STRING":
            opening = self._next()
            if opening is None or opening.value != "<":
                self._fail(f"expected '<' after '{first.value}'", opening or first)
            return [first, *self._balanced(opening, "<", ">")]
        if first.type in ("INTEGER", "FLOAT", "STRING") or first.value[:1].isalpha():
            return [first]
        self._fail(f"'{first.value}' cannot be the value of '{name_token.value}'; write a constant, "
                   f"an attribute, a type, a definition or !calc(...)", first)
        return []

    def _balanced(self, opening: Token, open_text: str, close_text: str) -> list[Token]:
        """`opening` up to its matching closing token, with definitions used inside resolved."""
        tokens, depth = [opening], 1
        while depth:
            if len(tokens) > MAX_DEFINITION_TOKENS:
                self._fail(f"a definition may hold at most {MAX_DEFINITION_TOKENS} tokens", opening)
            token = self._next()
            if token is None:
                self._fail(f"'{open_text}' is not closed by '{close_text}'", opening)
            if token.type == DEF_ID:
                tokens.extend(self._use(token))
                continue
            if token.type == CALC:
                tokens.append(self._calc(token))
                continue
            if token.type != "STRING":
                depth += (token.value == open_text) - (token.value == close_text)
            tokens.append(token)
        return tokens

    def _use(self, use: Token) -> Iterator[Token]:
        """The definition's tokens, positioned at the use."""
        found = self._lookup(use.value)
        if found is None:
            visible = [n for scope in self.scopes for n in scope]
            self._fail(f"'{use.value}' is not defined{did_you_mean(use.value, visible)}; "
                       f"define it before its use with '{use.value} = ...'", use)
        self._substituted += len(found.tokens)
        if self._substituted > MAX_SUBSTITUTED_TOKENS:
            self._fail(f"the uses of definitions bring more than {MAX_SUBSTITUTED_TOKENS} tokens "
                       f"into the program", use)
        for t in found.tokens:
            yield Token(t.type, t.value, use.start_pos, use.line, use.column, use.end_line,
                        use.end_column, use.end_pos)

    # ------------------------------------------------------------ calculator

    def _calc(self, token: Token) -> Token:
        """`!calc(rpn)` as an INTEGER token at its position."""
        text = token.value
        body = text[text.index("(") + 1: -1]
        stack: list[int] = []
        at = 0
        while body[at:].strip():
            m = _RPN.match(body, at)
            if not m:
                self._fail(f"!calc: unexpected '{body[at:].split()[0]}'; the calculator takes "
                           f"integers, definitions and ^ - + * / % min max shl shr and or xor", token)
            item = m.group(1)
            at = m.end()
            if item[0] == "$":
                stack.append(self._integer(item, token))
            elif item[-1].isdigit():
                stack.append(int(item))
            else:
                if len(stack) < 2:
                    self._fail(f"!calc: '{item}' needs two operands", token)
                b, a = stack.pop(), stack.pop()
                stack.append(self._apply(item, a, b, token))
        if len(stack) != 1:
            self._fail(f"!calc: the expression leaves {len(stack)} values, it must leave one",
                       token)
        return Token("INTEGER", str(stack[0]), token.start_pos, token.line, token.column,
                     token.end_line, token.end_column, token.end_pos)

    def _integer(self, name: str, at: Token) -> int:
        found = self._lookup(name)
        if found is None:
            self._fail(f"!calc: '{name}' is not defined", at)
        if len(found.tokens) != 1 or found.tokens[0].type != "INTEGER":
            shown = " ".join(t.value for t in found.tokens)
            self._fail(f"!calc: '{name}' is '{shown}', not an integer", at)
        return int(found.tokens[0].value)

    def _apply(self, op: str, a: int, b: int, at: Token) -> int:
        if op in ("/", "%") and b == 0:
            self._fail(f"!calc: division by zero ({a} {b} {op})", at)
        if op == "^" and b < 0:
            self._fail(f"!calc: negative exponent ({a} {b} ^)", at)
        if op == "^" and abs(a) > 1 and b >= 64:
            self._fail(f"!calc: {a} {b} ^ is out of the 64-bit range", at)
        if op in ("shl", "shr") and not 0 <= b < 64:
            self._fail(f"!calc: shift count {b} is outside 0..63 ({a} {b} {op})", at)
        quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) if b else 0
        result = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                  "/": lambda: quotient, "%": lambda: a - b * quotient, "^": lambda: a ** b,
                  "min": lambda: min(a, b), "max": lambda: max(a, b), "shl": lambda: a << b,
                  "shr": lambda: a >> b, "and": lambda: a & b, "or": lambda: a | b,
                  "xor": lambda: a ^ b}[op]()
        if not -_INT_LIMIT < result < _INT_LIMIT:
            self._fail(f"!calc: {a} {b} {op} = {result} is out of the 64-bit range", at)
        return result


def outside_definitions(defines: dict[str, str]) -> dict[str, list[Token]]:
    """`{"ty": "f64"}` (or `{"$ty": ...}`) as the tokens each name stands for.

    Each value is lexed and resolved like the right-hand side of a definition
    in the text (earlier ones may be used); a bad one is a CompilationError
    naming it.
    """
    from tinyc.parser.lexer import LexError, TensorLexer

    lexer = TensorLexer()
    found: dict[str, list[Token]] = {}
    for key, value in defines.items():
        name = "$" + str(key).lstrip("$")
        where = Source(f"{name} = {value}", f"<definition {name}>")
        if not re.fullmatch(r"\$([0-9]+|[A-Za-z][A-Za-z0-9_]*)", name):
            raise CompilationError(Diagnostic(f"'{key}' is no name for a definition; names are "
                                              f"letters, digits and '_'", Span(1, 1, 1, len(name), where)))
        try:
            tokens = list(lexer.lex(where.text))
            pre = Preprocessor(where, found)
            resolved = list(pre.run(tokens))
        except LexError as err:
            raise CompilationError(Diagnostic(err.message, Span(err.line, err.column, err.line,
                                                                err.end_column, where))) from None
        if resolved:
            extra = resolved[0]
            raise CompilationError(Diagnostic(
                f"the definition of {name} ends at '{extra.value}'; give one constant, attribute "
                f"or type", Span(extra.line, extra.column, extra.line, extra.end_column - 1, where)))
        found[name] = pre.scopes[0][name].tokens
    return found


def definition_spans(tokens: Iterable[Token], source: Source) -> list[tuple[int, int]]:
    """(start, end) offsets of the definitions `$x = ...` in a token stream (the formatter's lines)."""
    pre = Preprocessor(source)
    for _ in pre.run(tokens):
        pass
    return pre.definitions
