"""One step of a contraction on the lanes: each lane computes its batch entries' values.

A step Z := X·Y (or Z := X summed/permuted) inside the `parallel` region of a
lane kernel (lanes.py). Every lane holds batch entries `base + e·SG + lane`
of a chunk, so a tensor that holds the batch label is read as SG consecutive
elements per instruction (the batch mode has stride 1); a tensor the batch
shares is read at one address by every lane (a broadcast). The step is:

    for each register block (ib x jb outputs of two labels r, c; `for` loops):
      for e in 0 .. full:                             ; the chunk's full vectors of entries
        entry = base + e·SG + lane                    ; uniform base + lane id
        if base + e·SG + SG-1 < n:                    ; uniform (always true): the bound
          acc[ib x jb] = for k... (carried) { acc + X[..] * Y[..] }
          Z[..] = alpha·acc (+ beta·Z[..])            ; cast, relu
      for e in full .. vectors:                       ; the short last vector, if any
        ... the same under `entry < n`                ; per lane: masked

Register blocks are small (at most `BLOCK` accumulators), so a k loop keeps
a few dozen sequential streams live; the block loop is outside the entry
loop ("block-outer"), so each stream advances by one vector per iteration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from tinyc.builder import FunctionBuilder, Value
from tinyc.contractions.tensors import converted
from tinyc.ir.core import erase
from tinyc.ir.types import ScalarType, accumulation_type

LANE = "\u2022"
"""The label of a tensor's batch mode in a lane kernel (the entry, or its slot in the chunk)."""
BLOCK = 6
"""Accumulators per register block (complex: half)."""


@dataclass(frozen=True)
class LaneTensor:
    """A memref and the label of each mode; LANE marks the batch mode, indexed by the entry
    (global tensors) or by the entry's slot in the chunk (`slot`: local intermediates)."""

    value: Value
    labels: tuple[str, ...]
    slot: bool = False

    def has(self, label: str) -> bool:
        return label in self.labels

    @property
    def batched(self) -> bool:
        return LANE in self.labels

    def index(self, env: dict, entry: Value, slot: Value) -> list:
        return [(slot if self.slot else entry) if label == LANE else env[label] for label in self.labels]


@dataclass
class Chunk:
    """The entries of this work-group: `base + e·sg + lane` for e < vectors, below `n`."""

    base: Value
    lane: Value
    n: Value
    sg: int
    chunk: int
    budget: int = 6       # accumulators per register block (complex: half)
    vectors: Any = None   # vectors of entries this work-group has (uniform: the short last chunk)
    ksplit: int | None = None   # rows of the summed label per pass (0: all in one; None: auto_ksplit)
    full: Any = None      # vectors whose every lane is an entry (uniform)


@dataclass
class Scaling:
    """How the last step writes the output: alpha·acc (+ beta·out), cast, relu."""

    alpha: Value | None       # None: 1
    beta: Value | None        # None: 0, the output is never read
    beta_is_zero: Value | None
    relu: bool


def emit_lane_step(fn: FunctionBuilder, inputs: Sequence[LaneTensor], out: LaneTensor, sizes: dict[str, int],
                   chunk: Chunk, compute: ScalarType, scaling: Scaling | None = None) -> None:
    """out := the product of `inputs` summed over the labels `out` lacks, per batch entry.
    Products and sums run in `compute`'s accumulation type (f32 for 16-bit floats)."""
    compute = accumulation_type(compute)
    if len(inputs) == 1:
        _stream(fn, inputs[0], out, sizes, chunk, compute, scaling)
        return
    z = [label for label in out.labels if label != LANE]
    r, c = _block_labels(inputs, z, sizes)
    budget = max(1, chunk.budget // 2) if compute.name in ("c32", "c64") else chunk.budget
    ib, jb = block_shape(sizes.get(r, 1) if r else 1, sizes.get(c, 1) if c else 1, budget)
    outer = [label for label in z if label not in (r, c)]
    summed: list[str] = []
    for t in inputs:
        summed += [label for label in t.labels if label != LANE and not out.has(label) and label not in summed]

    def blocks(env: dict) -> None:
        for r0, rb in _parts(fn, r, sizes, ib):
            for c0, cb in _parts(fn, c, sizes, jb):
                _block(fn, inputs, out, sizes, chunk, compute, scaling, env, (r, r0, rb), (c, c0, cb),
                       summed)

    _nest(fn, outer, sizes, {}, blocks)


ROWS = 4
"""Rows a streamed pass adds before it updates the output (fewer passes over the output)."""


def _stream(fn: FunctionBuilder, x: LaneTensor, out: LaneTensor, sizes: dict[str, int], chunk: Chunk,
            compute: ScalarType, scaling: Scaling | None) -> None:
    """out := x summed over the labels out lacks (a reduction, a permutation), streamed: a
    pass per output point and ROWS summed indices reads ROWS rows of the chunk (vectors of
    SG entries, one sequential run each, in x's memory order) and adds them into the
    output's row, which stays in the cache: copy bandwidth, whatever the number of rows."""
    stride = dict(zip(x.labels, x.value.type.stride))  # type: ignore[attr-defined]
    by_memory = sorted((label for label in x.labels if label != LANE), key=lambda label: -stride[label])
    points = [label for label in by_memory if out.has(label)]
    summed = [label for label in reversed(by_memory) if not out.has(label)]   # fastest first
    total = math.prod(sizes[label] for label in summed)

    def split(env: dict, flat: Any) -> dict:
        inner = dict(env)
        if not summed:
            return inner
        if isinstance(flat, int):
            for label in summed:
                inner[label] = flat % sizes[label]
                flat //= sizes[label]
            return inner
        for label in summed[:-1]:
            inner[label] = fn.rem(flat, sizes[label])
            flat = fn.div(flat, sizes[label])
        inner[summed[-1]] = flat
        return inner

    if total > ROWS and _rounds_partials(out, compute):
        _stream_once(fn, x, out, chunk, compute, scaling, total, split, points, sizes)
        return
    relu_pass = scaling is not None and scaling.relu and total > ROWS   # after the last addition
    if relu_pass:
        scaling = Scaling(scaling.alpha, scaling.beta, scaling.beta_is_zero, False)

    def rows(env: dict, start: Any, count: int, first: bool) -> None:
        where = [split(env, start if k == 0 else (start + k if isinstance(start, int) else fn.add(start, k)))
                 for k in range(count)]
        def body(entry: Value, slot: Value) -> None:
            value = None
            for at in where:
                row = _load(fn, x, x.index(at, entry, slot), compute)
                value = row if value is None else fn.add(value, row)
            if first:
                _store(fn, out, env, entry, slot, value, compute, scaling)
            else:
                _add(fn, out, env, entry, slot, value, compute, scaling)

        for_entries(fn, chunk, body)

    def point(env: dict) -> None:
        rows(env, 0, min(ROWS, total), True)
        full = (total - ROWS) // ROWS * ROWS if total > ROWS else 0
        if full:
            with fn.for_(ROWS, ROWS + full, ROWS) as loop:
                rows(env, loop.var, ROWS, False)
        if total > ROWS and (total - ROWS) % ROWS:
            rows(env, ROWS + full, (total - ROWS) % ROWS, False)
        if relu_pass:
            _relu(fn, out, [env], chunk)

    _nest(fn, points, sizes, {}, point)


def _rounds_partials(out: LaneTensor, compute: ScalarType) -> bool:
    """Whether partial sums kept in `out` between passes would be rounded: out holds a 16-bit
    float whose sums run in `compute` (ir/types.accumulation_type). (A wider out, a USM result
    widened in the kernel, keeps them as well as registers would.)"""
    element = out.value.type.element  # type: ignore[attr-defined]
    return element is not compute and accumulation_type(element) is compute


def _stream_once(fn: FunctionBuilder, x: LaneTensor, out: LaneTensor, chunk: Chunk, compute: ScalarType,
                 scaling: Scaling | None, total: int, split: Callable[[dict, Any], dict],
                 points: list[str], sizes: dict[str, int]) -> None:
    """_stream in one pass: each entry's sum over all `total` rows carried in a register of the
    wide type and stored once (so a half-precision sum rounds once, not once per ROWS rows)."""
    def point(env: dict) -> None:
        def body(entry: Value, slot: Value) -> None:
            with fn.for_(0, total, init=[fn.constant(0, compute)]) as rows:
                row = _load(fn, x, x.index(split(env, rows.var), entry, slot), compute)
                fn.yield_([fn.add(rows.carried[0], row)])
            _store(fn, out, env, entry, slot, rows.results[0], compute, scaling)

        for_entries(fn, chunk, body)

    _nest(fn, points, sizes, {}, point)


def _add(fn: FunctionBuilder, out: LaneTensor, env: dict, entry: Value, slot: Value, value: Value,
         compute: ScalarType, scaling: Scaling | None) -> None:
    """out[...] += alpha·value (cast to out's element type)."""
    index = out.index(env, entry, slot)
    element = out.value.type.element  # type: ignore[attr-defined]
    if scaling is not None and scaling.alpha is not None:
        value = fn.mul(converted(fn, scaling.alpha, compute), value)
    fn.store(fn.add(fn.load(out.value, index), converted(fn, value, element)), out.value, index)


def _load(fn: FunctionBuilder, t: LaneTensor, index: Any, compute: ScalarType) -> Value:
    """An element of `t` in the type the step computes in."""
    return converted(fn, fn.load(t.value, index), compute)


def block_shape(rows: int, cols: int, budget: int) -> tuple[int, int]:
    """ib x jb accumulators: at most `budget`, fewest loads per multiply-add ((ib + jb) / ib·jb),
    then blocks that divide the sizes (no remainder code), then square."""
    best, best_key = (1, 1), None
    for ib in range(1, min(rows, budget) + 1):
        for jb in range(1, min(cols, budget // ib) + 1):
            key = ((ib + jb) / (ib * jb), (rows % ib != 0) + (cols % jb != 0), abs(ib - jb))
            if best_key is None or key < best_key:
                best, best_key = (ib, jb), key
    return best


def _block_labels(inputs: Sequence[LaneTensor], z: Sequence[str], sizes: dict[str, int]) -> tuple[str | None, str | None]:
    """Two output labels to block: r, then c held by a different set of inputs (so that a
    load of one serves a row or a column of the block)."""
    if not z:
        return None, None

    def holders(label: str) -> tuple[bool, ...]:
        return tuple(t.has(label) for t in inputs)

    by_size = sorted(z, key=lambda label: -sizes[label])
    r = by_size[0]
    for label in by_size:           # prefer a row label of the first input (a gemm's M)
        if holders(label)[0] and not all(holders(label)):
            r = label
            break
    c = next((label for label in by_size if label != r and holders(label) != holders(r)), None)
    return r, c


def _parts(fn: FunctionBuilder, label: str | None, sizes: dict[str, int], step: int):
    """(offset, size) of the blocks along a label: full blocks by a `for` loop, then the rest."""
    if label is None:
        yield None, 1
        return
    n = sizes[label]
    full = n - n % step
    if full == step:
        yield 0, step
    elif full:
        with fn.for_(0, full, step) as loop:
            yield loop.var, step
    if n % step:
        yield full, n % step


def _nest(fn: FunctionBuilder, labels: Sequence[str], sizes: dict[str, int], env: dict,
          body: Callable[[dict], None]) -> None:
    if not labels:
        body(env)
        return
    with fn.for_(0, sizes[labels[0]]) as loop:
        _nest(fn, labels[1:], sizes, {**env, labels[0]: loop.var}, body)


def _block(fn: FunctionBuilder, inputs: Sequence[LaneTensor], out: LaneTensor, sizes: dict[str, int],
           chunk: Chunk, compute: ScalarType, scaling: Scaling | None, env: dict, rows: tuple,
           cols: tuple, summed: list[str]) -> None:
    """One register block over the chunk's entries. With `chunk.ksplit` and one summed label
    longer than it, the sum runs in passes of ksplit rows (each a pass over the chunk, the
    block's partial sums kept in `out`): fewer streams live at a time."""
    (r, r0, rb), (c, c0, cb) = rows, cols
    points = [(ii, jj) for ii in range(rb) for jj in range(cb)]
    row_at = [_offset(fn, r0, ii) for ii in range(rb)] if r is not None else []
    col_at = [_offset(fn, c0, jj) for jj in range(cb)] if c is not None else []
    offsets = {}
    for ii, jj in points:
        offsets[ii, jj] = {**env, **({r: row_at[ii]} if r is not None else {}),
                           **({c: col_at[jj]} if c is not None else {})}
    split = chunk.ksplit
    if split is None:
        split = auto_ksplit(inputs, summed, sizes, r, rb, c, cb)
    split = split if len(summed) == 1 and split and sizes[summed[0]] > split else 0
    if _rounds_partials(out, compute):
        split = 0   # one pass: the partial sums stay in the wide type (registers)
    if not split:
        _pass(fn, inputs, out, sizes, chunk, compute, scaling, offsets, summed, None, True)
        return
    total = sizes[summed[0]]
    relu_pass = scaling is not None and scaling.relu
    if relu_pass:
        scaling = Scaling(scaling.alpha, scaling.beta, scaling.beta_is_zero, False)
    _pass(fn, inputs, out, sizes, chunk, compute, scaling, offsets, summed, (0, split), True)
    full = (total - split) // split * split
    if full:
        with fn.for_(split, split + full, split) as passes:
            _pass(fn, inputs, out, sizes, chunk, compute, scaling, offsets, summed, (passes.var, split), False)
    if (total - split) % split:
        _pass(fn, inputs, out, sizes, chunk, compute, scaling, offsets, summed,
              (split + full, (total - split) % split), False)
    if relu_pass:
        _relu(fn, out, offsets.values(), chunk)


STREAMS = 32
"""Rows read at once by a pass over the chunk (each a sequential stream): beyond about this many
the hardware prefetchers lose track (a mat-vec of 16 rows ran 1.9x faster in passes of 4)."""


def auto_ksplit(inputs: Sequence[LaneTensor], summed: list[str], sizes: dict[str, int], r: str | None,
                rb: int, c: str | None, cb: int) -> int:
    """Rows of the summed label per pass: all of them, unless the block then reads more than
    STREAMS rows at once (a power of two then, at least 2)."""
    if len(summed) != 1:
        return 0
    per_row = sum((rb if t.has(r) else 1) * (cb if t.has(c) else 1) for t in inputs
                  if t.batched and t.has(summed[0]))
    if per_row * sizes[summed[0]] <= STREAMS:
        return 0
    return max(2, 1 << max(0, (STREAMS // max(per_row, 1)).bit_length() - 1))


def _pass(fn: FunctionBuilder, inputs: Sequence[LaneTensor], out: LaneTensor, sizes: dict[str, int],
          chunk: Chunk, compute: ScalarType, scaling: Scaling | None, offsets: dict, summed: list[str],
          part: tuple | None, first: bool) -> None:
    """A pass over the chunk's entries: the block's sums over `summed` (or over the rows
    `part` = (start, count) of the one summed label), stored (first) or added to `out`."""
    points = list(offsets)

    def body(entry: Value, slot: Value) -> None:
        def products(k_env: dict) -> list[Value]:
            loaded: dict[tuple, Value] = {}
            values = []
            for point in points:
                full = {**offsets[point], **k_env}
                value = None
                for t in inputs:
                    index = t.index(full, entry, slot)
                    key = (id(t), tuple(id(i) if isinstance(i, Value) else i for i in index))
                    if key not in loaded:
                        loaded[key] = _load(fn, t, index, compute)
                    value = loaded[key] if value is None else fn.mul(value, loaded[key])
                values.append(value)
            return values

        zero = fn.constant(0, compute) if summed else None
        if part is not None:
            start, count = part
            end = start + count if isinstance(start, int) else fn.add(start, count)
            values = _sum(fn, summed, sizes, {}, [zero] * len(points), products, (start, end))
        elif summed:
            values = _sum(fn, summed, sizes, {}, [zero] * len(points), products)
        else:
            values = products({})
        for point, value in zip(points, values):
            if first:
                _store(fn, out, offsets[point], entry, slot, value, compute, scaling)
            else:
                _add(fn, out, offsets[point], entry, slot, value, compute, scaling)

    for_entries(fn, chunk, body)


def _relu(fn: FunctionBuilder, out: LaneTensor, envs: Any, chunk: Chunk) -> None:
    """out := max(out, 0) at the given points, over the chunk's entries."""
    def body(entry: Value, slot: Value) -> None:
        for env in envs:
            index = out.index(env, entry, slot)
            fn.store(fn.max(fn.load(out.value, index), 0), out.value, index)

    for_entries(fn, chunk, body)


def for_entries(fn: FunctionBuilder, chunk: Chunk, body: Callable[[Value, Value], None]) -> None:
    """body(entry, slot) for the chunk's entries, a vector of SG at a time: the full vectors
    in a loop with no condition, then the short last vector under `entry < n` (masked lanes).

    The runtime's vectorizer masks every instruction under a per-lane `if`, the values a
    loop carries included: one copy of the body under `entry < n` ran the products of a
    register block at a third of their speed (a masked move per accumulator per step,
    measured in the dumped assembly; 30% less CPU time on `ik,kjb->ijb`), so the full
    vectors get their own copy. Its uniform `if` is always true; it tells the launch-bounds
    analysis (analysis/launch_bounds.py) that every lane's entry is below n."""
    with fn.for_(0, chunk.full) as vectors:
        first = fn.mul(vectors.var, chunk.sg)
        slot = fn.add(first, chunk.lane)
        entry = fn.add(chunk.base, slot)
        with fn.if_(fn.lt(fn.add(fn.add(chunk.base, first), chunk.sg - 1), chunk.n)) as inside:
            with inside.then():   # always true: uniform, so not masked; it states the bound
                body(entry, slot)
    _erase_if_unused(entry)   # a body on local tensors only indexes by slot
    _entries_from(fn, chunk, chunk.full, chunk.vectors, body)   # none or the short one


def _erase_if_unused(value: Value) -> None:
    """Drop `value`'s instruction when nothing in its region reads it: a generated kernel
    must check without an unused-value warning."""
    inst = value.owner
    region = inst.parent
    if not any(value in user.operands for user in region.walk()):
        erase(inst)


def _entries_from(fn: FunctionBuilder, chunk: Chunk, first: Any, end: Any,
                  body: Callable[[Value, Value], None]) -> None:
    with fn.for_(first, end) as vectors:
        slot = fn.add(fn.mul(vectors.var, chunk.sg), chunk.lane)
        entry = fn.add(chunk.base, slot)
        with fn.if_(fn.lt(entry, chunk.n)) as inside:
            with inside.then():
                body(entry, slot)


def _sum(fn: FunctionBuilder, labels: Sequence[str], sizes: dict[str, int], env: dict, acc: list[Value],
         products: Callable[[dict], list[Value]], bounds: tuple | None = None) -> list[Value]:
    """acc + Σ over `labels` of the products: nested loops carrying the accumulators (the
    first label over `bounds` = (start, end) if given)."""
    start, end = bounds if bounds is not None else (0, sizes[labels[0]])
    with fn.for_(start, end, init=acc) as loop:
        inner = {**env, labels[0]: loop.var}
        if labels[1:]:
            total = _sum(fn, labels[1:], sizes, inner, list(loop.carried), products)
        else:
            total = [fn.add(a, p) for a, p in zip(loop.carried, products(inner))]
        fn.yield_(total)
    return list(loop.results)


def _store(fn: FunctionBuilder, out: LaneTensor, env: dict, entry: Value, slot: Value, value: Value,
           compute: ScalarType, scaling: Scaling | None) -> None:
    index = out.index(env, entry, slot)
    element = out.value.type.element  # type: ignore[attr-defined]
    if scaling is not None and scaling.alpha is not None:
        value = fn.mul(converted(fn, scaling.alpha, compute), value)
    value = converted(fn, value, element)   # (an f16 step's f32 sums into its temporary too)
    if scaling is not None:
        if scaling.beta is not None:
            with fn.if_(scaling.beta_is_zero, [element]) as branch:
                with branch.then():
                    fn.yield_([value])
                with branch.otherwise():
                    fn.yield_([fn.add(value, fn.mul(scaling.beta, fn.load(out.value, index)))])
            value = branch.results[0]
        if scaling.relu:
            value = fn.max(value, 0)
    fn.store(value, out.value, index)


def _offset(fn: FunctionBuilder, base: Any, k: int) -> Any:
    if isinstance(base, int):
        return base + k
    return base if k == 0 else fn.add(base, k)


def per_entry(labels: Sequence[str], sizes: dict[str, int]) -> int:
    """Elements of one batch entry of a tensor (its labels other than the batch's)."""
    return math.prod(sizes[label] for label in labels if label != LANE)
