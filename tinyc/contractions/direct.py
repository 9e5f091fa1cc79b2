"""The general step: a `foreach` over the result, `for` loops over the summed labels.

    foreach (z...) = (0...), (sizes...) {
      acc = for k... init(0) { acc + X[...] * Y[...] * ... }
      out[z...] = alpha acc + beta out[z...]       ; never reads out when beta = 0
    }

Any step fits this form (any number of inputs, labels shared in any way, a
result of any order, an empty sum), so it is the fallback where no
collective matches, e.g. a batched dot product or an elementwise scaling.
The first foreach mode is the result's fastest, so work-items of a
subgroup touch neighbouring elements.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from tinyc.builder import FunctionBuilder, Value
from tinyc.builder.types import memref
from tinyc.contractions.tensors import Env, Tensor, converted, fuse_neighbours
from tinyc.ir.types import ScalarType, accumulation_type

LANES = 16
"""Partial sums per result entry when the work-items share a long sum (a subgroup's worth)."""
SPLIT_ENTRIES = 4
"""Results with at most this many entries per step share their sums among the lanes..."""
SPLIT_SUM = 64
"""...when each sums at least this many products."""


def emit_direct(fn: FunctionBuilder, inputs: Sequence[Tensor], out: Tensor, sizes: dict[str, int],
                compute: ScalarType, alpha: Value | None, beta: Value | None,
                relu: bool = False) -> None:
    """out := alpha Σ Π inputs + beta out; `alpha None` is 1, `beta None` is 0 (out not read).
    Products and sums run in `compute`'s accumulation type (f32 for 16-bit floats)."""
    compute = accumulation_type(compute)
    summed = _summed(inputs, out)
    split = None
    if _long_sums(summed, out.labels, sizes):   # (neighbouring summed modes as one first: the
        (*fused, out), sizes = fuse_neighbours(fn, [*inputs, out], sizes)   # lanes' share is contiguous)
        inputs, summed = fused, _summed(fused, out)
        split = _split_label(summed, sizes, inputs[0])
    labels = list(out.labels)
    bounds = [sizes[label] for label in labels] or [1]
    parts = _lane_sums(fn, inputs, summed, split, labels, bounds, sizes, compute) if split else None
    beta_is_zero = fn.eq(beta, 0) if beta is not None else None
    out_type = out.value.type.element  # type: ignore[attr-defined]
    with fn.foreach([0] * len(bounds), bounds) as loop_vars:
        env: Env = dict(zip(labels, loop_vars))
        if parts is not None:
            with fn.for_(0, LANES, init=[fn.constant(0, compute)]) as loop:
                index = [loop.var, *loop_vars[: len(labels)]] if labels else [loop.var, 0]
                fn.yield_([fn.add(loop.carried[0], fn.load(parts, index))])
            value = loop.results[0]
        elif not inputs:
            value = fn.constant(0, compute)
        elif summed:
            value = _sum(fn, inputs, summed, sizes, env, fn.constant(0, compute), compute)
        else:
            value = _product(fn, inputs, env, compute)
        if alpha is not None:
            value = fn.mul(converted(fn, alpha, compute), value)
        value = converted(fn, value, out_type)
        index = [env[label] for label in labels]
        if beta is not None:
            with fn.if_(beta_is_zero, [out_type]) as branch:
                with branch.then():
                    fn.yield_([value])
                with branch.otherwise():
                    old = fn.load(out.value, index)
                    fn.yield_([fn.add(value, fn.mul(beta, old))])
            value = branch.results[0]
        if relu:
            value = fn.max(value, 0)
        fn.store(value, out.value, index)
    if parts is not None:
        fn.barrier(local_fence=True)   # (the partials are written again by a next step or entry)


def _summed(inputs: Sequence[Tensor], out: Tensor) -> list[str]:
    summed: list[str] = []
    for t in inputs:
        summed += [label for label in t.labels if label not in out.labels and label not in summed]
    return summed


def _long_sums(summed: Sequence[str], labels: Sequence[str], sizes: dict[str, int]) -> bool:
    """Whether the lanes share the sums (LANES partial sums each): a result of few entries
    whose sums are long, which one work-item per entry would run all alone."""
    return (bool(summed) and math.prod(sizes[x] for x in labels) <= SPLIT_ENTRIES
            and math.prod(sizes[x] for x in summed) >= SPLIT_SUM and any(sizes[x] >= LANES for x in summed))


def _split_label(summed: Sequence[str], sizes: dict[str, int], first: Tensor) -> str | None:
    """The summed label the lanes share: of those with LANES entries or more, the stride-1
    one of the first input (the lanes then load neighbours: `bi,bi->` splits i), else the
    largest; None when fusing left none that long."""
    wide = [label for label in summed if sizes[label] >= LANES]
    unit = [label for label in wide if first.has(label) and first.stride_of(label) == 1]
    return unit[0] if unit else max(wide, key=lambda x: sizes[x], default=None)


def _lane_sums(fn: FunctionBuilder, inputs: Sequence[Tensor], summed: Sequence[str], split: str,
               labels: Sequence[str], bounds: Sequence[int], sizes: dict[str, int],
               compute: ScalarType) -> Value:
    """LANES partial sums per result entry in local memory: partial l sums the entries
    l, l + LANES, ... of `split` (and all of the other summed labels); a barrier after."""
    parts = fn.alloca(memref(compute, LANES, *([sizes[x] for x in labels] if labels else [1]), local=True))
    order = [split, *(label for label in summed if label != split)]
    with fn.foreach([0] * (1 + len(bounds)), [LANES, *bounds]) as loop_vars:
        env: Env = dict(zip(labels, loop_vars[1:]))
        total = _sum(fn, inputs, order, sizes, env, fn.constant(0, compute), compute, loop_vars[0], LANES)
        index = [loop_vars[0], *loop_vars[1: 1 + len(labels)]] if labels else [loop_vars[0], 0]
        fn.store(total, parts, index)
    fn.barrier(local_fence=True)
    return parts


def _product(fn: FunctionBuilder, inputs: Sequence[Tensor], env: Env, compute: ScalarType) -> Value:
    value = None
    for t in inputs:
        x = converted(fn, fn.load(t.value, [env[label] for label in t.labels]), compute)
        value = x if value is None else fn.mul(value, x)
    assert value is not None
    return value


def _sum(fn: FunctionBuilder, inputs: Sequence[Tensor], summed: Sequence[str], sizes: dict[str, int],
         env: Env, acc: Value, compute: ScalarType, start: Any = 0, step: int | None = None) -> Value:
    """acc + Σ over `summed` of the product, as nested loops carrying the sum; the first
    label's loop from `start` by `step` (a lane's share of it)."""
    label, rest = summed[0], summed[1:]
    with fn.for_(start, sizes[label], step, init=[acc]) as loop:
        inner = {**env, label: loop.var}
        if rest:
            total = _sum(fn, inputs, rest, sizes, inner, loop.carried[0], compute)
        else:
            total = fn.add(loop.carried[0], _product(fn, inputs, inner, compute))
        fn.yield_([total])
    return loop.results[0]


def emit_relu(fn: FunctionBuilder, out: Tensor, sizes: dict[str, int]) -> None:
    """out := max(out, 0), element by element (the epilogue after a collective)."""
    labels = list(out.labels)
    bounds = [sizes[label] for label in labels] or [1]
    with fn.foreach([0] * len(bounds), bounds) as loop_vars:
        index = list(loop_vars[: len(labels)])
        fn.store(fn.max(fn.load(out.value, index), 0), out.value, index)
