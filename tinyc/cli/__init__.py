"""The `tinyc` command line: check, compile, run, bench, devices.

Bad input ends with diagnostics and exit code 1, usage errors with 2; no
traceback reaches the user for either. `check` and `compile` never import
dpctl, so they start fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tinyc.diagnostics import CompilationError, LaunchError


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise click.UsageError(f"cannot read {path}: {exc}") from None


def _fail(err: Exception) -> None:
    click.echo(str(err), err=True)
    sys.exit(1)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tinyc")
def cli() -> None:
    """tinyc: compiler toolchain for the tiny tensor language."""


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              help="Diagnostics as text (default) or as a JSON list for editors.")
def check(files: tuple[str, ...], fmt: str) -> None:
    """Check FILES for syntax, type and region errors."""
    from tinyc.compiler import check_source

    failed = False
    collected: list[dict] = []
    for path in files:
        try:
            check_source(_read(path), path)
        except CompilationError as err:
            failed = True
            if fmt == "json":
                collected += [d.to_json() for d in err.diagnostics]
            else:
                click.echo(str(err), err=True)
    if fmt == "json":
        import json

        click.echo(json.dumps(collected, indent=2))
    sys.exit(1 if failed else 0)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Output file (default: FILE with .spv, or .spvasm with -S; '-' for stdout).")
@click.option("-S", "assembly", is_flag=True, help="Write SPIR-V assembly text (spirv-dis).")
@click.option("--emit", type=click.Choice(["ir", "lowered", "spirv"]), default="spirv",
              help="ir: the checked IR; lowered: IR after all passes; spirv: the module.")
@click.option("--subgroup-size", type=int, default=None, help="Force a subgroup size.")
@click.option("--time", "show_time", is_flag=True, help="Print the time of each stage.")
@click.option("--print-after", "print_after", multiple=True, metavar="PASS|all",
              help="Print the IR to stderr after the pass (repeatable), or after every pass.")
def compile(file: str, output: str | None, assembly: bool, emit: str, subgroup_size: int | None,
            show_time: bool, print_after: tuple[str, ...]) -> None:
    """Compile FILE to SPIR-V (or print its IR with --emit)."""
    from tinyc.compiler import InternalCompilerError, compile_to_spirv
    from tinyc.spirv.tools import SpirvToolError, disassemble

    try:
        result = compile_to_spirv(_read(file), file, subgroup_size=subgroup_size,
                                  print_after=_ir_printer(print_after))
    except CompilationError as err:
        _fail(err)
    except ValueError as err:  # an option the device cannot honour
        raise click.UsageError(str(err)) from None
    except (SpirvToolError, InternalCompilerError) as err:  # tinyc's bug, not the input's
        click.echo(f"internal compiler error: {err}", err=True)
        sys.exit(3)
    for warning in result.warnings:
        click.echo(str(warning), err=True)
    if emit == "ir":
        data: str | bytes = result.stages["checked"]
    elif emit == "lowered":
        data = result.stages["lowered"]
    elif assembly:
        data = disassemble(result.spirv)
    else:
        data = result.spirv
    if output is None and isinstance(data, str):
        output = "-" if emit != "spirv" else str(Path(file).with_suffix(".spvasm"))
    elif output is None:
        output = str(Path(file).with_suffix(".spv"))
    if output == "-":
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
        else:
            click.echo(data, nl=False)
    else:
        Path(output).write_bytes(data if isinstance(data, bytes) else data.encode())
    if show_time:
        _print_times(result.timings)


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


def _launch_options(default_batch: int, default_repeat: int):
    """The options `run` and `bench` share: what to launch, how often, on what."""

    def decorate(command):
        options = [
            click.argument("file", type=click.Path(dir_okay=False)),
            click.option("--kernel", "kernel_name", default=None,
                         help="Kernel to launch (default: the first)."),
            click.option("--batch", type=click.IntRange(min=1), default=default_batch,
                         show_default=True, help="Number of work-groups."),
            click.option("--size", "sizes", multiple=True, metavar="NAME=VALUE",
                         help="Value of a scalar argument, or the shape of a memref/group "
                              "argument (e.g. A=32x32x?); repeatable."),
            click.option("--repeat", type=click.IntRange(min=1), default=default_repeat,
                         show_default=True, help="Timed launches."),
            click.option("--seed", type=int, default=0, show_default=True,
                         help="Seed of the random inputs."),
            click.option("--device", default=None, help="SYCL filter string, e.g. opencl:cpu:0."),
        ]
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _launching(action) -> None:
    """Run a launch command; user errors exit 1, bad options exit 2, Ctrl-C 130."""
    from tinyc.cli.errors import UsageError
    from tinyc.cli.interrupt import interruptible

    try:
        interruptible(action)
    except (CompilationError, LaunchError) as err:
        _fail(err)
    except UsageError as err:
        raise click.UsageError(str(err)) from None


@cli.command()
@_launch_options(default_batch=1, default_repeat=10)
@click.option("--check", "do_check", is_flag=True,
              help="Compare the results with tinyc's NumPy reference interpreter.")
@click.option("--check-bounds", "check_bounds", is_flag=True, default=None,
              help="Run the bounds-checked variant: an access outside its memref is an error "
                   "(also TINYC_CHECK_BOUNDS=1).")
def run(file: str, kernel_name: str | None, batch: int, sizes: tuple[str, ...], do_check: bool,
        repeat: int, seed: int, device: str | None, check_bounds: bool | None) -> None:
    """Run a kernel of FILE on random inputs and time it (wall clock, after one warm-up)."""
    from tinyc.cli.run import run_kernel

    _launching(lambda: run_kernel(_read(file), file, kernel_name, batch, sizes, do_check, repeat,
                                  seed, device, echo=click.echo, check_bounds=check_bounds or None))


@cli.command()
@_launch_options(default_batch=10000, default_repeat=20)
@click.option("--warmup", type=click.IntRange(min=0), default=3, show_default=True,
              help="Untimed launches first.")
def bench(file: str, kernel_name: str | None, batch: int, sizes: tuple[str, ...], repeat: int,
          warmup: int, seed: int, device: str | None) -> None:
    """Time a kernel of FILE: median device time, GFLOP/s, GB/s, share of bandwidth."""
    from tinyc.cli.bench import bench_kernel

    _launching(lambda: bench_kernel(_read(file), file, kernel_name, batch, sizes, repeat, warmup,
                                    seed, device, echo=click.echo))


@cli.command()
def devices() -> None:
    """List the SYCL devices and whether tinyc can use them."""
    from tinyc.runtime.device import list_devices

    found = list_devices()
    if not found:
        click.echo("no SYCL devices found", err=True)
        sys.exit(1)
    for d in found:
        click.echo(str(d))


def main() -> None:
    """Console entry point."""
    cli(prog_name="tinyc")

