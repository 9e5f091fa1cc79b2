"""Several devices for one launch: `tinyc.devices(...)` and `tinyc.Devices(...)`.

`k(..., batch=N, device=[d0, d1])` splits the batch over the devices of a
`Devices` (a list of devices is turned into one): contiguous slices in
proportion to each device's weight, its compute units unless `weights=`
says otherwise (sharding.py).

Sub-devices: `tinyc.devices("opencl:cpu", split=True)` partitions each
device the way its driver offers (the stacks of a GPU, NUMA domains) and,
when the driver has no such partition, into two halves of its compute units
(`split=k`: k equal parts). The sub-devices of one device share one SYCL
context: USM memory made on one of them is usable on its siblings, and
partitioning again would make new, different devices, so the parts are
made once per process and reused.
"""

from __future__ import annotations

import math
import numbers
import os
import threading
from typing import Any, Iterator, Sequence

from tinyc.diagnostics import LaunchError
from tinyc.runtime.device import (
    DEVICE_VARIABLE, accepts_spirv, device_label, import_dpctl, queue_for_device, register_queue, select_queue,
)

_lock = threading.Lock()
_parts: dict[tuple[int, Any], tuple[Any, ...]] = {}  # (id of the root queue, parts or None) -> sub-devices
_registered: set[Any] = set()  # sub-devices whose shared-context queues exist
AFFINITY = ("next_partitionable", "numa")  # the driver's own partitions, tried in this order


class Devices(Sequence):
    """Devices that one launch splits its batch over, each with a weight.

    `Devices(d0, d1)` or `Devices([d0, d1], weights=[3, 1])`; an entry is a
    dpctl.SyclDevice, a dpctl.SyclQueue (launches go to that queue) or a
    filter string. Indexing gives the dpctl.SyclDevice. The default weight
    of a device is its number of compute units. `Devices(filter, split=...)`
    is `tinyc.devices(filter, split=...)`.
    """

    def __init__(self, *devices: Any, weights: Sequence[float] | None = None, split: bool | int | None = None):
        if split is not None:  # Devices("opencl:cpu", split=True): as tinyc.devices(...)
            devices = (_found(devices[0] if devices else None, split),)
        if len(devices) == 1 and isinstance(devices[0], (Devices, list, tuple)):
            given = devices[0]
            if isinstance(given, Devices):
                self._queues = given._queues
                self._weights = given._weights if weights is None else check_weights(weights, len(given))
                return
            devices = tuple(given)
        if not devices:
            raise LaunchError("a device list must name at least one device", argument="device")
        self._queues = tuple(select_queue(d) for d in devices)
        if weights is None:
            self._weights = tuple(float(q.sycl_device.max_compute_units or 1) for q in self._queues)
        else:
            self._weights = check_weights(weights, len(self._queues))

    @property
    def queues(self) -> tuple[Any, ...]:
        """The in-order queue each slice is submitted to."""
        return self._queues

    @property
    def weights(self) -> tuple[float, ...]:
        return self._weights

    @property
    def labels(self) -> tuple[str, ...]:
        """Short names: filter strings, `opencl:cpu:0/1` for sub-device 1."""
        return tuple(device_label(q.sycl_device) for q in self._queues)

    def __len__(self) -> int:
        return len(self._queues)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return Devices(list(self._queues[i]), weights=self._weights[i])
        return self._queues[i].sycl_device

    def __iter__(self) -> Iterator[Any]:
        return (q.sycl_device for q in self._queues)

    def __repr__(self) -> str:
        parts = ", ".join(f"{label} (weight {w:g})" for label, w in zip(self.labels, self._weights))
        return f"Devices({parts})"


def check_weights(weights: Any, count: int) -> tuple[float, ...]:
    try:
        values = [w for w in weights]
    except TypeError:
        raise LaunchError(f"weights must be a list of {count} numbers, got {weights!r}", argument="weights") from None
    if len(values) != count:
        raise LaunchError(f"weights has {len(values)} entries for {count} devices", argument="weights")
    checked = []
    for w in values:
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not math.isfinite(w) or w < 0:
            raise LaunchError(f"weights must be finite numbers >= 0, got {w!r}", argument="weights")
        checked.append(float(w))
    if not sum(checked) > 0:
        raise LaunchError("weights must not all be 0", argument="weights")
    return tuple(checked)


def as_devices(device: Any, weights: Sequence[float] | None = None) -> Devices:
    """What a launch's `device=` (and `weights=`) name, as a Devices."""
    if isinstance(device, Devices):
        return device if weights is None else Devices(device, weights=weights)
    if isinstance(device, (list, tuple)):
        return Devices(list(device), weights=weights)
    return Devices([device], weights=weights)


def is_split(device: Any) -> bool:
    """Does `device=` name several devices (a list, a tuple, a Devices), so that a launch
    splits its batch over them?"""
    return isinstance(device, (list, tuple, Devices))


def compile_target(device: Any) -> Any:
    """What to compile for when `device=` may name several devices: the first of them
    (they run one SPIR-V module; sharding builds it for the others)."""
    if isinstance(device, Devices):
        return device.queues[0]
    if isinstance(device, (list, tuple)):
        return device[0] if device else None
    return device


def devices(filter: Any = None, split: bool | int = False) -> Devices:
    """The devices a filter string names, or their sub-devices with `split`.

    `filter` is a dpctl filter string ("opencl:cpu", "gpu", "level_zero:gpu:1"),
    a dpctl.SyclDevice, or None ($TINYC_DEVICE, else every device that
    builds SPIR-V, GPUs first). Devices that cannot build SPIR-V are left
    out. `split=True` partitions each device as its driver offers (GPU
    stacks, NUMA domains) or else into two halves (a device that cannot be
    partitioned stays whole); `split=k` makes k parts of each.
    """
    return Devices(_found(filter, split))


def _found(filter: Any, split: bool | int) -> list[Any]:
    """What `devices(filter, split)` holds: root devices, or the queues of their sub-devices."""
    if isinstance(split, bool):
        parts = None if split else 0
    elif isinstance(split, numbers.Integral) and split >= 1:
        parts = int(split)
    else:
        raise LaunchError(f"split must be True, False or a positive integer, got {split!r}", argument="split")
    roots = _matching(filter)
    if parts == 0:
        return roots
    queues: list[Any] = []
    for root in roots:
        queues += sub_device_queues(root, parts)
    return queues


def _matching(filter: Any) -> list[Any]:
    """The SPIR-V capable root devices a filter names (LaunchError if none)."""
    dpctl = import_dpctl()
    if filter is None:
        filter = os.environ.get(DEVICE_VARIABLE, "").strip() or None
    if filter is None:
        found = [d for d in dpctl.get_devices() if accepts_spirv(d)]
        found.sort(key=lambda d: d.device_type.name != "gpu")
    elif isinstance(filter, str):
        found = [d for d in _filtered(dpctl, filter) if accepts_spirv(d)]
    else:
        found = [select_queue(filter).sycl_device]
    if not found:
        raise LaunchError(f"no device that builds SPIR-V matches {filter!r}; 'tinyc devices' lists the devices")
    return found


def _filtered(dpctl: Any, text: str) -> list[Any]:
    """Devices matching a filter string; a trailing index picks one of them."""
    fields = [f.strip() for f in text.split(":")]
    if fields and fields[-1].isdigit():
        try:
            return [dpctl.SyclDevice(text)]
        except Exception:
            return []
    backends = {b.name for b in dpctl.backend_type}
    types = {t.name for t in dpctl.device_type}
    backend = next((f for f in fields if f in backends), "all")
    kind = next((f for f in fields if f in types), "all")
    if any(f not in backends and f not in types for f in fields):
        raise LaunchError(f"cannot read the filter string {text!r} (expected backend:type[:index], e.g. opencl:cpu)")
    return list(dpctl.get_devices(backend=backend, device_type=kind))


def sub_device_queues(device: Any, parts: int | None) -> list[Any]:
    """Queues of the sub-devices of `device` (made once; see the module docs).

    `parts` None: the driver's affinity partition, else two halves (the same
    sub-devices as `parts=2`); a device that cannot be split stays whole."""
    root_queue = queue_for_device(device)
    with _lock:
        if parts is None:
            subs = _parts.get((id(root_queue), None))
            if subs is None:
                subs = _affinity(device)
                if subs is None:
                    parts = 2 if min(device.max_compute_units, device.partition_max_sub_devices) >= 2 else 1
                else:
                    _parts[(id(root_queue), None)] = subs
        if parts is not None:
            subs = _parts.get((id(root_queue), parts))
            if subs is None:
                subs = _parts[(id(root_queue), parts)] = _equal_parts(device, parts)
        if len(subs) > 1 and subs[0] not in _registered:
            dpctl = import_dpctl()
            context = dpctl.SyclContext(list(subs))
            label = device_label(device)
            for i, sub in enumerate(subs):
                register_queue(sub, dpctl.SyclQueue(context, sub, property="in_order"), f"{label}/{i}")
                _registered.add(sub)
    return [root_queue] if len(subs) == 1 else [queue_for_device(s) for s in subs]


def _affinity(device: Any) -> tuple[Any, ...] | None:
    """The driver's own partition of the device (GPU stacks, NUMA domains), if it has one."""
    failure = import_dpctl().SyclSubDeviceCreationError
    for domain in AFFINITY:
        try:
            subs = device.create_sub_devices(partition=domain)
        except (failure, ValueError, TypeError):
            continue
        if len(subs) > 1:
            return tuple(subs)
    return None


def _equal_parts(device: Any, parts: int) -> tuple[Any, ...]:
    """`parts` sub-devices sharing the compute units as evenly as possible."""
    if parts == 1:
        return (device,)
    units = device.max_compute_units
    if parts > min(units, device.partition_max_sub_devices):
        raise LaunchError(
            f"{device_label(device)} cannot be split into {parts} parts: it has {units} compute units "
            f"and at most {device.partition_max_sub_devices} sub-devices", argument="split")
    counts = [units // parts + (i < units % parts) for i in range(parts)]
    try:
        return tuple(device.create_sub_devices(partition=counts))
    except (import_dpctl().SyclSubDeviceCreationError, ValueError, TypeError) as exc:
        raise LaunchError(f"{device_label(device)} cannot be split into {counts} compute units ({exc})",
                          argument="split") from None
