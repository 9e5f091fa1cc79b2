"""Long reductions as two kernels: partial sums over chunks, then their sum.

A label that every operand holds but the output does not (`b` of `bi,bj->ij`,
`bij->ij`, `bij,bjk->ik`) is summed inside each output entry by the one-kernel plan
(plan.py): few work-groups, each running a long loop over that label. When the
label is long and the output small, the sum is cut into chunks of a fixed
length `q` (chosen from the static sizes alone, so every size of the label
runs on the same kernels):

1. **Partial sums.** The operands viewed with the label split into
   (chunk, q) — views, no copies — are the batch of an ordinary contraction
   (`cqi,cqj->cij`): one work-group per chunk writes its partial result
   into a temporary `P` (chunks first). The last, shorter chunk runs on
   zero-padded copies of its rows (q rows at most), on the same kernel.
2. **The sum of the chunks.** A second kernel takes `P` as a matrix
   (output entries × chunks) and does `out := alpha·P·1 + beta·out` with
   `sum.n`, work-groups over tiles of output entries, the chunks summed in
   order: the result is the same on every run.

The output entries of `P` are ordered as the target's memory is, so the
second kernel writes the target as one vector (a target with gaps gets a
temporary, copied in at the end). A full reduction (`bi,bi->`) is cut too when its
operands are large (MIN_FULL_BYTES): its chunks then spread over the cores where the
one kernel sums it in one work-group. NumPy operands only, not f16 (partial sums
stored in f16 would round and could overflow where the one kernel sums in
f32); everything else stays on the one-kernel plan.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.contractions import subscripts as subs
from tinyc.contractions.compiled import DTYPES, Analysis, Signature, hashable_device, signed
from tinyc.runtime import results

CHUNK_WORK = 1 << 14
"""Multiply-adds (or summed elements) per chunk: a work-group's worth of work."""
MIN_CHUNK, MAX_CHUNK = 8, 4096
"""Bounds of the chunk length (a power of two)."""
MIN_CHUNKS = 16
"""Below this many whole chunks the one-kernel plan runs (too few work-groups to spread)."""
MIN_BYTES = 1 << 20
"""Below this many bytes of operands (in the computation's type) the one-kernel plan runs:
its strided sums stay in the caches, and three launches cost more (measured crossover
0.6-2 MB on `bi,bj->ij`, `ib,jb->ij`, `bij->ij`, `bij,bjk->ik`, `bij,b->ij`)."""
MIN_FULL_BYTES = 16 << 20
"""A full reduction (`bi,bi->`, `b,b->`) is cut only above this many bytes of operands: below,
the one kernel's lanes share its sum in one work-group and three launches cost more. Measured,
one kernel against cut (f32, medians of fresh processes): 2.6 MB 0.14 against 0.20 ms, 8 MB
0.42 / 0.44, 10 MB 0.46 / 0.45, 15 MB 0.67 / 0.61, 26 MB 1.21 / 0.87, 80 MB 11.7 / 7.8;
alternating in one process, 19-77 MB (f32, f64, complex64): cut 0.46-0.59x the time."""
LONGER = 4
"""The label is cut only when it has at least this many times the output's entries, and
only when the output has no batch label (the analysis's dynamic labels): then the one
kernel runs on one work-group, its entries each summing a long run. Otherwise the one
kernel is parallel already and the partial sums only add traffic. Measured cut against
one kernel (f32, ms): `ij,j->i` 4096 x 4096 (no batch label, as many entries as terms)
17.8 / 2.5; with a batch label `ij,ij->i` 4096 x 512 6.2 / 0.53, 256 x 20,000 5.8 / 1.2,
64 x 100,000 4.4 / 1.2, and `...b,...b->...` 4 x 8 x 20,000 0.50 / 0.23."""
SUM_TILE = 1024
"""Output entries per work-group of the sum of the chunks."""

_finish_kernels: dict[tuple, Any] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class Chunking:
    """How a call's long label (of `size` entries) is cut: chunks of `length`."""

    size: int
    length: int
    text: str                       # the partial sums' subscripts (chunk label first in the output)
    axes: tuple[int, ...]           # the label's dimension in each operand
    memory_order: tuple[int, ...]   # output dimensions from the slowest in the target's memory

    @property
    def chunks(self) -> int:
        """Whole chunks (the partial sums' batch); a shorter last one is run apart."""
        return self.size // self.length


def chunk_length(sub: subs.Subscripts, label: str) -> int:
    """The chunk length for cutting `label`, from the sizes of the other labels only (so every
    size of `label` shares the kernels): about CHUNK_WORK multiply-adds per chunk, and at least
    twice the output's entries per element of a slice of the operands at one `label` value,
    so that P holds at most half as many elements as the operands."""
    work = math.prod(max(n, 1) for other, n in sub.sizes.items() if other != label)
    entries = math.prod(max(sub.sizes[other], 1) for other in sub.output)
    width = sum(math.prod(max(sub.sizes[other], 1) for other in term if other != label) for term in sub.inputs)
    length = MIN_CHUNK
    while length < MAX_CHUNK and (length * work < CHUNK_WORK or length * width < 2 * entries):
        length *= 2
    return length


def long_label(sub: subs.Subscripts, shapes: Sequence[tuple[int, ...]]) -> str | None:
    """The largest label that every operand holds once, at full size, and the output not."""
    found = None
    for label, n in sub.sizes.items():
        if label in sub.output or not subs.is_letter(label):
            continue
        if all(term.count(label) == 1 and shape[term.index(label)] == n
               for term, shape in zip(sub.inputs, shapes)):
            if found is None or n > sub.sizes[found]:
                found = label
    return found


def plan_chunks(a: Analysis, sigs: Sequence[Signature], out: Any, epilogue: Any) -> Chunking | None:
    """A Chunking when cutting pays (a long label, a small output), else None."""
    sub = a.subscripts
    if (epilogue is not None or a.boolean or a.empty or a.zero or a.scale != 1 or a.compute != a.result
            or a.compute == np.float16   # (partial sums in f16 would round and overflow; f32 sums inside)
            or any(sig.kind != "numpy" for sig in sigs) or (out is not None and not isinstance(out, np.ndarray))):
        return None
    if a.dynamic:   # (a batch label in the output: the one kernel has work-groups to spread)
        return None
    label = long_label(sub, [sig.shape for sig in sigs])
    if label is None:
        return None
    size = sub.sizes[label]
    length = chunk_length(sub, label)
    entries = math.prod(sub.sizes[x] for x in sub.output)
    read = sum(math.prod(sig.shape) for sig in sigs)
    if (size // length < MIN_CHUNKS or entries * (size // length + 1) > read or size < LONGER * entries
            or read * a.compute.itemsize < (MIN_BYTES if sub.output else MIN_FULL_BYTES)
            or (sub.output and _streams(sigs[0], sub.inputs[0], label, len(sigs)))):   # (`b->`: one work-group)
        return None
    spare = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in sub.sizes]
    if len(spare) < 1 + sum(not subs.is_letter(x) for x in sub.sizes):
        return None
    chunk = spare.pop(0)
    names = {x: (x if subs.is_letter(x) else spare.pop(0)) for x in sub.sizes}
    order = _memory_order(out) if out is not None else tuple(range(len(sub.output))) \
        if a.out_order == "C" else tuple(reversed(range(len(sub.output))))
    terms = ["".join(chunk + names[x] if x == label else names[x] for x in term) for term in sub.inputs]
    result = chunk + "".join(names[sub.output[k]] for k in order)
    return Chunking(size, length, ",".join(terms) + "->" + result,
                    tuple(term.index(label) for term in sub.inputs), order)


def _streams(sig: Signature, term: Sequence[str], label: str, operands: int) -> bool:
    """A single operand whose long label is its stride-1 dimension: the one kernel's sums
    already read it as contiguous runs (`ijb->ij`)."""
    steps = [abs(s) for s, n in zip(sig.strides, sig.shape) if n > 1]
    return operands == 1 and bool(steps) and abs(sig.strides[term.index(label)]) == min(steps)


def _memory_order(out: np.ndarray) -> tuple[int, ...]:
    """out's dimensions from the largest stride (C order when out has none)."""
    return tuple(sorted(range(out.ndim), key=lambda k: (-abs(out.strides[k]), k)))


def _chunk_view(x: np.ndarray, axis: int, chunks: int, length: int) -> np.ndarray:
    """x with dimension `axis` cut into (chunks, length), its first chunks·length entries."""
    shape = x.shape[:axis] + (chunks, length) + x.shape[axis + 1:]
    step = x.strides[axis]
    strides = x.strides[:axis] + (step * length, step) + x.strides[axis + 1:]
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)


def _padded_tail(x: np.ndarray, axis: int, start: int, length: int) -> np.ndarray:
    """The rows of `axis` from `start` on as one chunk of `length`, zeros after them."""
    tail = np.zeros(x.shape[:axis] + (1, length) + x.shape[axis + 1:], x.dtype)
    rows = x.shape[axis] - start
    tail[(slice(None),) * axis + (0, slice(0, rows))] = x[(slice(None),) * axis + (slice(start, None),)]
    return tail


def _flat(target: np.ndarray, order: tuple[int, ...]) -> np.ndarray | None:
    """target as one vector in `order` (slowest first), or None when it has gaps or overlaps."""
    step, size = target.itemsize, 1
    for k in reversed(order):
        n = target.shape[k]
        if n != 1 and target.strides[k] != step * size:
            return None
        size *= n
    return np.lib.stride_tricks.as_strided(target, (max(size, 1),), (step,))


@dataclass
class ChunkedCall:
    """A cut call's cached state (one per exact signature, like api's calls): its analysis and
    Chunking, the partial sums' calls (whole chunks, the padded last one) and the packed sum."""

    analysis: Analysis
    cut: Chunking
    whole: Any = None          # running.Call of the whole chunks
    tail: Any = None           # running.Call of the padded last chunk
    sum_kernel: Any = None     # the compiled sum of the chunks
    sum_args: list | None = None   # the sum kernel's packed arguments (by address)
    sum_slots: tuple[int, ...] = ()
    sum_scalars: tuple = ()
    lock: threading.Lock = field(default_factory=threading.Lock)


def run_chunked(state: ChunkedCall, arrays: list, out: Any, alpha: Any, beta: Any, device: Any,
                check_bounds: bool, make_call: Callable[[str, list, np.ndarray], Any]) -> Any:
    """The call as partial sums (`make_call(text, operands, into)` gives the cached running.Call
    of the contraction into a slice of P) and the kernel summing them into out (or a new
    result). The partial sums are queued; the sum's wait covers them."""
    from tinyc.contractions.running import check_scalar, finish, queued_on

    a, ch = state.analysis, state.cut
    alpha = check_scalar(alpha, "alpha", a.compute)
    beta = check_scalar(beta, "beta", a.result)
    if out is None:
        result = results.empty(a.out_shape, a.result, a.out_order)
        target, beta = result, 0
    else:
        if not out.flags.writeable:
            raise ValueError("out is read-only")
        result = target = out
    chunks, length = ch.chunks, ch.length
    out_shape = tuple(a.out_shape[k] for k in ch.memory_order)
    rest = ch.size - chunks * length
    partials = results.empty((chunks + (rest > 0),) + out_shape, a.compute, "C")
    flat = _flat(target, ch.memory_order)
    temp = None
    if flat is None:   # (a target with gaps: its values through a dense temporary)
        temp = np.ascontiguousarray(target.transpose(ch.memory_order)) if beta != 0 else \
            results.empty(out_shape, a.result, "C")
        flat = temp.reshape(-1)
    entries = flat.shape[0]
    if state.sum_kernel is None:
        state.sum_kernel = _finish_kernel(a.compute, entries, device)
    kernel = state.sum_kernel
    with state.lock, queued_on(kernel.queue):   # (one wait: the sum's)
        tails = _partial_sums(state, arrays, partials, check_bounds, make_call)
        _sum(state, kernel, alpha, beta, partials, flat, check_bounds)
        del tails   # (the padded rows live until the sum's wait: the queued kernel reads them)
    if temp is not None:
        target.transpose(ch.memory_order)[...] = temp
    return finish(result, out, a)


def _partial_sums(state: ChunkedCall, arrays: list, partials: np.ndarray, check_bounds: bool,
                  make_call: Callable[[str, list, np.ndarray], Any]) -> list[np.ndarray]:
    """The whole chunks into partials[:chunks], the padded last one into the last row. A call
    packed before relaunches by address: a chunk view starts where its operand does. Returns
    the padded rows, which the caller keeps alive until the queued kernels finished."""
    from tinyc.contractions.running import _addresses, _by_address, run

    ch = state.cut
    chunks, length = ch.chunks, ch.length
    pieces = [(arrays, partials[:chunks], "whole")]
    tails: list[np.ndarray] = []
    if ch.size > chunks * length:
        tails = [_padded_tail(x, axis, chunks * length, length) for x, axis in zip(arrays, ch.axes)]
        pieces.append((tails, partials[chunks:], "tail"))
    for operands, into, which in pieces:
        call = getattr(state, which)
        if call is not None and call.packed is not None and not check_bounds and not any(call.analysis.convert):
            addresses = _addresses([*operands, into])   # (a chunk view starts where its operand does)
            if addresses is not None and _by_address(call, (), addresses, 1, 0):
                continue
        views = operands if which == "tail" else [_chunk_view(x, axis, chunks, length)
                                                 for x, axis in zip(operands, ch.axes)]
        if call is None:
            call = make_call(ch.text, views, into)
            setattr(state, which, call)
        run(call, views, into, 1, 0, check_bounds)   # (packs the call by address, or runs it checked)
    return tails


def _sum(state: ChunkedCall, kernel: Any, alpha: Any, beta: Any, partials: np.ndarray, flat: np.ndarray,
         check_bounds: bool) -> None:
    """out := alpha·P·1 + beta·out: packed once, relaunched with the new addresses."""
    from tinyc.runtime.numpy_objects import numpy_head
    from tinyc.runtime.submit import Address

    entries, groups = flat.shape[0], -(-flat.shape[0] // SUM_TILE)
    if state.sum_args is not None and not check_bounds and (alpha, beta) == state.sum_scalars \
            and type(flat) is np.ndarray and numpy_head(flat)[0] % flat.itemsize == 0:
        args = state.sum_args
        args[state.sum_slots[0]].address = numpy_head(partials)[0]
        args[state.sum_slots[1]].address = numpy_head(flat)[0]
        kernel.launch_raw(args, groups)
        return
    a = state.analysis
    matrix = np.lib.stride_tricks.as_strided(partials, (entries, partials.shape[0]),
                                             (partials.itemsize, partials.itemsize * entries))
    views = (matrix.view(signed(a.compute)), flat.view(signed(a.result)))
    if check_bounds or not kernel.host_pointers:   # (checked, or copies in and out: the kernel's call)
        kernel(alpha, beta, *views, batch=groups, check_bounds=True if check_bounds else None)
        return
    prepared = kernel.pack(alpha, beta, *views, batch=groups)
    kernel.launch_raw(prepared.args, groups)
    slots = tuple(k for k, x in enumerate(prepared.args) if type(x) is Address)
    if len(slots) == 2 and not prepared.call.staged:
        for k in slots:
            prepared.args[k].keep = None   # (the arrays of later calls are alive while they run)
        state.sum_args, state.sum_slots, state.sum_scalars = prepared.args, slots, (alpha, beta)


def finish_source(dtype: str, entries: int) -> str:
    """The kernel summing the chunks' partial results: tiles of SUM_TILE output entries."""
    return f"""func @sum_chunks(%alpha: {dtype}, %beta: {dtype}, %P: memref<{dtype}x{entries}x?>,
                 %out: memref<{dtype}x{entries}>) {{
  %g = builtin.group_id : index
  %tile = constant {SUM_TILE} : index
  %first = arith.mul %g, %tile : index
  %entries = constant {entries} : index
  %left = arith.sub %entries, %first : index
  %n = arith.min %tile, %left : index
  %p = subview %P[%first:%n, :] : memref<{dtype}x?x?,strided<1,{entries}>>
  %o = subview %out[%first:%n] : memref<{dtype}x?>
  sum.n %alpha, %p, %beta, %o
}}
"""


def _finish_kernel(dtype: np.dtype, entries: int, device: Any) -> Any:
    """The compiled sum of the chunks for this type and output size (cached per device)."""
    from tinyc.compiler import compile as compile_program

    key = (str(dtype), entries, hashable_device(device))
    found = _finish_kernels.get(key)
    if found is None:
        program = compile_program(finish_source(DTYPES[signed(dtype)], entries), name="<einsum sum>",
                                  device=device)
        found = program["sum_chunks"]
        with _lock:
            _finish_kernels[key] = found
    return found


def clear_chunk_sums() -> None:
    """Forget the compiled sums of the chunks (tinyc.einsum's clear_cache)."""
    with _lock:
        _finish_kernels.clear()
