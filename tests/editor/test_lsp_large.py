"""`tinyc lsp` on a large generated file, through a real client over stdio (pytest-lsp).

After every incremental edit the published diagnostics are those of `tinyc check
--format json` run on the same text in its own process (errors and warnings, with
their severity: LSP Warning = 2); navigation keeps working from the last text that
parsed while the current one has a syntax error, with positions in the current text.
"""

from __future__ import annotations

import sys

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_testlib import REPO, as_dict, cli_json, client, next_diagnostics  # noqa: F401

sys.path.insert(0, str(REPO))
from benchmarks.lsp_latency import function, many_functions  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")

SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
            "note": types.DiagnosticSeverity.Information}


def assert_same_as_cli(got: list[types.Diagnostic], text: str) -> None:
    want = cli_json(text)
    assert [as_dict(d.range) for d in got] == [w["range"] for w in want]
    for d, w in zip(got, want):
        assert d.message.splitlines()[0].split(" (did you mean")[0] == w["message"].split(" (did you mean")[0]
        assert d.severity == SEVERITY[w["severity"]]
        assert d.code == (f"-W{w['warning']}" if w["warning"] else None)


def position(text: str, needle: str, delta: int = 0) -> types.Position:
    offset = text.index(needle) + delta
    return types.Position(text.count("\n", 0, offset), offset - text.rfind("\n", 0, offset) - 1)


class Session:
    """A document of the client, edited incrementally like an editor does."""

    def __init__(self, client: LanguageClient, uri: str, text: str):
        self.client, self.uri, self.text, self.version = client, uri, text, 1

    async def open(self) -> list[types.Diagnostic]:
        self.client.diagnostics.pop(self.uri, None)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(self.uri, "tinyc", 1, self.text)))
        return await next_diagnostics(self.client, self.uri)

    async def replace(self, old: str, new: str, after: str = "") -> list[types.Diagnostic]:
        at = self.text.index(old, self.text.index(after) if after else 0)
        before = self.text[:at]
        start = types.Position(before.count("\n"), at - before.rfind("\n") - 1)
        stop = at + len(old)
        end = types.Position(self.text.count("\n", 0, stop), stop - self.text.rfind("\n", 0, stop) - 1)
        self.text = self.text[:at] + new + self.text[stop:]
        self.version += 1
        self.client.diagnostics.pop(self.uri, None)
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            [types.TextDocumentContentChangePartial(types.Range(start, end), new)]))
        return await next_diagnostics(self.client, self.uri)


@pytest.fixture
def big_text() -> str:
    """40 kernels of 50 instructions, then one of 1,000: about 3,000 instructions."""
    return many_functions(2000) + "\n".join(function("big", 1000)) + "\n"


async def test_edits_to_a_large_file_give_tinyc_checks_diagnostics(client, big_text):
    doc = Session(client, "file:///tmp/tinyc-lsp-large/a.ir", big_text)
    assert await doc.open() == []  # generated code: no error, no warning
    steps = [
        ("%y5 = arith.mul %x5, %a : f32", "%y5 = arith.mul %x5, %nope : f32", "func @k20("),
        ("  %i = constant 1 : index\n", "  %i = constant 1 : index\n  %spare = constant 2 : index\n\n",
         "func @k3("),                                    # lines move; an unused value (warning)
        ("%w7 = arith.add %y7, %v7 : f32", "%w7 = arith.add %y7, %v7 : f64", "func @big("),
        ("%v2 = load %A[%i, %j] : f32", "%v2 = load %A[%i, %j] :", "func @k30("),  # syntax
        ("%v2 = load %A[%i, %j] :", "%v2 = load %A[%i, %j] : f32", "func @k30("),  # fixed
        ("%y5 = arith.mul %x5, %nope : f32", "%y5 = arith.mul %x5, %a : f32", "func @k20("),
    ]
    for old, new, where in steps:
        got = await doc.replace(old, new, where)
        assert_same_as_cli(got, doc.text)
    assert got[0].severity == types.DiagnosticSeverity.Warning and "%spare" in got[0].message
    big = doc.text[:doc.text.index("func @big(")].count("\n")
    assert got[1:] and all(d.severity == types.DiagnosticSeverity.Error
                           and d.range.start.line > big for d in got[1:])  # the f64 in @big


async def test_navigation_follows_edits_and_survives_syntax_errors(client, big_text):
    doc = Session(client, "file:///tmp/tinyc-lsp-large/b.ir", big_text)
    await doc.open()
    identifier = types.TextDocumentIdentifier(doc.uri)
    # lines inserted above, then a syntax error: the names are the last parsed text's, moved
    await doc.replace("  %i = constant 1 : index\n", "  %i = constant 1 : index\n\n\n\n",
                      "func @k2(")
    broken = await doc.replace("%v1 = load %A[%i, %j] : f32", "%v1 = load %A[%i, %j] :",
                               "func @k1(")
    assert broken and broken[0].severity == types.DiagnosticSeverity.Error
    use = doc.text.index("%x9", doc.text.index("%y9 = arith.mul", doc.text.index("func @k30(")))
    at = types.Position(doc.text.count("\n", 0, use), use - doc.text.rfind("\n", 0, use))
    hover = await client.text_document_hover_async(types.HoverParams(identifier, at))
    definition = doc.text.index("%x9 = arith.add", doc.text.index("func @k30("))
    line = doc.text.count("\n", 0, definition) + 1
    assert "%x9: f32" in hover.contents.value and f"defined on line {line}" in hover.contents.value
    found = await client.text_document_definition_async(types.DefinitionParams(identifier, at))
    assert found[0].range.start == types.Position(line - 1, 2)
    uses = await client.text_document_references_async(types.ReferenceParams(
        text_document=identifier, position=at,
        context=types.ReferenceContext(include_declaration=True)))
    assert len(uses) == 2 and {u.range.start.line for u in uses} == {line - 1, at.line}
    # completion: instructions at a statement's start (where a name would be a new one, so no
    # values), values where an operand goes
    items = (await client.text_document_completion_async(types.CompletionParams(
        identifier, types.Position(at.line + 1, 2)))).items
    labels = {i.label for i in items}
    assert {"arith.add", "gemm.n.t"} <= labels and not any(x.startswith("%") for x in labels)
    typed = await doc.replace("  store %w9,", "  %z = arith.add %x9, %\n  store %w9,", "func @k30(")
    assert typed and typed[0].severity == types.DiagnosticSeverity.Error
    after = position(doc.text, "%z = arith.add %x9, %", len("%z = arith.add %x9, %"))
    values = (await client.text_document_completion_async(types.CompletionParams(
        identifier, after))).items
    assert {"%x9", "%y9", "%a", "%A"} <= {i.label for i in values}
    assert next(i for i in values if i.label == "%A").detail == "memref<f32x16x8>"
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(identifier))
    assert [s.name for s in symbols][-2:] == ["@k39", "@big"]
    assert symbols[-1].selection_range.start == position(doc.text, "@big")


async def test_many_variants_come_once_the_instruction_is_named(client):
    """The coopmatrix atomics have 360 spellings each: a few until the name is typed (the list
    says it is incomplete), then all of them."""
    from tinyc.editor import vocabulary

    text = "func @f() {\n  \n}\n"
    doc = Session(client, "file:///tmp/tinyc-lsp-large/c.ir", text)
    await doc.open()
    identifier = types.TextDocumentIdentifier(doc.uri)
    first = await client.text_document_completion_async(types.CompletionParams(
        identifier, types.Position(1, 2)))
    heads = {i.label.split(".")[0] for i in first.items}
    assert first.is_incomplete and "cooperative_matrix_atomic_load" in heads
    assert len(first.items) < 600
    await doc.replace("  \n", "  cooperative_matrix_atomic_load.\n")
    named = await client.text_document_completion_async(types.CompletionParams(
        identifier, types.Position(1, 2 + len("cooperative_matrix_atomic_load."))))
    loads = {i.label for i in named.items if i.label.startswith("cooperative_matrix_atomic_load")}
    assert loads == {w.spelling for w in vocabulary.instructions()
                     if w.head == "cooperative_matrix_atomic_load"}
    assert len(loads) == vocabulary.variants("cooperative_matrix_atomic_load") > 100
