"""`tinyc run`: random inputs of the right types, a timed launch, an optional check.

The sizes, the random arguments, the batch and the check come from tinyc/harness/
(sizes.py, arguments.py, batches.py, check.py): `tinyc bench` and the tuner make
theirs the same way. The chosen sizes and scalar values are printed.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.diagnostics import UsageError
from tinyc.harness.arguments import describe_arguments, device_array_limit, make_arguments, parse_sizes
from tinyc.harness.batches import fitting
from tinyc.harness.check import check_results
from tinyc.reference.arguments import copy_argument

RUN_BATCH = 1
"""`tinyc run`'s batch when --batch is not given (lowered to what the kernel takes: batches.py)."""


def run_kernel(source: str, file: str, kernel_name: str | None, batch: int | None, sizes: Sequence[str],
               check: bool, repeat: int, seed: int, device: str | None,
               echo: Callable[[str], None] = print, std: str | None = None,
               defines: dict[str, str] | None = None, check_bounds: bool | None = None,
               policy: Any = None, fp_contract: bool = False) -> None:
    """Compile, launch on random inputs, time, and optionally check (`policy`: -W/-w)."""
    from tinyc.cli.common import compile_reporting
    from tinyc.cli.mpi_run import launched_by_mpi, run_kernel_mpi

    if launched_by_mpi():  # under mpiexec: the batch split over the ranks
        return run_kernel_mpi(source, file, kernel_name, batch if batch is not None else RUN_BATCH, sizes,
                              check, repeat, seed, device, echo, std=std, defines=defines, policy=policy)

    program = compile_reporting(source, policy, name=file, device=device, std=std, defines=defines,
                                fp_contract=fp_contract)
    names = program.kernel_names
    name = kernel_name or names[0]
    if name not in names:
        raise UsageError(f"no kernel '{name}' in {file}; kernels: {', '.join(names)}")
    start = time.perf_counter()
    kernel = program[name]  # builds the program on the device (the runtime's JIT)
    build = time.perf_counter() - start
    info = kernel.info
    fn = program.checked_ir()[name]
    parsed, limit = parse_sizes(sizes), device_array_limit(kernel)
    (args, _), batch = fitting(kernel, lambda b: make_arguments(fn, info, b, parsed, seed, limit), batch,
                               RUN_BATCH)
    echo(describe_arguments(info, args))
    inputs = [copy_argument(a) for a in args]
    options = {} if check_bounds is None else {"check_bounds": check_bounds}
    # --check: the warm-up is bounds-checked, so that sizes that make the kernel reach outside
    # its arrays are reported instead of crashing the device; the timed launches repeat it
    warm = {"check_bounds": True} if check and check_bounds is None else options

    start = time.perf_counter()
    kernel(*args, batch=batch, **warm)  # warm-up
    first = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        run_args = [copy_argument(a) for a in inputs]
        start = time.perf_counter()
        kernel(*run_args, batch=batch, **options)
        times.append(time.perf_counter() - start)
    median = float(np.median(times))
    echo(f"{name}: batch {batch}, {median * 1e3:.3f} ms per launch "
         f"(median of {repeat}, wall clock incl. argument transfer; JIT build "
         f"{build * 1e3:.1f} ms, first launch {first * 1e3:.1f} ms)")
    if check:
        check_results(program, name, inputs, args, batch, seed, echo)
