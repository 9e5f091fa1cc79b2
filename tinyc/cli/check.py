"""`tinyc check FILE...`: syntax, type and region errors, as text or JSON."""

from __future__ import annotations

import sys

import click

from tinyc.cli.common import (
    Inputs, color_option, display_name, language_options, leave_without_teardown, print_diagnostics,
    print_warnings, warning_options, warning_policy,
)
from tinyc.diagnostics import CompilationError


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              help="Diagnostics as text (default) or as a JSON list for editors.")
@language_options
@warning_options
@color_option
def check(files: tuple[str, ...], fmt: str, std: str | None, defines: dict[str, str]) -> None:
    """Check FILES ('-': standard input) for syntax, type and region errors, and warnings.

    Warnings (docs/warnings.md) do not fail the check unless -W error.

    \b
    JSON: a list of {file, severity, warning, message, hints, line, column,
    end_line, end_column, range, notes}; severity is error, warning or note,
    warning the warning's name (null for others); line/column are 1-based
    with the end column inclusive (as in the text form), `range` is the
    LSP's (0-based, UTF-16 code units, end exclusive).
    """
    from tinyc.compiler import check_source

    failed = False
    collected: list[dict] = []
    policy = warning_policy()
    inputs = Inputs(files)
    for path, text in inputs:
        try:
            program = check_source(text, display_name(path), std=std, defines=defines,
                                   warnings=policy)
        except CompilationError as err:
            failed = True
            if fmt == "json":
                collected += [d.to_json() for d in err.all_diagnostics]
            else:
                print_diagnostics(err)
            continue
        if fmt == "json":
            collected += [d.to_json() for d in program.warnings]
        else:
            print_warnings(program.warnings)
    if fmt == "json":
        import json

        click.echo(json.dumps(collected, indent=2))
    leave_without_teardown()  # nothing to finalise: the IR just checked need not be freed
    sys.exit(inputs.exit_code(failed))
