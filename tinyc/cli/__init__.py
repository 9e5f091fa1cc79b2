"""The `tinyc` command line.

Each command lives in a module of this package and is listed in `COMMANDS`
(name -> "module:object"); a module is imported only when its command runs
(or for `tinyc --help`), so `tinyc check` never loads pygls, NumPy or dpctl.
Adding a command is one line here plus its module.

Exit codes, files and `-`, colour: see `tinyc.cli.common`. No traceback
reaches the user: bad input exits 1, usage errors 2, a bug in tinyc 3 with
a one-line message (`TINYC_TRACEBACK=1` shows the traceback).
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

import click

from tinyc import __version__
from tinyc.cli.common import (
    EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, LEAVE_WITHOUT_TEARDOWN, color_option, error,
)
from tinyc.collector import paused as collector_paused

COMMANDS: dict[str, str] = {
    "check": "tinyc.cli.check:check",
    "compile": "tinyc.cli.compile:compile_command",
    "run": "tinyc.cli.launch:run",
    "bench": "tinyc.cli.launch:bench",
    "devices": "tinyc.cli.launch:devices",
    "tune": "tinyc.cli.tune:tune",
    "fmt": "tinyc.cli.fmt:fmt",
    "lsp": "tinyc.cli.lsp:lsp",
    "einsum": "tinyc.cli.einsum:einsum",
}
"""Every subcommand: name -> "module:click command"."""

FRONT_END = frozenset({"check", "compile", "fmt"})
"""Commands that run with the garbage collector paused (tinyc/collector.py)."""

EXIT_BROKEN_PIPE = 141
"""Standard output closed early (`tinyc compile --emit ir f.ir | head`), as a shell reports it."""


class _Commands(click.Group):
    """Loads a command's module on first use; turns unexpected exceptions into exit 3."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, _, attribute = target.partition(":")
        return getattr(importlib.import_module(module), attribute)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("tinyc: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            _silence_stdout()
            sys.exit(EXIT_BROKEN_PIPE)
        except Exception as exc:  # a bug in tinyc: one line, exit 3
            if os.environ.get("TINYC_TRACEBACK"):
                traceback.print_exc()
            error(f"internal error: {type(exc).__name__}: {exc} (this is a bug in tinyc; "
                  "TINYC_TRACEBACK=1 shows where)")
            sys.exit(EXIT_INTERNAL)


def _silence_stdout() -> None:
    """After a broken pipe, keep Python's exit-time flush from raising again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="tinyc",
                      message="%(prog)s %(version)s")
@color_option
@click.pass_context
def cli(ctx: click.Context) -> None:
    """tinyc: compiler toolchain for the tiny tensor language.

    \b
    Exit codes: 0 success; 1 errors in the input (or some of several inputs
    unreadable); 2 usage errors, no input readable, or an output that cannot
    be written; 3 internal errors; 130 interrupted.
    """
    if ctx.invoked_subcommand in FRONT_END:  # until the command's context closes
        ctx.with_resource(collector_paused())


def main() -> None:
    """Console entry point.

    `tinyc check` of a large file leaves a large IR behind, and tearing the
    interpreter down (a last collection, then freeing a million objects) took
    2 s after 4 s of checking 40,000 instructions. A command that holds
    nothing to finalise says so (`common.leave_without_teardown`); the
    process then ends with os._exit once its output is flushed.
    """
    try:
        cli(prog_name="tinyc")
    except SystemExit as leaving:
        if not LEAVE_WITHOUT_TEARDOWN[0]:
            raise
        code = leaving.code
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
            code = EXIT_INPUT
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more can be said
                pass
        os._exit(EXIT_OK if code is None else code)
