"""`tinyc run` under `mpiexec -n P`: the batch split over the ranks.

Every rank compiles the file for its own device (`local_device`); root makes
the random inputs, `tinyc.distributed.run` scatters them, launches every
slice and gathers the results. Root prints each rank's part and time and
the total per launch (scatter, launches and gather, wall clock); with
`--check` it compares the gathered results with the NumPy reference.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Sequence

import numpy as np

# Launchers export the size of the job; a plain `tinyc run` sees none of these.
SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE", "MPI_LOCALNRANKS")


def launched_by_mpi() -> bool:
    """Is this process one of several ranks started by mpiexec/srun?"""
    for name in SIZE_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 1:
            return True
    return False


def run_kernel_mpi(source: str, file: str, kernel_name: str | None, batch: int, sizes: Sequence[str],
                   check: bool, repeat: int, seed: int, device: str | None,
                   echo: Callable[[str], None] = print, std: str | None = None,
                   defines: dict[str, str] | None = None, policy: Any = None) -> None:
    """`tinyc run` over the ranks of MPI_COMM_WORLD (module docs); `policy`: -W/-w."""
    from tinyc.cli.common import compile_reporting
    from tinyc.cli.errors import UsageError
    from tinyc.harness.arguments import make_arguments, parse_sizes
    from tinyc.harness.batches import refuse_repeated_work
    from tinyc.harness.check import check_results
    from tinyc.reference.arguments import copy_argument
    from tinyc.distributed import local_device, run
    from tinyc.distributed.devices import mpi

    comm = mpi().COMM_WORLD
    rank, root = comm.Get_rank(), 0
    target = local_device(comm, filter=device)
    program = compile_reporting(source, policy, rank == root, name=file, device=target, std=std,
                                defines=defines)
    names = program.kernel_names
    name = kernel_name or names[0]
    if name not in names:
        raise UsageError(f"no kernel '{name}' in {file}; kernels: {', '.join(names)}")
    kernel = program[name]
    info = kernel.info
    refuse_repeated_work(kernel, batch)
    inputs = make_arguments(program.checked_ir()[name], info, batch, parse_sizes(sizes), seed)[0] \
        if rank == root else [None] * len(info.params)

    def once(args: list[Any]) -> Any:
        return run(kernel, *args, batch=batch, comm=comm, root=root)

    once([copy_argument(a) for a in inputs])  # warm-up: builds, first transfers
    totals, per_rank = [], []
    for _ in range(repeat):
        args = [copy_argument(a) for a in inputs]
        comm.Barrier()
        start = time.perf_counter()
        result = once(args)
        totals.append(time.perf_counter() - start)
        per_rank.append(result.ranks)
    if rank != root:
        return
    for r, parts in enumerate(zip(*per_rank)):
        label, first, count, _ = parts[0]
        median = float(np.median([seconds for *_, seconds in parts]))
        groups = f"work-groups {first}..{first + count - 1} ({count})" if count else "no work-groups"
        echo(f"rank {r} on {label}: {groups}, {median * 1e3:.3f} ms per launch")
    echo(f"{name}: batch {batch} over {comm.Get_size()} ranks, {float(np.median(totals)) * 1e3:.3f} ms per launch "
         f"(median of {repeat}, wall clock: scatter from rank {root}, launches, gather)")
    if check:
        check_results(program, name, inputs, args, batch, seed, echo)
