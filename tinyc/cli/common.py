"""What every `tinyc` command shares: exit codes, files and `-`, colour, error output.

Exit codes (README lists them):
  0  success
  1  errors in the input (diagnostics), or some of several inputs unreadable
  2  usage errors: bad options, no input could be read, an output that
     cannot be written
  3  internal errors (a bug in tinyc)
  130 interrupted (Ctrl-C)

Several inputs: every unreadable one is reported on one line and the others
are still processed; the exit code is 2 if none could be read, else 1 if any
was unreadable or had errors, else 0.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO, Iterator

import click

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

STDIN_NAME = "<stdin>"
"""The file name diagnostics show for source read from standard input."""


class FileProblem(Exception):
    """A file that cannot be read or written; the message is one line naming it."""


def error(message: str) -> None:
    """`tinyc: error: message` on standard error, coloured like diagnostics."""
    color = want_color(sys.stderr)
    label = click.style("error:", fg="red", bold=True) if color else "error:"
    click.echo(f"tinyc: {label} {message}", err=True, color=color)


def decode_source(data: bytes) -> str:
    """Source bytes as text: UTF-8, with any invalid byte replaced by U+FFFD.

    A stray byte inside a comment then costs nothing, and one elsewhere is
    reported by the lexer at its line and column ("unexpected character").
    """
    return data.decode("utf-8", errors="replace")


def read_source(path: str) -> str:
    """The text of `path` ('-': standard input); FileProblem if it cannot be read."""
    try:
        if path == "-":
            return decode_source(sys.stdin.buffer.read())
        return decode_source(Path(path).read_bytes())
    except OSError as exc:
        raise FileProblem(f"cannot read '{path}': {_reason(exc)}") from None


def display_name(path: str) -> str:
    """How diagnostics name an input."""
    return STDIN_NAME if path == "-" else path


def write_output(path: str, data: str | bytes) -> None:
    """Write `data` to `path` ('-': standard output); FileProblem if it cannot be written."""
    if path == "-":
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            click.echo(data, nl=False)
        return
    try:
        if isinstance(data, bytes):
            Path(path).write_bytes(data)
        else:
            Path(path).write_text(data, encoding="utf-8")
    except OSError as exc:
        raise FileProblem(f"cannot write '{path}': {_reason(exc)}") from None


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


class Inputs:
    """The source files of one command, read in order; unreadable ones are reported.

        inputs = Inputs(paths)
        for path, text in inputs: ...
        sys.exit(inputs.exit_code(failed))
    """

    def __init__(self, paths: tuple[str, ...] | list[str]):
        self.paths = list(paths)
        self.read = 0
        self.unreadable = 0

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for path in self.paths:
            try:
                text = read_source(path)
            except FileProblem as problem:
                error(str(problem))
                self.unreadable += 1
                continue
            self.read += 1
            yield path, text

    def exit_code(self, failed: bool) -> int:
        """2 if nothing could be read; 1 if anything was unreadable or `failed`; else 0."""
        if self.unreadable and not self.read:
            return EXIT_USAGE
        return EXIT_INPUT if failed or self.unreadable else EXIT_OK


LEAVE_WITHOUT_TEARDOWN = [False]
"""Set by a command that holds nothing to finalise (no device, no MPI, no file being written):
the console entry point may then end the process without the interpreter's teardown (`main`)."""


def leave_without_teardown() -> None:
    """Let the console entry point skip the teardown when this command ends (see `main`)."""
    LEAVE_WITHOUT_TEARDOWN[0] = True


def read_one(path: str) -> str:
    """The source of a command that takes one file: exit 2 with one line if unreadable."""
    try:
        return read_source(path)
    except FileProblem as problem:
        error(str(problem))
        sys.exit(EXIT_USAGE)


# ---------------------------------------------------------------- colour

COLOR_CHOICES = ("auto", "always", "never")
_COLOR_KEY = "tinyc.color"


def _remember_color(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        ctx.meta[_COLOR_KEY] = value
    return value


def color_option(command):
    """`--color auto|always|never` (default auto: on a terminal, unless NO_COLOR is set)."""
    return click.option("--color", type=click.Choice(COLOR_CHOICES), default=None,
                        expose_value=False, is_eager=True, callback=_remember_color,
                        help="Colour diagnostics: auto (default; a terminal without "
                             "NO_COLOR), always or never.")(command)


def want_color(stream: IO | None = None) -> bool:
    """Whether to colour output to `stream` under the current `--color` choice."""
    ctx = click.get_current_context(silent=True)
    choice = ctx.meta.get(_COLOR_KEY, "auto") if ctx is not None else "auto"
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    stream = stream if stream is not None else sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def print_diagnostics(err) -> None:
    """A CompilationError's diagnostics on standard error, coloured if wanted."""
    color = want_color(sys.stderr)
    click.echo(err.render(color), err=True, color=color)


def language_options(command):
    """--std and -D: the options of every command that reads a program (docs/newest.md)."""
    command = click.option("-D", "--define", "defines", multiple=True, metavar="NAME=VALUE",
                           callback=_parse_defines,
                           help="Preprocessor definition $NAME = VALUE (newest language), "
                                "e.g. -D ty=f64; repeatable.")(command)
    return click.option("--std", type=click.Choice(["seed", "newest"]), default=None,
                        help="Language version (default: as the file declares with '; std: "
                             "...', else inferred from its spellings).")(command)


def _parse_defines(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
                   ) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.lstrip("$") or not value.strip():
            raise click.BadParameter(f"expected NAME=VALUE, got '{item}'")
        found[name] = value
    return found


# ---------------------------------------------------------------- warnings

_WARNINGS_KEY = "tinyc.warnings"


def _remember_warnings(ctx: click.Context, param: click.Parameter, value):
    if param.name == "warning_flags":
        ctx.meta.setdefault(_WARNINGS_KEY, [[], False])[0] = list(value or ())
    elif value:
        ctx.meta.setdefault(_WARNINGS_KEY, [[], False])[1] = True
    return value


def warning_options(command):
    """`-W error|no-error|NAME|no-NAME` (repeatable) and `-w` (docs/warnings.md)."""
    command = click.option("-w", "no_warnings", is_flag=True, expose_value=False,
                           callback=_remember_warnings,
                           help="Do not report warnings.")(command)
    return click.option("-W", "warning_flags", multiple=True, expose_value=False,
                        metavar="error|NAME|no-NAME", callback=_remember_warnings,
                        help="Warnings: '-W error' makes them errors (exit 1), '-W no-NAME' "
                             "turns one off (its name is printed as [-WNAME]); "
                             "repeatable.")(command)


def warning_policy():
    """The tinyc.lint.WarningOptions of the running command (usage error for a bad -W)."""
    from tinyc.lint import UnknownWarning, WarningOptions

    ctx = click.get_current_context(silent=True)
    flags, silence = ctx.meta.get(_WARNINGS_KEY, [[], False]) if ctx is not None else ([], False)
    try:
        return WarningOptions.parse(flags, silence)
    except UnknownWarning as err:
        raise click.UsageError(str(err)) from None


def print_warnings(diagnostics) -> None:
    """Warnings (Diagnostics) on standard error, as errors are printed."""
    if not diagnostics:
        return
    color = want_color(sys.stderr)
    click.echo("\n".join(d.render(color) for d in diagnostics), err=True, color=color)


def compile_reporting(source, policy=None, report: bool = True, **options):
    """`tinyc.compile` for a command: its warnings printed as diagnostics (not as Python
    warnings; only if `report`: one MPI rank reports), under `policy` (the command's -W/-w,
    `warning_policy()`, taken in the command's own thread: launches run in another)."""
    import warnings

    import tinyc
    from tinyc.compiler import CompilationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompilationWarning)
        program = tinyc.compile(source, warnings=policy, **options)
    if report:
        print_warnings(program.warnings)
    return program
