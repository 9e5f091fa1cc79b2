"""Arguments of a launch moved between MPI ranks: scattered slices, gathered results.

Root describes every argument in a small `Plan` (broadcast with pickle);
the data then move as bytes through MPI's vector collectives (Scatterv,
Gatherv, Bcast), so any element type travels, and a Fortran-order array
whose batch mode is the last one is sent from and received into its own
memory, without copies:

* "slice": a memref with a batch mode, or a group given as one stacked
  array (members along the last mode): rank r gets entries [s_r, s_r + n_r)
  of that mode, packed in Fortran order;
* "members": a group given as a list of arrays of one shape and dtype:
  rank r gets members s_r .. s_r + n_r - 1 as one stacked array;
* "pickled": any other group (members of several shapes): pickled lists;
* "whole": an array without a batch mode (a shared matrix): broadcast;
* "value": scalars and anything else: sent as they are.

A rank's local array has the layout its memref asks for (static strides
kept, `?` strides packed) and, where the type fixes the batch mode's size,
that size (only the first n_r entries are used); a group of static size is
padded with its first member. Gathering is the reverse, into root's arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tinyc.ir.types import DYNAMIC, GroupType, MemrefType
from tinyc.runtime.arrays import fitter
from tinyc.runtime.groups import Group
from tinyc.signature import ParamInfo


@dataclass
class Plan:
    """How one argument travels (module docs); built by root, known to all ranks."""

    kind: str  # "slice" | "members" | "pickled" | "whole" | "value"
    value: Any = None  # "value": the value itself
    dtype: str = ""
    shape: tuple[int, ...] = ()  # "slice"/"whole": the array's shape; "members": one member's
    mode: int = 0  # "slice": the batch mode
    group: bool = False  # a group argument ("slice": given as a stacked array)
    config: tuple | None = None  # a Group's (offset, shape=, stride=), else None
    pad_to: int = 0  # static batch size of the type (0: `?`)
    written: bool = False


def _mode_index(mode: int, start: int, stop: int) -> tuple:
    return (slice(None),) * mode + (slice(start, stop),)


def _with(shape: tuple[int, ...], mode: int, size: int) -> tuple[int, ...]:
    return shape[:mode] + (size,) + shape[mode + 1:]


def local_array(memref: Any, dtype: np.dtype, shape: tuple[int, ...], packed: np.ndarray | None = None) -> np.ndarray:
    """An array of `shape` laid out as the memref asks (static strides kept, `?` ones
    packed column-major), holding `packed` (Fortran-order elements) if given."""
    strides = None
    if isinstance(memref, MemrefType) and len(shape) == memref.order:
        strides = fitter(memref).complete(tuple(shape), (None,) * len(shape)).strides
    if strides is None or np.empty(shape, dtype, order="F").strides == tuple(s * dtype.itemsize for s in strides) \
            or not all(shape):
        if packed is not None:
            return packed.reshape(shape, order="F")
        return np.zeros(shape, dtype=dtype, order="F")
    raw = np.zeros(1 + sum((n - 1) * s for n, s in zip(shape, strides)), dtype=dtype)
    array = np.lib.stride_tricks.as_strided(raw, shape, tuple(s * dtype.itemsize for s in strides), writeable=True)
    if packed is not None:
        array[...] = packed.reshape(shape, order="F")
    return array


def plan_argument(param: ParamInfo, value: Any, split: bool) -> Plan:
    """Root: how `value` of `param` travels."""
    t = param.type
    batched = split and param.batch_mode is not None
    if isinstance(t, MemrefType) and isinstance(value, np.ndarray):
        if not batched:
            return Plan("whole", dtype=value.dtype.str, shape=value.shape)
        mode = param.batch_mode
        pad = t.shape[mode] if t.shape[mode] != DYNAMIC else 0
        return Plan("slice", dtype=value.dtype.str, shape=value.shape, mode=mode, pad_to=pad, written=param.written)
    if isinstance(t, GroupType) and batched:
        arrays, config = (value.arrays, (value.offset, value.shape, value.stride)) if isinstance(value, Group) \
            else (value, None)
        pad = t.size if t.size != DYNAMIC else 0
        if isinstance(arrays, np.ndarray) and arrays.ndim >= 1:
            return Plan("slice", dtype=arrays.dtype.str, shape=arrays.shape, mode=arrays.ndim - 1, group=True,
                        config=config, pad_to=pad, written=param.written)
        if isinstance(arrays, (list, tuple)) and arrays and _uniform(arrays):
            return Plan("members", dtype=arrays[0].dtype.str, shape=arrays[0].shape, group=True, config=config,
                        pad_to=pad, written=param.written)
        if isinstance(arrays, (list, tuple)):
            return Plan("pickled", group=True, config=config, pad_to=pad, written=param.written)
    return Plan("value", value=value)


def _uniform(arrays: Sequence[Any]) -> bool:
    """NumPy members of one dtype and shape, Fortran-contiguous (as the stacked copy lays them out)."""
    first = arrays[0]
    return all(type(a) is np.ndarray and a.dtype == first.dtype and a.shape == first.shape and a.flags.f_contiguous
               for a in arrays)


def _bytes(array: np.ndarray) -> np.ndarray:
    """The Fortran-order elements of `array` as bytes (a view when it already is Fortran-contiguous)."""
    return np.asfortranarray(array).reshape(-1, order="F").view(np.uint8)


def _stacked(members: Sequence[np.ndarray]) -> np.ndarray:
    """Members side by side along a new last mode, in Fortran order (one copy)."""
    first = members[0]
    out = np.empty(first.shape + (len(members),), dtype=first.dtype, order="F")
    for g, member in enumerate(members):
        out[..., g] = member
    return out


class Mover:
    """One rank's side of moving the arguments of a launch (module docs)."""

    def __init__(self, comm: Any, root: int, starts: list[int], counts: list[int]):
        from tinyc.distributed.devices import mpi

        self.comm, self.root, self.BYTE = comm, root, mpi().BYTE
        self.rank = comm.Get_rank()
        self.starts, self.counts = starts, counts
        self.start, self.count = starts[self.rank], counts[self.rank]
        self.is_root = self.rank == root
        self._received: dict[int, np.ndarray] = {}  # argument index -> this rank's packed slice

    def _vector(self, sizes: list[int], itemsize: int) -> tuple[list[int], list[int]]:
        counts = [n * itemsize for n in sizes]
        return counts, [sum(counts[:r]) for r in range(len(counts))]

    # -- scatter ---------------------------------------------------------------------------
    def scatter(self, i: int, param: ParamInfo, plan: Plan, value: Any) -> Any:
        """This rank's argument i (root passes its own value, the others None)."""
        if plan.kind == "value":
            return plan.value
        if plan.kind == "whole":
            return self._broadcast(param, plan, value)
        arrays = (value.arrays if isinstance(value, Group) else value) if self.is_root else None
        if plan.kind == "pickled":
            parts = [list(arrays[s:s + n]) for s, n in zip(self.starts, self.counts)] if self.is_root else None
            return self._group(plan, self.comm.scatter(parts, root=self.root))
        if plan.kind == "members":
            send = None
            if self.is_root:
                parts = [_bytes(_stacked(arrays[s:s + n])) for s, n in zip(self.starts, self.counts) if n]
                send = np.concatenate(parts) if parts else np.empty(0, np.uint8)
            stacked = self._scatterv(plan, send, math.prod(plan.shape), plan.shape + (self.count,))
            self._received[i] = stacked
            return self._group(plan, [stacked[..., g] for g in range(self.count)])
        mode = plan.mode
        send = self._slices_bytes(arrays, mode) if self.is_root else None
        entry = math.prod(_with(plan.shape, mode, 1))
        packed = self._scatterv(plan, send, entry, _with(plan.shape, mode, self.count))
        if plan.group:
            self._received[i] = packed
            padded = plan.pad_to and plan.pad_to != self.count
            return self._group(plan, [packed[..., g] for g in range(self.count)] if padded else packed)
        if plan.pad_to and plan.pad_to != self.count:
            local = local_array(param.type, np.dtype(plan.dtype), _with(plan.shape, mode, plan.pad_to))
            local[_mode_index(mode, 0, self.count)] = packed
            return local
        return local_array(param.type, np.dtype(plan.dtype), packed.shape, packed)

    def _scatterv(self, plan: Plan, send: np.ndarray | None, entry: int, shape: tuple[int, ...]) -> np.ndarray:
        dtype = np.dtype(plan.dtype)
        received = np.empty(math.prod(shape), dtype=dtype)
        counts, displs = self._vector([entry * n for n in self.counts], dtype.itemsize)
        spec = [send, counts, displs, self.BYTE] if self.is_root else None
        self.comm.Scatterv(spec, [received.view(np.uint8), self.BYTE], root=self.root)
        return received.reshape(shape, order="F")

    def _slices_bytes(self, array: np.ndarray, mode: int) -> np.ndarray:
        """Root: every rank's slice, packed in Fortran order one after the other."""
        if mode == array.ndim - 1 and array.flags.f_contiguous:
            return _bytes(array)  # the slices lie one after the other already
        parts = [_bytes(array[_mode_index(mode, s, s + n)]) for s, n in zip(self.starts, self.counts) if n]
        return np.concatenate(parts) if parts else np.empty(0, np.uint8)

    def _group(self, plan: Plan, members: Any) -> Any:
        """A group argument from this rank's members (a list, or a stacked array)."""
        if isinstance(members, list) and plan.pad_to and plan.pad_to != self.count:
            members = members + members[:1] * (plan.pad_to - self.count)
        if plan.config is None:
            return Group(members) if isinstance(members, np.ndarray) else members
        from tinyc.runtime.slices import slice_per_member

        offset, shape, stride = plan.config
        pad = plan.pad_to if plan.pad_to != self.count else 0
        return Group(members, offset, slice_per_member(shape, self.start, self.count, pad),
                     slice_per_member(stride, self.start, self.count, pad))

    def _broadcast(self, param: ParamInfo, plan: Plan, value: Any) -> np.ndarray:
        if self.is_root:
            self.comm.Bcast([_bytes(value), self.BYTE], root=self.root)
            return value
        dtype = np.dtype(plan.dtype)
        received = np.empty(math.prod(plan.shape), dtype=dtype)
        self.comm.Bcast([received.view(np.uint8), self.BYTE], root=self.root)
        return local_array(param.type, dtype, plan.shape, received)

    # -- gather ------------------------------------------------------------------------------
    def gather(self, i: int, plan: Plan, local: Any, value: Any) -> None:
        """Written batched results of every rank back into root's argument i (`value`)."""
        if not plan.written or plan.kind not in ("slice", "members", "pickled"):
            return
        target = (value.arrays if isinstance(value, Group) else value) if self.is_root else None
        if plan.kind == "pickled":
            members = local.arrays if isinstance(local, Group) else local
            parts = self.comm.gather(list(members[:self.count]), root=self.root)
            if self.is_root:
                for s, part in zip(self.starts, parts):
                    for g, member in enumerate(part):
                        target[s + g][...] = member
            return
        if plan.group:  # the stacked buffer the members are views of
            mine, mode = self._received[i], len(plan.shape) if plan.kind == "members" else plan.mode
            shape = plan.shape if plan.kind == "members" else _with(plan.shape, mode, 1)
        else:
            mode = plan.mode
            mine = local[_mode_index(mode, 0, self.count)]
            shape = _with(plan.shape, mode, 1)
        dtype = np.dtype(plan.dtype)
        counts, displs = self._vector([math.prod(shape) * n for n in self.counts], dtype.itemsize)
        direct = (self.is_root and plan.kind == "slice" and mode == target.ndim - 1 and target.flags.f_contiguous
                  and target.flags.writeable)
        receive = None
        if self.is_root:
            receive = target.reshape(-1, order="F").view(np.uint8) if direct else np.empty(sum(counts), np.uint8)
        spec = [receive, counts, displs, self.BYTE] if self.is_root else None
        self.comm.Gatherv([_bytes(mine), self.BYTE], spec, root=self.root)
        if not self.is_root or direct:
            return
        for s, n, at in zip(self.starts, self.counts, displs):
            if not n:
                continue
            part = receive[at:at + math.prod(shape) * n * dtype.itemsize].view(dtype)
            if plan.kind == "members":
                block = part.reshape(plan.shape + (n,), order="F")
                for g in range(n):
                    target[s + g][...] = block[..., g]
            else:
                target[_mode_index(mode, s, s + n)] = part.reshape(_with(plan.shape, mode, n), order="F")
