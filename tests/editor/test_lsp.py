"""`tinyc lsp` end to end: a real LSP client (pytest-lsp) talks to the server over stdio.

Diagnostics are compared with `tinyc check --format json` run as a separate
process on the same text; instruction summaries with the IR classes' own
docstrings; completions are parsed back by the compiler.
"""

from __future__ import annotations

import random

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tinyc.ir.instructions import Gemm, Subview
from tinyc.parser import parse_tree
from tinyc.diagnostics import CompilationError

from lsp_testlib import ENV, REPO, SERVER, as_dict, cli_json, client, next_diagnostics  # noqa: F401

SAMPLES = sorted((REPO / "samples").glob("*.ir"))

pytestmark = pytest.mark.asyncio(loop_scope="module")


_counter = iter(range(10**6))


async def open_document(client: LanguageClient, text: str) -> tuple[str, list[types.Diagnostic]]:
    uri = f"file:///tmp/tinyc-lsp-test/doc{next(_counter)}.ir"
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri, "tinyc", 1, text)))
    return uri, await next_diagnostics(client, uri)


async def change_document(client: LanguageClient, uri: str, version: int,
                          changes: list) -> list[types.Diagnostic]:
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version), changes))
    return await next_diagnostics(client, uri)


def position_of(text: str, needle: str, occurrence: int = 0, delta: int = 0) -> types.Position:
    """LSP position (UTF-16) of the n-th `needle` in `text`, plus `delta` characters."""
    offset = -1
    for _ in range(occurrence + 1):
        offset = text.index(needle, offset + 1)
    offset += delta
    before = text[:offset]
    line = before.count("\n")
    column = before[before.rfind("\n") + 1:]
    return types.Position(line, len(column.encode("utf-16-le")) // 2)


BAD_PROGRAMS = {
    "syntax": "func @f(%A: memref<f32x8x8>) {\n  %x = constant 2 -> i32\n}\n",
    "misspelled": "func @f(%a: f32) {\n  %x = arith.ad %a, %a : f32\n}\n",
    "names": ("func @f(%a: f32) {\n  %x = arith.add %a, %b : f32\n"
              "  %a = arith.add %a, %a : f32\n}\n"),
    "gemm": ("; C (8x8) cannot hold A (8x4) times B (8x8)\n"
             "func @bad(%A: memref<f32x8x4>, %B: memref<f32x8x8>, %C: memref<f32x8x8>) {\n"
             "  %one = constant 1.0 : f32\n  gemm.n.n %one, %A, %B, %one, %C\n}\n"),
    "astral": 'func @f() attributes {"a😀b\n',
    "crlf": "func @f(%a: f32) {\r\n  %x = arith.add %a, %zz : f32\r\n}\r\n",
}


@pytest.mark.parametrize("name", sorted(BAD_PROGRAMS))
async def test_diagnostics_match_the_cli(client: LanguageClient, name: str):
    text = BAD_PROGRAMS[name]
    _, got = await open_document(client, text)
    want = cli_json(text)
    assert want, "the reference finds errors"
    assert [as_dict(d.range) for d in got] == [w["range"] for w in want]
    for d, w in zip(got, want):
        hint = "".join(f" ({h[0].lower() + h[1:-1]}?)" for h in w["hints"]
                       if h.startswith("did you mean"))
        message = "\n".join(line for line in d.message.splitlines() if not line.startswith("hint: "))
        assert message.replace(hint, "") == w["message"]
        assert all(h[:-1] in d.message for h in w["hints"])
        assert d.severity == types.DiagnosticSeverity.Error and d.source == "tinyc"
        notes = [(n["message"], n["range"]) for n in w["notes"]]
        related = [(r.message, as_dict(r.location.range)) for r in d.related_information or []]
        assert related == notes


async def test_astral_characters_count_two_utf16_units(client: LanguageClient):
    text = BAD_PROGRAMS["astral"]
    _, got = await open_document(client, text)
    # the unterminated string runs from the quote to the end of the line: `"a😀b` is 5 units
    start = text.index('"')
    assert (got[0].range.start.character, got[0].range.end.character) == (start, start + 5)


async def test_hints_are_data_and_quick_fixes(client: LanguageClient):
    uri, got = await open_document(client, BAD_PROGRAMS["misspelled"])
    assert "did you mean 'arith.add'?" in got[0].message
    assert got[0].data["suggestions"] == ["arith.add"]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), got[0].range, types.CodeActionContext(got)))
    edit = actions[0].edit.changes[uri][0]
    assert edit.new_text == "arith.add" and edit.range == got[0].range


async def test_diagnostics_follow_every_change(client: LanguageClient):
    text = BAD_PROGRAMS["misspelled"]
    uri, first = await open_document(client, text)
    assert len(first) == 1
    start = position_of(text, "arith.ad", delta=len("arith.ad"))
    fixed = await change_document(client, uri, 2, [types.TextDocumentContentChangePartial(
        types.Range(start, start), "d")])
    assert [(d.message, d.severity, d.code) for d in fixed] == [  # no error left: a warning
        ("arith.add: '%x' is never used", types.DiagnosticSeverity.Warning, "-Wunused-value")]
    text = text.replace("arith.ad ", "arith.add ")
    where = position_of(text, "%a : f32")
    broken = await change_document(client, uri, 3, [types.TextDocumentContentChangePartial(
        types.Range(where, types.Position(where.line, where.character + 2)), "%aa")])
    assert [d.message for d in broken] == ["undefined value '%aa' (did you mean '%a'?)"]
    whole = await change_document(client, uri, 4, [
        types.TextDocumentContentChangeWholeDocument(SAMPLES[0].read_text())])
    assert whole == []


async def test_hover_on_a_value_shows_type_and_definition(client: LanguageClient):
    text = (REPO / "samples" / "fused_kernel.ir").read_text()
    uri, diagnostics = await open_document(client, text)
    assert diagnostics == []
    use = position_of(text, "%tmp0", occurrence=1, delta=2)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), use))
    value = hover.contents.value
    definition_line = position_of(text, "%tmp0 = alloca").line + 1
    assert "%tmp0: memref<f32x16x8,local>" in value
    assert f"line {definition_line}" in value and "alloca" in value
    assert hover.range == types.Range(position_of(text, "%tmp0", 1),
                                      position_of(text, "%tmp0", 1, delta=5))
    argument = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), position_of(text, "%A[%0]", delta=1)))
    assert "%A: group<memref<f32x16x8>x?>" in argument.contents.value
    assert "argument of @fused_kernel" in argument.contents.value


@pytest.mark.parametrize("spelling, cls", [("gemm.n.t", Gemm), ("subview", Subview)])
async def test_hover_on_an_instruction_shows_its_summary(client: LanguageClient, spelling, cls):
    text = (REPO / "samples" / "fused_kernel.ir").read_text()
    uri, _ = await open_document(client, text)
    for delta in (0, len(spelling) - 1):  # on the name and on its last modifier
        hover = await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), position_of(text, spelling, delta=delta)))
        assert spelling in hover.contents.value
        assert cls.__doc__.strip().splitlines()[0] in hover.contents.value


async def test_go_to_definition_of_values_and_functions(client: LanguageClient):
    text = (REPO / "samples" / "dg_volume.ir").read_text()
    uri, _ = await open_document(client, text)
    for name, definition in (("%tmp", "%tmp = alloca"), ("%d", "%d = %d0"), ("%K", "%K:"),
                             ("%e", "%e = builtin")):
        use = text.rindex(name + ",") if name + "," in text else text.rindex(name)
        before = text[:use]
        where = types.Position(before.count("\n"), use - before.rfind("\n") - 1)
        found = await client.text_document_definition_async(types.DefinitionParams(
            types.TextDocumentIdentifier(uri), where))
        target = position_of(text, definition)
        assert found[0].uri == uri
        assert found[0].range == types.Range(
            target, types.Position(target.line, target.character + len(name))), name
    fn = await client.text_document_definition_async(types.DefinitionParams(
        types.TextDocumentIdentifier(uri), position_of(text, "@dg_volume", delta=3)))
    assert fn[0].range.start == position_of(text, "@dg_volume")


async def test_definition_still_works_with_a_syntax_error_elsewhere(client: LanguageClient):
    text = (REPO / "samples" / "fused_kernel.ir").read_text().replace(
        "%zero = constant 0.0 : f32", "%zero = constant 0.0 :")
    uri, diagnostics = await open_document(client, text)
    assert diagnostics
    found = await client.text_document_definition_async(types.DefinitionParams(
        types.TextDocumentIdentifier(uri), position_of(text, "%tmp0, %C", delta=1)))
    assert found[0].range.start == position_of(text, "%tmp0 = alloca")


def _instruction_accepted(spelling: str) -> bool:
    """Does the parser take `spelling` as an instruction name?"""
    try:
        parse_tree(f"func @f() {{\n  {spelling} ~\n}}\n")
    except CompilationError as err:
        message = err.diagnostics[0].message
        return not message.startswith(("unknown instruction", "unknown modifier"))
    return True


async def _complete(client, uri, position):
    result = await client.text_document_completion_async(types.CompletionParams(
        types.TextDocumentIdentifier(uri), position))
    return result.items if isinstance(result, types.CompletionList) else result


async def test_completion_offers_every_instruction_variant(client: LanguageClient):
    text = "func @f(%alpha: f32, %A: memref<f32x8x8>) {\n  \n}\n"
    uri, _ = await open_document(client, text)
    items = await _complete(client, uri, types.Position(1, 2))
    labels = {i.label for i in items}
    assert {"gemm.n.n", "gemm.n.t", "gemm.t.t.atomic", "axpby.t.atomic", "gemv.n", "sum.t.atomic",
            "ger.atomic", "hadamard_product.atomic", "cumsum.atomic", "store.atomic_add",
            "cooperative_matrix_store.both_checked.atomic_add", "cooperative_matrix_load.t.rows_checked",
            "barrier.global.local", "arith.add", "cmp.lt", "math.native_exp", "builtin.group_id",
            "subgroup_min.exclusive_scan", "for", "if", "foreach", "parallel", "yield"} <= labels
    instructions = [i for i in items if i.kind == types.CompletionItemKind.Keyword]
    assert instructions and all(_instruction_accepted(i.label) for i in instructions)
    assert not {"f32", "memref"} & labels  # no types where an instruction goes
    # the text edit replaces what was typed
    typed = await change_document(client, uri, 2, [types.TextDocumentContentChangePartial(
        types.Range(types.Position(1, 2), types.Position(1, 2)), "gemm.n")])
    assert typed is not None
    items = await _complete(client, uri, types.Position(1, 8))
    gemm = next(i for i in items if i.label == "gemm.n.t")
    assert gemm.text_edit.range == types.Range(types.Position(1, 2), types.Position(1, 8))


async def test_completion_of_types_attributes_and_values(client: LanguageClient):
    text = ("func @f(%alpha: f32, %A: memref<f32x8x8> {}) {\n"
            "  %x = constant 1.0 : \n  %y = arith.add %alpha, %\n}\n")
    uri, _ = await open_document(client, text)
    types_here = {i.label for i in await _complete(client, uri, position_of(text, ": \n", delta=2))}
    assert {"f32", "f64", "c32", "i8", "index", "bf16", "bool"} <= types_here
    assert "gemm.n.n" not in types_here
    attributes = {i.label for i in await _complete(client, uri, position_of(text, "{}", delta=1))}
    assert {"alignment", "shape_gcd", "stride_gcd"} <= attributes
    values = await _complete(client, uri, position_of(text, "%\n", delta=1))
    assert {"%alpha", "%A", "%x"} <= {i.label for i in values}
    assert next(i for i in values if i.label == "%A").detail == "memref<f32x8x8>"
    element = {i.label for i in await _complete(client, uri, position_of(text, "f32x8", delta=0))}
    assert {"f32", "c64"} <= element


async def test_document_symbols_are_the_functions(client: LanguageClient):
    text = (REPO / "samples" / "fused_kernel.ir").read_text() + "\nfunc @second() {\n}\n"
    uri, _ = await open_document(client, text)
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(
        types.TextDocumentIdentifier(uri)))
    assert [s.name for s in symbols] == ["@fused_kernel", "@second"]
    assert all(s.kind == types.SymbolKind.Function for s in symbols)
    assert symbols[0].selection_range.start == position_of(text, "@fused_kernel")
    assert symbols[1].range.start == position_of(text, "func @second")


async def test_formatting_is_tinyc_fmt(client: LanguageClient):
    from tinyc.editor.format import format_source

    text = "func @f(%a: f32) {\n%x=arith.add %a,%a:f32 ; sum\n}\n"
    uri, _ = await open_document(client, text)
    edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
        types.TextDocumentIdentifier(uri), types.FormattingOptions(2, True)))
    assert edits[0].new_text == format_source(text)


GARBAGE = ["", "\x00\x01\x02", "{{{{{{" * 50, "func", "func @f(", "}" * 100, "%" * 1000,
           "func @f() {\n" + "  parallel {\n" * 80 + "}\n" * 81, "😀" * 100 + "\r\r\n\u2028\x0c",
           "func @f(%a: f32) { %b = gemm.n.t.atomic.atomic %a\n" * 30,
           'func @f() attributes {"x"=[[[[[[[[[1]]]]]]]]]} {}' * 3]


async def test_any_text_and_any_edit_keep_the_server_alive(client: LanguageClient):
    rng = random.Random(7)
    pieces = GARBAGE + [p.read_text() for p in SAMPLES[:3]]
    uri, _ = await open_document(client, rng.choice(pieces))
    version = 1
    for step in range(60):
        version += 1
        line, character = rng.randrange(-1, 40), rng.randrange(-1, 200)
        end = types.Position(max(line, 0) + rng.randrange(3), rng.randrange(300))
        start = types.Position(max(line, 0), max(character, 0))
        if (end.line, end.character) < (start.line, start.character):
            start, end = end, start
        change = (types.TextDocumentContentChangePartial(types.Range(start, end),
                                                         rng.choice(pieces)[:rng.randrange(80)])
                  if step % 7 else types.TextDocumentContentChangeWholeDocument(rng.choice(pieces)))
        diagnostics = await change_document(client, uri, version, [change])
        assert isinstance(diagnostics, list)
        where = types.Position(rng.randrange(60), rng.randrange(120))
        identifier = types.TextDocumentIdentifier(uri)
        await client.text_document_hover_async(types.HoverParams(identifier, where))
        await client.text_document_definition_async(types.DefinitionParams(identifier, where))
        await client.text_document_completion_async(types.CompletionParams(identifier, where))
        await client.text_document_document_symbol_async(types.DocumentSymbolParams(identifier))
    assert client.error is None
    failures = [m.message for m in client.log_messages if m.type == types.MessageType.Error]
    assert failures == []
    # and it still answers correctly afterwards
    text = (REPO / "samples" / "fused_kernel.ir").read_text()
    uri, diagnostics = await open_document(client, text)
    assert diagnostics == []


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=SERVER, server_env=ENV))
async def client32(lsp_client: LanguageClient):
    capabilities = pytest_lsp.client_capabilities("visual-studio-code")
    capabilities.general = types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind.Utf32])
    result = await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf32
    yield
    await lsp_client.shutdown_session()


async def test_positions_in_the_negotiated_encoding(client32: LanguageClient):
    """With UTF-32 positions an emoji is one character, not two."""
    text = BAD_PROGRAMS["astral"]
    _, got = await open_document(client32, text)
    start = text.index('"')
    assert (got[0].range.start.character, got[0].range.end.character) == (start, start + 4)
    # an edit of two characters removes two emoji (in UTF-16 it would be one)
    text = 'func @f() {\n😀😀  %x = constant 1.0 : f32\n}\n'
    uri, diagnostics = await open_document(client32, text)
    assert [d.range.start.character for d in diagnostics] == [0]
    fixed = await change_document(client32, uri, 2, [types.TextDocumentContentChangePartial(
        types.Range(types.Position(1, 0), types.Position(1, 2)), "")])
    assert [d.severity for d in fixed] == [types.DiagnosticSeverity.Warning]  # '%x' unused
    hover = await client32.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(1, 3)))
    assert "%x: f32" in hover.contents.value


async def test_references_and_highlights(client: LanguageClient):
    text = (REPO / "samples" / "fused_kernel.ir").read_text()
    uri, _ = await open_document(client, text)
    at = position_of(text, "%one", occurrence=1, delta=1)  # a use of %one
    identifier = types.TextDocumentIdentifier(uri)
    every = await client.text_document_references_async(types.ReferenceParams(
        text_document=identifier, position=at,
        context=types.ReferenceContext(include_declaration=True)))
    starts = sorted((r.range.start.line, r.range.start.character) for r in every)
    want = sorted((p.line, p.character) for p in (position_of(text, "%one", n) for n in range(3)))
    assert starts == want
    uses = await client.text_document_references_async(types.ReferenceParams(
        text_document=identifier, position=at,
        context=types.ReferenceContext(include_declaration=False)))
    assert len(uses) == 2
    marks = await client.text_document_document_highlight_async(types.DocumentHighlightParams(
        identifier, at))
    kinds = sorted(m.kind for m in marks)
    assert kinds == [types.DocumentHighlightKind.Read, types.DocumentHighlightKind.Read,
                     types.DocumentHighlightKind.Write]


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=SERVER, server_env=ENV))
async def bare_client(lsp_client: LanguageClient):
    """A client that says nothing about itself: no markdown, no symbol hierarchy."""
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


async def test_a_minimal_client_gets_plain_text_and_flat_symbols(bare_client: LanguageClient):
    text = (REPO / "samples" / "fused_kernel.ir").read_text()
    uri, diagnostics = await open_document(bare_client, text)
    assert diagnostics == []
    identifier = types.TextDocumentIdentifier(uri)
    symbols = await bare_client.text_document_document_symbol_async(
        types.DocumentSymbolParams(identifier))
    assert [(s.name, s.location.range.start) for s in symbols] == [
        ("@fused_kernel", position_of(text, "func @fused_kernel"))]
    hover = await bare_client.text_document_hover_async(types.HoverParams(
        identifier, position_of(text, "%tmp0", 1)))
    assert hover.contents.kind == types.MarkupKind.PlainText
    assert hover.contents.value.startswith("%tmp0: memref<f32x16x8,local>")
