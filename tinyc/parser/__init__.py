"""Source text → IR: the LALR grammar in tensor.lark, a hand lexer, the tree → IR walk (tree_to_ir.py).

The grammar is tensor.lark plus a rule per instruction class (its `keywords`
and `syntax`); its LALR(1) tables are generated into `tables.py`
(`gen_tables.py`, with lark) and driven by `lalr.py`, so parsing does not
import lark. Each class builds itself from the parse (`from_syntax`).

    program = parse(text, "kernel.ir")

Every user error is a `CompilationError` located in the text: syntax errors
(up to 20 per file: the parser resumes at the next line or instruction, see
`lalr.parse_recovering`), then, if there were none, name errors (undefined or
redefined values, repeated function names) and malformed literals, all
collected before raising.

Grammar decisions where the spec's ABNF is loose (documented for users):
  * `memref<`, `strided<`, `group<`, `coopmatrix<` are two tokens each, and
    `x` in a shape is a token of its own, so `memref<f32 x 4>` is the same
    type as `memref<f32x4>`; keywords are case-sensitive.
  * `x` next to digits splits off a word: `f32x16x8`, `2x8` and `x?` read as
    the spec writes them. A hexadecimal float needs `.` or `p` (`0x1p3`), so
    `0x8` in an expand shape is `0`, `x`, `8`.
  * A bare `:` in a subview slice is the whole mode (DESIGN.md).
  * Negative literals where the IR stores sizes beside the `?` marker (mode
    sizes, strides, group size and offset, subview offsets and sizes, expand
    shapes) are errors here; other range rules belong to the verifier.
  * Floating constants outside the double range (`1e999`) are errors here,
    as the printer could not write them back.
  * Complex constants take floating constants only, as in the ABNF.
  * Array attributes accept `,` with or without the space the ABNF shows.
  * A value's span is its `%name` where it is defined; an instruction's span
    runs from its first result name (or its keyword) to its last token.
  * Regions and attributes may nest at most 64 deep.
"""

from __future__ import annotations

from tinyc.diagnostics import CompilationError, Diagnostic, Note, Source, Span
from tinyc.ir.core import Program
from tinyc.parser import lalr
from tinyc.parser.tree_to_ir import ProgramBuilder
from tinyc.parser.lalr import Tree
from tinyc.parser.lexer import TensorLexer
from tinyc.parser.preprocessor import Preprocessor, outside_definitions
from tinyc.std import Std

__all__ = ["parse", "parse_partial", "parse_tree"]

_LEXER: list[TensorLexer] = []


def parse(text: str, name: str = "<string>", std: Std | None = None,
          defines: dict[str, str] | None = None) -> Program:
    """Parse tensor-language source into a Program; raises CompilationError.

    `std` overrides the version the file declares or its spellings imply
    (tinyc.std); the grammar is the same superset either way. `defines`
    gives the preprocessor definitions from outside (`{"ty": "f64"}` is
    `$ty = f64` before the text).
    """
    source = Source(text, name)
    tree, preprocessed = _tree(text, source, defines)
    builder = ProgramBuilder(source, std)
    if preprocessed is not None:
        builder.ctx.mark(Std.NEWEST, "the preprocessor", preprocessed)
    return builder.program(tree)


def parse_partial(text: str, name: str = "<string>") -> tuple[Program, list[Diagnostic]]:
    """The program with whatever names resolve, and the name errors (for editors).

    Raises CompilationError for a syntax error, like `parse`; an undefined
    value stands for a placeholder of type void.
    """
    source = Source(text, name)
    builder = ProgramBuilder(source)
    program = builder.program(_tree(text, source)[0], raise_errors=False)
    return program, sorted(builder.ctx.sink.diagnostics, key=lambda d: (d.line, d.column))


def parse_functions(text: str, name: str = "<string>", std: Std | None = None):
    """The functions of `text`, the markers of its version and its name errors, without
    deciding the program's version (editors check a file piece by piece:
    tinyc/editor/checking.py, which pauses the collector around all pieces: tinyc.collector).
    Raises CompilationError for a syntax error, like `parse`."""
    source = Source(text, name)
    tree = _tree(text, source)[0]
    builder = ProgramBuilder(source, std)
    functions = [builder.function(child) for child in tree.children]
    return functions, builder.ctx.markers, builder.ctx.sink.diagnostics


def parse_tree(text: str, name: str = "<string>") -> Tree:
    """The syntax tree only (no names resolved): what the formatter needs.

    Raises CompilationError for a syntax error, like `parse`.
    """
    return _tree(text, Source(text, name))[0]


def _tree(text: str, source: Source, defines: dict[str, str] | None = None
          ) -> tuple[Tree, Span | None]:
    """The syntax tree, and where the preprocessor is first used (None if it is not)."""
    if not _LEXER:
        _LEXER.append(TensorLexer())
    tokens = _LEXER[0].tokens(text, recover=True)
    preprocessor = None
    if "$" in text or "!" in text or defines:  # the newest language's preprocessor
        preprocessor = Preprocessor(source, outside_definitions(defines or {}))
        tokens = list(preprocessor.run(tokens))
    try:
        tree = lalr.parse(tokens, chained=True)
    except lalr.ParseError:  # parse again, resynchronising after each error, to report them all
        _, errors = lalr.parse_recovering(tokens)
        raise CompilationError(syntax_errors(errors, source)) from None
    return tree, preprocessor.first_use if preprocessor is not None else None


def syntax_errors(errors: list[lalr.ParseError], source: Source) -> list[Diagnostic]:
    """The diagnostics of a recovering parse; the last says when the limit stopped it."""
    from tinyc.parser.errors import syntax_error  # (loaded only when there are errors)

    found = [syntax_error(err, source) for err in errors]
    if len(errors) >= lalr.MAX_ERRORS:
        last = found[-1]
        found[-1] = Diagnostic(last.message, last.span, last.notes + (
            Note(f"too many errors ({lalr.MAX_ERRORS}); the rest of the file was not checked"),))
    return found
