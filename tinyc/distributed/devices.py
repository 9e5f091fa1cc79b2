"""Which device an MPI rank uses: `local_device(comm)`.

The ranks of one node (MPI_COMM_TYPE_SHARED) take the node's devices
round-robin by their rank in the node. With at least as many devices as
ranks, each rank gets a whole device; with more ranks than devices, the
devices are split into sub-devices first (the stacks of a GPU, so 12 ranks
on six two-stack cards get one stack each; a CPU into as many parts as it
needs). GPUs are preferred over CPUs; $TINYC_DEVICE or `filter=` narrows
the choice (e.g. "level_zero:gpu").
"""

from __future__ import annotations

import math
from typing import Any

from tinyc.diagnostics import LaunchError

_chosen: dict[tuple, Any] = {}  # (filter, local rank, local size) -> device


def mpi() -> Any:
    """mpi4py's MPI module, or an ImportError that says how to get it."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ImportError(f"tinyc.distributed needs mpi4py: pip install 'tinyc[mpi]' ({exc})") from None
    return MPI


def node_rank(comm: Any) -> tuple[int, int]:
    """(rank within the node, ranks on the node) of this process in `comm`."""
    MPI = mpi()
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    try:
        return node.Get_rank(), node.Get_size()
    finally:
        node.Free()


def local_device(comm: Any = None, filter: str | None = None) -> Any:
    """This rank's dpctl.SyclDevice (module docs). Collective over `comm`."""
    comm = comm if comm is not None else mpi().COMM_WORLD
    rank, size = node_rank(comm)
    key = (filter, rank, size)
    if key not in _chosen:
        candidates = node_devices(size, filter)
        _chosen[key] = candidates[rank % len(candidates)]
    return _chosen[key]


def node_devices(ranks: int, filter: str | None = None) -> list[Any]:
    """The devices `ranks` processes of one node share, round-robin (module docs)."""
    from tinyc.runtime.devices import devices

    roots = list(devices(filter))
    gpus = [d for d in roots if d.device_type.name == "gpu"]
    roots = gpus or roots
    if ranks <= len(roots):
        return roots
    parts = math.ceil(ranks / len(roots))
    found: list[Any] = []
    for root in roots:
        subs = list(devices(root, split=True))
        if len(subs) < parts:
            try:
                subs = list(devices(root, split=parts))
            except LaunchError:  # cannot be split that far: ranks share what there is
                pass
        found += subs
    return found
