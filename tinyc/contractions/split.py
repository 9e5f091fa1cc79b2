"""A contraction's batch split over several devices: `tinyc.einsum(..., device=[d0, d1])`.

The kernels of tinyc.einsum take several batch entries per work-group, so
the runtime cannot slice their arguments by the group id (sharding.py
slices along a mode the group id indexes). The contraction slices them
itself: the largest batch label is cut into contiguous slices in proportion
to the devices' weights (a `tinyc.Devices`; a list is made into one), each
slice is the same contraction on views of the operands and of the output
along that label — a smaller batch, which the same kernel runs (the batch
is a `?` mode) — and the slices run together, one per device, through
`sharding.launch_sliced` (staged and checked first, copied back only when
every device succeeded).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from tinyc.contractions.compiled import Analysis, materialize
from tinyc.contractions.running import Call, kernel_arguments
from tinyc.runtime.devices import as_devices
from tinyc.runtime.sharding import Slice, kernels_on, launch_sliced, split_counts

SliceCall = Callable[[list, Any], Call]
"""The cached call of a slice: (its operands, its output) -> Call (api._call)."""


def launch_split(a: Analysis, arrays: Sequence[Any], target: Any, alpha: Any, beta: Any, device: Any,
                 slice_call: SliceCall) -> None:
    """`target := alpha·einsum(arrays) + beta·target`, its batch split over `device` (the
    operands as the user gave them: a slice converts its own, as run() does)."""
    label = a.batch_labels()[0]   # (the user's: a joined label's batch part)
    size = a.subscripts.sizes[label]
    devices = as_devices(device)
    parts, start, first_group = [], 0, 0
    for queue, count in zip(devices.queues, split_counts(size, devices.weights)):
        if not count:
            continue
        ins = [_take(x, labels, label, size, start, count) for x, labels in zip(arrays, a.subscripts.inputs)]
        out = _take(target, a.subscripts.output, label, size, start, count)
        call = slice_call(ins, out)
        ins = [materialize(x, labels, call.analysis.compute) if conv else x
               for x, conv, labels in zip(ins, call.analysis.convert, call.analysis.subscripts.inputs)]
        kernel = kernels_on(call.compiled.kernel, [queue])[0]
        parts.append((kernel, kernel_arguments(call, ins, out, alpha, beta), Slice(queue, first_group, call.groups)))
        start, first_group = start + count, first_group + call.groups
    launch_sliced(parts)


def _take(x: Any, labels: Sequence[str], label: str, size: int, start: int, count: int) -> Any:
    """x's entries [start, start + count) along the batch label (x whole where it does not
    hold the label: a shared operand, or one broadcast along it)."""
    if label not in labels or _shape(x)[list(labels).index(label)] != size:
        return x
    index = [slice(None)] * len(labels)
    index[list(labels).index(label)] = slice(start, start + count)
    return x[tuple(index)]


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape)
