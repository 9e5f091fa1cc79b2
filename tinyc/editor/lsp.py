"""`tinyc lsp`: a language server for `.ir` files over stdio (pygls).

Features: diagnostics on open and on every change (the CLI's, with notes as
related information and "did you mean" hints, also offered as quick fixes),
hover (a value's type and definition, an instruction's summary), go to
definition, references and highlights, completion (instruction spellings
with every variant, types, attribute names, keywords, values in scope),
document symbols (functions), and formatting (`tinyc fmt`).

The server keeps each document's text itself and applies changes with the
LSP's rules (lines end at `\\n`, `\\r\\n` or `\\r`; characters in the
negotiated encoding, UTF-16 by default), so any text, any edit and any
position is handled; every handler catches its own failures, logs them and
answers empty rather than let a request fail or the server stop.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from tinyc import __version__
from tinyc.diagnostics import Diagnostic
from tinyc.editor.analysis import Analysis, Occurrence
from tinyc.editor.positions import UTF16, LineIndex

log = logging.getLogger(__name__)

_COMPLETION_KINDS = {
    "instruction": types.CompletionItemKind.Keyword,
    "type": types.CompletionItemKind.TypeParameter,
    "attribute": types.CompletionItemKind.Property,
    "keyword": types.CompletionItemKind.Keyword,
    "value": types.CompletionItemKind.Variable,
}
_SORT_GROUPS = {"value": "0", "instruction": "1", "type": "2", "attribute": "3", "keyword": "4"}


@dataclass
class _Document:
    uri: str
    text: str
    version: int | None
    _analysis: Analysis | None = None

    @property
    def analysis(self) -> Analysis:
        if self._analysis is None or self._analysis.text is not self.text:
            self._analysis = Analysis(self.text, _display_name(self.uri))
        return self._analysis


def _display_name(uri: str) -> str:
    """The file name diagnostics are made with (not shown in LSP messages)."""
    try:
        parsed = urlparse(uri)
        return unquote(parsed.path) if parsed.scheme == "file" else uri
    except ValueError:
        return uri


class TinycLanguageServer(LanguageServer):
    """The server: a store of documents and the LSP features below."""

    def __init__(self) -> None:
        super().__init__("tinyc", __version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.documents: dict[str, _Document] = {}

    @property
    def encoding(self) -> str:
        try:
            return str(self.workspace.position_encoding or UTF16)
        except Exception:  # before `initialize`
            return UTF16

    def document(self, uri: str) -> _Document | None:
        """A document the client opened (or, failing that, one pygls knows)."""
        doc = self.documents.get(uri)
        if doc is None:
            try:
                known = self.workspace.get_text_document(uri)
                doc = _Document(uri, known.source, known.version)
            except Exception:
                return None
        return doc

    def client_can(self, field: str, default: Any) -> Any:
        """A client capability (`text_document.hover.content_format`, ...), if it said."""
        try:
            return get_capability(self.client_capabilities, field, default)
        except Exception:
            return default

    def occurrence(self, params) -> tuple[_Document, Occurrence] | None:
        """The document of a position request and the name occurrence at its position."""
        doc = self.document(params.text_document.uri)
        if doc is None:
            return None
        found = doc.analysis.occurrence_at(self.offset(doc, params.position))
        return (doc, found) if found is not None else None

    # ------------------------------------------------------------ conversions

    def offset(self, doc: _Document, position: types.Position) -> int:
        return doc.analysis.index.lsp_offset(position.line, position.character, self.encoding)

    def range(self, index: LineIndex, start: int, end: int) -> types.Range:
        (sl, sc), (el, ec) = index.position(start, self.encoding), index.position(end, self.encoding)
        return types.Range(types.Position(sl, sc), types.Position(el, ec))

    def diagnostic(self, doc: _Document, d: Diagnostic) -> types.Diagnostic:
        index = doc.analysis.index
        where = (self.range(index, *index.span_offsets(d.span)) if d.span is not None
                 else types.Range(types.Position(0, 0), types.Position(0, 0)))
        related = [types.DiagnosticRelatedInformation(
            types.Location(doc.uri, self.range(index, *index.span_offsets(n.span))), n.message)
            for n in d.notes if n.span is not None]
        unplaced = [n.message for n in d.notes if n.span is None]
        message = "\n".join([d.message, *(f"note: {m}" for m in unplaced),
                             *([f"hint: {d.hint}"] if d.hint else [])])
        severity = {"warning": types.DiagnosticSeverity.Warning,
                    "note": types.DiagnosticSeverity.Information}.get(
                        d.severity, types.DiagnosticSeverity.Error)
        data = {"hints": d.hints, "suggestions": d.suggestions} if d.hints else None
        return types.Diagnostic(where, message, severity=severity, source="tinyc",
                                related_information=related or None, data=data)

    def publish(self, doc: _Document) -> None:
        analysis = doc.analysis
        found = [self.diagnostic(doc, d) for d in analysis.diagnostics]
        if analysis.internal_error:
            found.append(types.Diagnostic(
                types.Range(types.Position(0, 0), types.Position(0, 0)), analysis.internal_error,
                severity=types.DiagnosticSeverity.Warning, source="tinyc"))
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(doc.uri, found, version=doc.version))


server = TinycLanguageServer()


def _safe(default: Any = None) -> Callable:
    """Run a handler; on any failure log it and answer `default` (the server goes on)."""

    def decorate(handler: Callable) -> Callable:
        @functools.wraps(handler)
        def run(params):
            try:
                return handler(params)
            except Exception:
                log.exception("tinyc lsp: %s failed", handler.__name__)
                try:
                    server.window_log_message(types.LogMessageParams(
                        types.MessageType.Error, f"tinyc: {handler.__name__} failed; see the log"))
                except Exception:
                    pass
                return default

        return run

    return decorate


# ---------------------------------------------------------------- documents

@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
@_safe()
def did_open(params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    doc = server.documents[item.uri] = _Document(item.uri, item.text, item.version)
    server.publish(doc)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
@_safe()
def did_change(params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    doc = server.documents.get(uri)
    if doc is None:
        doc = server.documents[uri] = _Document(uri, "", params.text_document.version)
    text = doc.text
    for change in params.content_changes:
        change_range = getattr(change, "range", None)
        if change_range is None:
            text = change.text
            continue
        index = LineIndex(text)
        start = index.lsp_offset(change_range.start.line, change_range.start.character,
                                 server.encoding)
        end = index.lsp_offset(change_range.end.line, change_range.end.character, server.encoding)
        start, end = min(start, end), max(start, end)
        text = text[:start] + change.text + text[end:]
    doc.text = text
    doc.version = params.text_document.version
    server.publish(doc)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
@_safe()
def did_save(params: types.DidSaveTextDocumentParams) -> None:
    doc = server.documents.get(params.text_document.uri)
    if doc is not None and params.text is not None and params.text != doc.text:
        doc.text = params.text
        server.publish(doc)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
@_safe()
def did_close(params: types.DidCloseTextDocumentParams) -> None:
    server.documents.pop(params.text_document.uri, None)
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(params.text_document.uri, []))


# ---------------------------------------------------------------- navigation

@server.feature(types.TEXT_DOCUMENT_HOVER)
@_safe()
def hover(params: types.HoverParams) -> types.Hover | None:
    doc = server.document(params.text_document.uri)
    if doc is None:
        return None
    found = doc.analysis.hover(server.offset(doc, params.position))
    if found is None:
        return None
    text, start, end = found
    formats = server.client_can("text_document.hover.content_format", None)
    if not formats or types.MarkupKind.Markdown not in formats:  # plain text unless asked
        text = text.replace("```tinyc\n", "").replace("\n```", "").replace("**", "")
        kind = types.MarkupKind.PlainText
    else:
        kind = types.MarkupKind.Markdown
    return types.Hover(types.MarkupContent(kind, text), server.range(doc.analysis.index, start, end))


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
@_safe()
def definition(params: types.DefinitionParams) -> list[types.Location] | None:
    at = server.occurrence(params)
    if at is None:
        return None
    doc, found = at
    symbol = found.symbol
    return [types.Location(doc.uri, server.range(doc.analysis.index, symbol.start, symbol.end))]


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
@_safe()
def references(params: types.ReferenceParams) -> list[types.Location] | None:
    at = server.occurrence(params)
    if at is None:
        return None
    doc, found = at
    return [types.Location(doc.uri, server.range(doc.analysis.index, o.start, o.end))
            for o in doc.analysis.references(found.symbol)
            if params.context.include_declaration or not o.is_definition]


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
@_safe()
def highlight(params: types.DocumentHighlightParams) -> list[types.DocumentHighlight] | None:
    at = server.occurrence(params)
    if at is None:
        return None
    doc, found = at
    return [types.DocumentHighlight(server.range(doc.analysis.index, o.start, o.end),
                                    types.DocumentHighlightKind.Write if o.is_definition
                                    else types.DocumentHighlightKind.Read)
            for o in doc.analysis.references(found.symbol)]


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@_safe(default=[])
def document_symbols(params: types.DocumentSymbolParams) -> list:
    """The functions: DocumentSymbols, or SymbolInformation for clients without hierarchy."""
    doc = server.document(params.text_document.uri)
    if doc is None:
        return []
    index = doc.analysis.index
    if not server.client_can("text_document.document_symbol.hierarchical_document_symbol_support",
                             False):
        return [types.SymbolInformation(
            name=f.name, kind=types.SymbolKind.Function,
            location=types.Location(doc.uri, server.range(index, f.start, max(f.end, f.name_end))))
            for f in doc.analysis.functions]
    return [types.DocumentSymbol(
        name=f.name, kind=types.SymbolKind.Function,
        range=server.range(index, f.start, max(f.end, f.name_end)),
        selection_range=server.range(index, f.name_start, f.name_end), detail=f.signature)
        for f in doc.analysis.functions]


# ---------------------------------------------------------------- editing

@server.feature(types.TEXT_DOCUMENT_COMPLETION,
                types.CompletionOptions(trigger_characters=[".", "%", "<", ":", "{"]))
@_safe()
def completion(params: types.CompletionParams) -> types.CompletionList | None:
    doc = server.document(params.text_document.uri)
    if doc is None:
        return None
    analysis = doc.analysis
    offset = server.offset(doc, params.position)
    start, words = analysis.completion(offset)
    replace = server.range(analysis.index, start, offset)
    items = [types.CompletionItem(
        label=w.label, kind=_COMPLETION_KINDS.get(w.kind), detail=w.detail or None,
        documentation=w.documentation or None, filter_text=w.label,
        sort_text=f"{_SORT_GROUPS.get(w.kind, '5')}{n:04d}",
        text_edit=types.TextEdit(replace, w.label)) for n, w in enumerate(words)]
    return types.CompletionList(is_incomplete=False, items=items)


@server.feature(types.TEXT_DOCUMENT_FORMATTING)
@_safe()
def formatting(params: types.DocumentFormattingParams) -> list[types.TextEdit] | None:
    from tinyc.diagnostics import CompilationError
    from tinyc.editor.format import format_source

    doc = server.document(params.text_document.uri)
    if doc is None:
        return None
    try:
        formatted = format_source(doc.text)
    except CompilationError:
        return None  # a syntax error: nothing to format (the diagnostics say why)
    if formatted == doc.text:
        return []
    whole = server.range(doc.analysis.index, 0, len(doc.text))
    return [types.TextEdit(whole, formatted)]


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
@_safe(default=[])
def code_actions(params: types.CodeActionParams) -> list[types.CodeAction]:
    """"did you mean" hints as quick fixes: replace the word with the suggestion."""
    doc = server.document(params.text_document.uri)
    if doc is None:
        return []
    actions = []
    for d in params.context.diagnostics:
        index = doc.analysis.index
        start = index.lsp_offset(d.range.start.line, d.range.start.character, server.encoding)
        end = index.lsp_offset(d.range.end.line, d.range.end.character, server.encoding)
        word = doc.text[start:end]
        if not word or len(word) > 64 or any(ch.isspace() for ch in word):
            continue  # the diagnostic covers more than the misspelled word
        data = d.data if isinstance(d.data, dict) else {}
        for suggestion in data.get("suggestions") or []:
            if not isinstance(suggestion, str):
                continue
            edit = types.WorkspaceEdit(changes={params.text_document.uri: [
                types.TextEdit(d.range, suggestion)]})
            actions.append(types.CodeAction(f"Replace with '{suggestion}'",
                                            kind=types.CodeActionKind.QuickFix,
                                            diagnostics=[d], edit=edit, is_preferred=True))
    return actions


def serve() -> None:
    """Serve on standard input and output until the client says exit."""
    server.start_io()
