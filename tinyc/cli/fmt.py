"""`tinyc fmt [--check] FILE...|-`: rewrite files in the canonical layout (tinyc.editor.format)."""

from __future__ import annotations

import difflib
import sys

import click

from tinyc.cli.common import (
    EXIT_INTERNAL, EXIT_USAGE, FileProblem, Inputs, color_option, display_name, error,
    print_diagnostics, want_color, write_output,
)
from tinyc.diagnostics import CompilationError


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; show a diff and exit 1 if a file is not formatted.")
@color_option
def fmt(files: tuple[str, ...], check_only: bool) -> None:
    """Format FILES in place in the canonical layout ('-': standard input to standard output).

    A file with a syntax error is reported and left as it is (exit 1).
    """
    from tinyc.editor.format import FormatterError, format_source

    failed = unwritable = False
    inputs = Inputs(files)
    for path, text in inputs:
        try:
            formatted = format_source(text, display_name(path))
        except CompilationError as err:
            print_diagnostics(err)
            failed = True
            continue
        except FormatterError as err:
            error(f"internal error formatting {display_name(path)}: {err}")
            sys.exit(EXIT_INTERNAL)
        if check_only:
            if formatted != text:
                _show_diff(path, text, formatted)
                failed = True
            continue
        if path != "-" and formatted == text:
            continue
        try:
            write_output(path, formatted)
        except FileProblem as problem:
            error(str(problem))
            unwritable = True
    sys.exit(EXIT_USAGE if unwritable else inputs.exit_code(failed))


def _show_diff(path: str, before: str, after: str) -> None:
    """A unified diff of what formatting would change, on standard output."""
    name = display_name(path)
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 f"{name}", f"{name} (formatted)")
    color = want_color(sys.stdout)
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        if color and line[:1] in "+-" and line[:3] not in ("+++", "---"):
            line = click.style(line, fg="green" if line[0] == "+" else "red")
        click.echo(line, nl=False, color=color)
