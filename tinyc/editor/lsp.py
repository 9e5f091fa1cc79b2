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

Keeping up with large files (tinyc/editor/documents.py): edits are ranges
(incremental sync); a burst of them is checked once, DEBOUNCE after the last;
a check re-parses only the functions that changed (checking.py) and gives
exactly `tinyc check`'s diagnostics; the names (hover, definitions,
completion) come from the last text that parsed, mapped through the edits
since (found a slice at a time; looked up in the IR until then), so no
request parses the file.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any, Callable
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from tinyc import __version__
from tinyc.diagnostics import Diagnostic
from tinyc.editor.analysis import hover as hover_text, line_tokens
from tinyc.editor.completion import complete
from tinyc.editor.documents import Document
from tinyc.positions import UTF16, LineIndex

log = logging.getLogger(__name__)

_COMPLETION_KINDS = {
    "instruction": types.CompletionItemKind.Keyword,
    "type": types.CompletionItemKind.TypeParameter,
    "attribute": types.CompletionItemKind.Property,
    "keyword": types.CompletionItemKind.Keyword,
    "value": types.CompletionItemKind.Variable,
}
_SORT_GROUPS = {"value": "0", "instruction": "1", "type": "2", "attribute": "3", "keyword": "4"}


DEBOUNCE = 0.02
"""Seconds after the last change before checking: a burst of edits is checked once."""


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
        self.documents: dict[str, Document] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}

    @property
    def encoding(self) -> str:
        try:
            return str(self.workspace.position_encoding or UTF16)
        except Exception:  # before `initialize`
            return UTF16

    def document(self, uri: str) -> Document | None:
        """A document the client opened (or, failing that, one pygls knows)."""
        doc = self.documents.get(uri)
        if doc is None:
            try:
                known = self.workspace.get_text_document(uri)
                doc = Document(uri, known.source, known.version, _display_name(uri))
            except Exception:
                return None
        return doc

    def client_can(self, field: str, default: Any) -> Any:
        """A client capability (`text_document.hover.content_format`, ...), if it said."""
        try:
            return get_capability(self.client_capabilities, field, default)
        except Exception:
            return default

    def symbol(self, params):
        """(document, symbol, the occurrences of its name mapped to the current text) at the
        position of a request, or None."""
        doc = self.document(params.text_document.uri)
        if doc is None:
            return None
        names, to_old, to_new = doc.current_names()
        old = to_old(self.offset(doc, params.position))
        found = names.occurrence_at(old) if old is not None else None
        if found is None:
            return None
        symbol = found.symbol
        place = (to_new(symbol.start), to_new(symbol.end))
        every = []
        for o in names.references(symbol):
            start, end = to_new(o.start), to_new(o.end)
            if start is not None and end is not None:
                every.append((start, end, o.is_definition))
        return doc, place, every

    # ------------------------------------------------------------ conversions

    def offset(self, doc: Document, position: types.Position) -> int:
        return doc.index.lsp_offset(position.line, position.character, self.encoding)

    def range(self, index: LineIndex, start: int, end: int) -> types.Range:
        (sl, sc), (el, ec) = index.position(start, self.encoding), index.position(end, self.encoding)
        return types.Range(types.Position(sl, sc), types.Position(el, ec))

    def diagnostic(self, doc: Document, index: LineIndex, d: Diagnostic) -> types.Diagnostic:
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
        code = f"-W{d.warning}" if d.warning else None
        return types.Diagnostic(where, message, severity=severity, source="tinyc", code=code,
                                related_information=related or None, data=data)

    def check_and_publish(self, doc: Document) -> None:
        """Check the document's text, publish the diagnostics, then find its names."""
        self._pending.pop(doc.uri, None)
        if self.documents.get(doc.uri) is not doc:
            return  # closed meanwhile
        checked = doc.check() if doc.stale or doc.checked is None else doc.checked
        # (every change gets its diagnostics, even one that left the text as it was)
        index = doc.index if doc.text is doc.checked_text else LineIndex(doc.checked_text)
        found = [self.diagnostic(doc, index, d) for d in checked.diagnostics]
        if checked.internal_error:
            found.append(types.Diagnostic(
                types.Range(types.Position(0, 0), types.Position(0, 0)),
                checked.internal_error, severity=types.DiagnosticSeverity.Warning,
                source="tinyc"))
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(doc.uri, found, version=doc.version))
        if doc.start_names():
            self._step_soon(doc)

    def _step_soon(self, doc: Document) -> None:
        """Find names a slice at a time, letting requests and changes in between."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            while doc.step_names():
                pass
            return

        def step() -> None:
            if self.documents.get(doc.uri) is doc and doc.step_names():
                loop.call_soon(_safe()(lambda _: step()), None)

        loop.call_soon(_safe()(lambda _: step()), None)

    def check_soon(self, doc: Document) -> None:
        """Check DEBOUNCE after the last change (a later change postpones it)."""
        pending = self._pending.pop(doc.uri, None)
        if pending is not None:
            pending.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a direct call): at once
            self.check_and_publish(doc)
            return
        self._pending[doc.uri] = loop.call_later(DEBOUNCE, _safe()(self.check_and_publish), doc)


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
    doc = server.documents[item.uri] = Document(item.uri, item.text, item.version,
                                                _display_name(item.uri))
    server.check_and_publish(doc)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
@_safe()
def did_change(params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    doc = server.documents.get(uri)
    if doc is None:
        doc = server.documents[uri] = Document(uri, "", params.text_document.version,
                                               _display_name(uri))
    for change in params.content_changes:
        change_range = getattr(change, "range", None)
        if change_range is None:
            doc.set_text(change.text)
            continue
        index = doc.index
        start = index.lsp_offset(change_range.start.line, change_range.start.character,
                                 server.encoding)
        end = index.lsp_offset(change_range.end.line, change_range.end.character, server.encoding)
        doc.replace(start, end, change.text)
    doc.version = params.text_document.version
    server.check_soon(doc)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
@_safe()
def did_save(params: types.DidSaveTextDocumentParams) -> None:
    doc = server.documents.get(params.text_document.uri)
    if doc is not None and params.text is not None and params.text != doc.text:
        doc.set_text(params.text)
        server.check_soon(doc)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
@_safe()
def did_close(params: types.DidCloseTextDocumentParams) -> None:
    server.documents.pop(params.text_document.uri, None)
    pending = server._pending.pop(params.text_document.uri, None)
    if pending is not None:
        pending.cancel()
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(params.text_document.uri, []))


# ---------------------------------------------------------------- navigation

@server.feature(types.TEXT_DOCUMENT_HOVER)
@_safe()
def hover(params: types.HoverParams) -> types.Hover | None:
    doc = server.document(params.text_document.uri)
    if doc is None:
        return None
    names, to_old, to_new = doc.current_names()
    index = doc.index
    offset = server.offset(doc, params.position)

    def line_of(symbol) -> int | None:
        start = to_new(symbol.start)
        return None if start is None else index.position(start)[0] + 1

    found = hover_text(line_tokens(doc.text, index, offset), offset, names, line_of, to_old)
    if found is None:
        return None
    text, start, end = found
    formats = server.client_can("text_document.hover.content_format", None)
    if not formats or types.MarkupKind.Markdown not in formats:  # plain text unless asked
        text = text.replace("```tinyc\n", "").replace("\n```", "").replace("**", "")
        kind = types.MarkupKind.PlainText
    else:
        kind = types.MarkupKind.Markdown
    return types.Hover(types.MarkupContent(kind, text), server.range(index, start, end))


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
@_safe()
def definition(params: types.DefinitionParams) -> list[types.Location] | None:
    at = server.symbol(params)
    if at is None or None in at[1]:
        return None
    doc, (start, end), _ = at
    return [types.Location(doc.uri, server.range(doc.index, start, end))]


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
@_safe()
def references(params: types.ReferenceParams) -> list[types.Location] | None:
    at = server.symbol(params)
    if at is None:
        return None
    doc, _, every = at
    return [types.Location(doc.uri, server.range(doc.index, start, end))
            for start, end, is_definition in every
            if params.context.include_declaration or not is_definition]


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
@_safe()
def highlight(params: types.DocumentHighlightParams) -> list[types.DocumentHighlight] | None:
    at = server.symbol(params)
    if at is None:
        return None
    doc, _, every = at
    return [types.DocumentHighlight(server.range(doc.index, start, end),
                                    types.DocumentHighlightKind.Write if is_definition
                                    else types.DocumentHighlightKind.Read)
            for start, end, is_definition in every]


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@_safe(default=[])
def document_symbols(params: types.DocumentSymbolParams) -> list:
    """The functions: DocumentSymbols, or SymbolInformation for clients without hierarchy."""
    doc = server.document(params.text_document.uri)
    if doc is None:
        return []
    names, _, to_new = doc.current_names()
    index = doc.index
    functions = []
    for f in names.functions:
        start, end = to_new(f.start, clamp=True), to_new(max(f.end, f.name_end), clamp=True)
        name_start, name_end = to_new(f.name_start), to_new(f.name_end)
        if name_start is not None and name_end is not None:
            functions.append((f, server.range(index, start, end),
                              server.range(index, name_start, name_end)))
    if not server.client_can("text_document.document_symbol.hierarchical_document_symbol_support",
                             False):
        return [types.SymbolInformation(name=f.name, kind=types.SymbolKind.Function,
                                        location=types.Location(doc.uri, whole))
                for f, whole, _ in functions]
    return [types.DocumentSymbol(name=f.name, kind=types.SymbolKind.Function, range=whole,
                                 selection_range=name, detail=f.signature)
            for f, whole, name in functions]


# ---------------------------------------------------------------- editing

@server.feature(types.TEXT_DOCUMENT_COMPLETION,
                types.CompletionOptions(trigger_characters=[".", "%", "<", ":", "{"]))
@_safe()
def completion(params: types.CompletionParams) -> types.CompletionList | None:
    doc = server.document(params.text_document.uri)
    if doc is None:
        return None
    offset = server.offset(doc, params.position)
    start, words, more = complete(doc.text, offset, doc.current_names)
    replace = server.range(doc.index, start, offset)
    items = [types.CompletionItem(  # (lean: a generated kernel offers thousands of values)
        label=w.label, kind=_COMPLETION_KINDS.get(w.kind), detail=w.detail or None,
        documentation=w.documentation or None, sort_text=f"{_SORT_GROUPS.get(w.kind, '5')}{n:04d}",
        text_edit=types.TextEdit(replace, w.label)) for n, w in enumerate(words)]
    return types.CompletionList(is_incomplete=more, items=items)


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
    whole = server.range(doc.index, 0, len(doc.text))
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
    index = doc.index
    for d in params.context.diagnostics:
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
