"""Batches over MPI ranks and nodes: `tinyc.distributed` (extra `tinyc[mpi]`).

    comm = MPI.COMM_WORLD
    k = tinyc.compile(src, device=tinyc.distributed.local_device(comm))["kernel"]
    tinyc.distributed.run(k, *args, batch=N, comm=comm, root=0)

`local_device(comm)` gives each rank a device of its node, round-robin by
its rank within the node; `run` scatters the batched arguments from `root`
along their batch mode, launches every rank's slice on its device and
gathers the written batched arguments back into root's arrays
(`scatter=False`: every rank launches on data it already holds). MPI comes
from mpi4py (with the `mpich` wheel from PyPI in the extra); tinyc only
uses its collectives, it schedules nothing itself. docs/scaling.md.
"""

from __future__ import annotations

from tinyc.distributed.devices import local_device
from tinyc.distributed.launch import RunInfo, run

__all__ = ["RunInfo", "local_device", "run"]
