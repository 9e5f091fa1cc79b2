"""Tensors of a kernel being emitted: an IR memref value and the label of each mode.

Shared by the emitters: views that fix some labels (subview with single
indices), loop nests over labels, and the accumulation loop of a
batch-reduce (first iteration with beta, the others with beta = 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from tinyc.builder import FunctionBuilder, Value

Env = dict  # label -> index Value (or int)


@dataclass(frozen=True)
class Tensor:
    """A memref value whose mode d holds label `labels[d]`."""

    value: Value
    labels: tuple[str, ...]

    def has(self, label: str) -> bool:
        return label in self.labels

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.value.type.shape  # type: ignore[attr-defined]

    def size_of(self, label: str) -> int:
        return self.sizes[self.labels.index(label)]

    def stride_of(self, label: str) -> int:
        return self.value.type.stride[self.labels.index(label)]  # type: ignore[attr-defined]


def view(fn: FunctionBuilder, t: Tensor, env: Env, name: str | None = None) -> Tensor:
    """`t` with the labels fixed by `env` dropped (a subview at those indices); an
    (offset, size) pair in `env` keeps the label as a mode of that size."""
    fixed = [label for label in t.labels if label in env]
    if not fixed:
        return t
    entries = [env[label] if label in env else slice(None) for label in t.labels]
    value = fn.subview(t.value, entries, name=name)
    return Tensor(value, tuple(label for label in t.labels
                               if label not in env or isinstance(env[label], tuple)))


def nest(fn: FunctionBuilder, labels: Sequence[str], sizes: dict[str, int], env: Env,
         body: Callable[[Env], None]) -> None:
    """Sequential `for` loops over `labels` (outermost first) around `body(env)`."""
    if not labels:
        body(env)
        return
    label, rest = labels[0], labels[1:]
    with fn.for_(0, sizes[label]) as loop:
        nest(fn, rest, sizes, {**env, label: loop.var}, body)


def accumulate(fn: FunctionBuilder, labels: Sequence[str], sizes: dict[str, int], env: Env,
               beta: Any, body: Callable[[Env, Any], None]) -> None:
    """`body(env, beta)` once with every label at 0, then over the rest of their range
    with beta = 1: the update `out := alpha Σ ... + beta out` as a loop of updates."""
    if not labels:
        body(env, beta)
        return
    body({**env, **{label: 0 for label in labels}}, beta)
    total = math.prod(sizes[label] for label in labels)
    if total == 1:
        return
    with fn.for_(1, total) as loop:
        rest, inner = loop.var, dict(env)
        for label in labels[:-1]:
            inner[label] = fn.rem(rest, sizes[label])
            rest = fn.div(rest, sizes[label])
        inner[labels[-1]] = rest
        body(inner, 1)


def fuse_neighbours(fn: FunctionBuilder, tensors: Sequence[Tensor],
                    sizes: dict[str, int]) -> tuple[list[Tensor], dict[str, int]]:
    """Merge labels a, b that every tensor holding either holds as neighbouring modes (b right
    after a, stride(b) = stride(a)·size(a)) into one mode: a `fuse` in each such tensor, so
    a step sees one mode of size(a)·size(b) instead of a loop."""
    tensors, sizes = list(tensors), dict(sizes)
    while True:
        pair = _fusable(tensors)
        if pair is None:
            return tensors, sizes
        a, b = pair
        merged = f"{a}+{b}"
        sizes[merged] = sizes[a] * sizes[b]
        for k, t in enumerate(tensors):
            if t.has(a):
                pos = t.labels.index(a)
                value = fn.fuse(t.value, pos, pos + 1)
                tensors[k] = Tensor(value, t.labels[:pos] + (merged,) + t.labels[pos + 2:])


def _fusable(tensors: Sequence[Tensor]) -> tuple[str, str] | None:
    for first in tensors:
        for pos in range(len(first.labels) - 1):
            a, b = first.labels[pos], first.labels[pos + 1]
            if all(_neighbours(t, a, b) for t in tensors if t.has(a) or t.has(b)):
                return a, b
    return None


def _neighbours(t: Tensor, a: str, b: str) -> bool:
    if not (t.has(a) and t.has(b)):
        return False
    pos = t.labels.index(a)
    if pos + 1 >= len(t.labels) or t.labels[pos + 1] != b:
        return False
    stride = t.value.type.stride  # type: ignore[attr-defined]
    return stride[pos] * t.sizes[pos] == stride[pos + 1]


def converted(fn: FunctionBuilder, value: Value, t: Any) -> Value:
    """`value` in scalar type `t` (a cast only where the types differ)."""
    return value if value.type is t else fn.cast(value, t)


def divisor(fn: FunctionBuilder, size: int | Value, name: str | None = None) -> int | Value:
    """A dynamic size as the divisor that splits an entry's number: max(size, 1), so that no
    launch divides by 0 and the launch-bounds analysis bounds the remainder by size - 1."""
    if isinstance(size, int):
        return size
    return most(fn, size, 1, name=name)


def most(fn: FunctionBuilder, a: Any, b: Any, name: str | None = None) -> Value:
    """max(a, b) of uniform index values, as an `if` (why: `least`)."""
    return _if_less(fn, a, b, b, a, name)


def least(fn: FunctionBuilder, a: Any, b: Any, name: str | None = None) -> Value:
    """min(a, b) of uniform index values, as an `if`: the CPU runtime's vectorizer keeps an
    `if` on uniform values uniform but takes `arith.min`'s result as varying, so a loop it
    bounds ran masked (twice the instructions, measured)."""
    return _if_less(fn, a, b, a, b, name)


def _if_less(fn: FunctionBuilder, a: Any, b: Any, then: Any, otherwise: Any, name: str | None) -> Value:
    """`if a < b` yielding `then`, else `otherwise` (the launch-bounds analysis reads min and
    max in this form: index_values._min_or_max)."""
    from tinyc.builder import index

    with fn.if_(fn.lt(a, b), [index]) as branch:
        for region, value in ((branch.then, then), (branch.otherwise, otherwise)):
            with region():
                fn.yield_([value if isinstance(value, Value) else fn.constant(value, index)])
    result = branch.results[0]
    if name is not None:
        result.name = name
    return result
