"""`tinyc compile FILE...`: SPIR-V binaries, assembly or IR, one output per input."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tinyc.cli.common import (
    EXIT_INTERNAL, EXIT_USAGE, FileProblem, Inputs, color_option, display_name, error,
    language_options, print_diagnostics, print_warnings, warning_options, warning_policy,
    write_output,
)
from tinyc.diagnostics import CompilationError


@click.command("compile")
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("-o", "--output", type=click.Path(allow_dash=True),
              help="Output file ('-': standard output). With several inputs: a directory or "
                   "'-'. Default: each FILE with .spv (.spvasm with -S), or standard output "
                   "for --emit ir/lowered and for standard input.")
@click.option("-S", "assembly", is_flag=True, help="Write SPIR-V assembly text (spirv-dis).")
@click.option("--emit", type=click.Choice(["ir", "lowered", "spirv"]), default="spirv",
              help="ir: the checked IR; lowered: IR after all passes; spirv: the module.")
@click.option("--subgroup-size", type=int, default=None, help="Force a subgroup size.")
@click.option("--schedule", "schedule_file", type=click.Path(dir_okay=False), default=None,
              help="JSON file of schedule knobs by kernel and instruction (docs/schedules.md).")
@click.option("--time", "show_time", is_flag=True, help="Print the time of each stage.")
@click.option("--print-after", "print_after", multiple=True, metavar="PASS|all",
              help="Print the IR to stderr after the pass (repeatable), or after every pass.")
@language_options
@warning_options
@color_option
def compile_command(files: tuple[str, ...], output: str | None, assembly: bool, emit: str,
                    subgroup_size: int | None, schedule_file: str | None, show_time: bool,
                    print_after: tuple[str, ...], std: str | None, defines: dict[str, str]) -> None:
    """Compile FILES ('-': standard input) to SPIR-V, or print their IR with --emit.

    `--emit ir --std newest` prints a seed program in the newest spelling
    (and `--std seed` the reverse, with a diagnostic for what the seed
    language cannot spell); the output then declares its version.
    """
    from tinyc.compiler import InternalCompilerError, check_source, compile_to_spirv
    from tinyc.ir.printer import print_program
    from tinyc.spirv.tools import SpirvToolError, disassemble

    from tinyc.compiler import check_subgroup_size

    try:
        check_subgroup_size(subgroup_size)  # a size the device cannot run is a usage error
    except ValueError as err:
        raise click.UsageError(str(err)) from None
    policy = warning_policy()
    directory = _output_directory(files, output)
    printer = _ir_printer(print_after)
    failed = unwritable = False
    inputs = Inputs(files)
    for path, text in inputs:
        try:
            warnings: list = []
            if emit == "ir":  # the checked IR, spelled in the program's (or the given) version
                program = check_source(text, display_name(path), std=std, defines=defines,
                                       warnings=policy)
                ir_text = print_program(program, declare=std is not None)
                warnings = program.warnings
            else:
                result = compile_to_spirv(text, display_name(path), subgroup_size=subgroup_size,
                                          print_after=printer, schedule=schedule_file, std=std,
                                          defines=defines, warnings=policy)
                warnings = result.warnings
        except CompilationError as err:
            print_diagnostics(err)
            failed = True
            continue
        except (SpirvToolError, InternalCompilerError) as err:  # tinyc's bug, not the input's
            error(f"internal compiler error: {err}")
            sys.exit(EXIT_INTERNAL)
        print_warnings(warnings)  # the checker's, and the passes' (an attribute that
        # overrides --subgroup-size)
        if emit == "ir":
            data: str | bytes = ir_text
        elif emit == "lowered":
            data = result.stages["lowered"]
        elif assembly:
            data = disassemble(result.spirv)
        else:
            data = result.spirv
        target = _target(path, output, directory, emit, assembly)
        if target == "-" and isinstance(data, bytes) and sys.stdout.isatty():
            error("not writing a SPIR-V binary to a terminal; use -o FILE or -S")
            sys.exit(EXIT_USAGE)
        try:
            write_output(target, data)
        except FileProblem as problem:
            error(str(problem))
            unwritable = True
        if show_time and emit != "ir":
            _print_times(result.timings)
    sys.exit(EXIT_USAGE if unwritable else inputs.exit_code(failed))


def _output_directory(files: tuple[str, ...], output: str | None) -> Path | None:
    """The directory that -o names for several inputs; usage error for a plain file."""
    if output is None or output == "-" or len(files) == 1:
        return None
    if Path(output).is_dir():
        return Path(output)
    raise click.UsageError(f"-o {output}: with {len(files)} inputs, -o must be an existing "
                           "directory or '-'")


_SUFFIXES = {"ir": ".checked.ir", "lowered": ".lowered.ir"}


def _target(path: str, output: str | None, directory: Path | None, emit: str,
            assembly: bool) -> str:
    """Where the output of input `path` goes."""
    suffix = _SUFFIXES.get(emit) or (".spvasm" if assembly else ".spv")
    if directory is not None:
        name = "stdin" if path == "-" else Path(path).name
        return str(directory / Path(name).with_suffix(suffix))
    if output is not None:
        return output
    if path == "-" or emit in _SUFFIXES:
        return "-"
    return str(Path(path).with_suffix(suffix))


def _ir_printer(passes: tuple[str, ...]):
    """`print_after` for compile_to_spirv: the IR after the chosen passes, to stderr."""
    if not passes:
        return None
    from tinyc.ir.printer import print_program
    from tinyc.passes import PIPELINE

    names = [name for name, _ in PIPELINE]
    for name in passes:
        if name not in names and name != "all":
            raise click.BadParameter(f"no pass '{name}'; passes: {', '.join(names)}, or all",
                                     param_hint="'--print-after'")

    def show(name: str, program) -> None:
        if name in passes or "all" in passes:
            click.echo(f"; IR after {name}\n{print_program(program)}", err=True)

    return show


def _print_times(timings: dict[str, float]) -> None:
    """Each stage, source -> SPIR-V (every stage before spirv-val), spirv-val and the total."""
    rows = [(stage, t) for stage, t in timings.items() if stage != "spirv-val"]
    rows.append(("source → SPIR-V", sum(t for _, t in rows)))
    if "spirv-val" in timings:
        rows.append(("spirv-val", timings["spirv-val"]))
    rows.append(("total", sum(timings.values())))
    for stage, seconds in rows:
        click.echo(f"{stage:>15}: {seconds * 1e3:8.2f} ms", err=True)
