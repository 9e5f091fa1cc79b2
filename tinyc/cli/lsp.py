"""`tinyc lsp`: the language server on standard input and output (tinyc.editor.lsp)."""

from __future__ import annotations

import click


@click.command()
def lsp() -> None:
    """Run the language server over stdio (for editors: diagnostics, hover, definitions, ...)."""
    from tinyc.editor.lsp import serve

    serve()
