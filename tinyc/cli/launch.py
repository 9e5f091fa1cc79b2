"""`tinyc run`, `tinyc bench` and `tinyc devices`: the commands that use a device.

Their bodies (tinyc/cli/run.py, bench.py) import NumPy and the runtime, so
they load only when one of these commands runs.
"""

from __future__ import annotations

import sys

import click

from tinyc.cli.common import (
    EXIT_INPUT, color_option, display_name, fp_contract_option, language_options, print_diagnostics,
    read_one, warning_options, warning_policy,
)
from tinyc.diagnostics import CompilationError, LaunchError


def _launch_options(default_batch: int, default_repeat: int):
    """The options `run` and `bench` share: what to launch, how often, on what. Without
    --batch, `default_batch`, or the largest batch the kernel takes with its arguments
    if that is smaller (tinyc/harness/batches.py)."""

    def decorate(command):
        options = [
            click.argument("file", type=click.Path(dir_okay=False, allow_dash=True)),
            click.option("--kernel", "kernel_name", default=None,
                         help="Kernel to launch (default: the first)."),
            click.option("--batch", type=click.IntRange(min=1), default=None,
                         help=f"Number of work-groups (default: {default_batch}, or the largest "
                              f"batch the kernel takes with its arguments if smaller)."),
            click.option("--size", "sizes", multiple=True, metavar="NAME=VALUE",
                         help="Value of a scalar argument, or the shape of a memref/group "
                              "argument (e.g. A=32x32x?); repeatable."),
            click.option("--repeat", type=click.IntRange(min=1), default=default_repeat,
                         show_default=True, help="Timed launches."),
            click.option("--seed", type=int, default=0, show_default=True,
                         help="Seed of the random inputs."),
            click.option("--device", default=None, help="SYCL filter string, e.g. opencl:cpu:0."),
            fp_contract_option,
            color_option,
            language_options,
            warning_options,
        ]
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _launching(action) -> None:
    """Run a launch command; user errors exit 1, bad options exit 2, Ctrl-C 130 at once."""
    from tinyc.cli.errors import UsageError
    from tinyc.cli.interrupt import interruptible

    try:
        interruptible(action)
    except CompilationError as err:
        print_diagnostics(err)
        sys.exit(EXIT_INPUT)
    except LaunchError as err:
        click.echo(str(err), err=True)
        sys.exit(EXIT_INPUT)
    except UsageError as err:
        raise click.UsageError(str(err)) from None


@click.command()
@_launch_options(default_batch=1, default_repeat=10)
@click.option("--check", "do_check", is_flag=True,
              help="Compare the results with tinyc's NumPy reference interpreter.")
@click.option("--check-bounds", "check_bounds", is_flag=True, default=None,
              help="Run the bounds-checked variant: an access outside its memref is an error "
                   "(also TINYC_CHECK_BOUNDS=1).")
def run(file: str, kernel_name: str | None, batch: int | None, sizes: tuple[str, ...], do_check: bool,
        repeat: int, seed: int, device: str | None, std: str | None,
        defines: dict[str, str], check_bounds: bool | None, fp_contract: bool) -> None:
    """Run a kernel of FILE on random inputs and time it (wall clock, after one warm-up)."""
    from tinyc.cli.run import run_kernel

    text = read_one(file)
    policy = warning_policy()
    _launching(lambda: run_kernel(text, display_name(file), kernel_name, batch, sizes, do_check,
                                  repeat, seed, device, echo=click.echo, std=std,
                                  defines=defines, check_bounds=check_bounds or None,
                                  policy=policy, fp_contract=fp_contract))


@click.command()
@_launch_options(default_batch=10000, default_repeat=20)
@click.option("--warmup", type=click.IntRange(min=0), default=3, show_default=True,
              help="Untimed launches first.")
def bench(file: str, kernel_name: str | None, batch: int | None, sizes: tuple[str, ...], repeat: int,
          warmup: int, seed: int, device: str | None, std: str | None,
          defines: dict[str, str], fp_contract: bool) -> None:
    """Time a kernel of FILE: median device time, GFLOP/s, GB/s, and both roofline ceilings."""
    from tinyc.cli.bench import bench_kernel

    text = read_one(file)
    policy = warning_policy()
    _launching(lambda: bench_kernel(text, display_name(file), kernel_name, batch, sizes, repeat,
                                    warmup, seed, device, echo=click.echo, std=std,
                                    policy=policy, fp_contract=fp_contract))


@click.command()
def devices() -> None:
    """List the SYCL devices and whether tinyc can use them."""
    from tinyc.runtime.device import list_devices

    found = list_devices()
    if not found:
        click.echo("no SYCL devices found", err=True)
        sys.exit(EXIT_INPUT)
    for d in found:
        click.echo(str(d))
