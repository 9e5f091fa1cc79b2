"""Operands as memrefs: which label each memref mode holds, and its size and stride.

An array of any layout is a column-major memref once its dimensions are
ordered by stride, so no operand is copied to change its layout:
C-order `(batch, i, j)` is `memref<f32xJxIxB>` with modes (j, i, batch).
On the way, dimensions the values do not depend on disappear:

  * size-1 dimensions (NumPy's broadcasting of size 1),
  * stride-0 dimensions (`np.broadcast_to`),
  * a label repeated within an operand becomes one mode whose stride is the
    sum of the strides (the diagonal, as a strided view).

`layout(...)` returns None when the strides cannot form a valid memref
(negative, overlapping, or not multiples of the element size); the caller
then copies that operand once.

**Dynamic modes.** The batch labels of a contraction are `?` modes of the
kernel (`Layout.dynamic`), so one kernel serves every batch size: their
sizes, and the strides of every mode after the first of them (which grow
with the batch), are kernel arguments. The strides before stay static.
`key()` is what a kernel depends on; `representative()` the layout the
planner sees, with the dynamic sizes at a fixed value (so a plan is a
function of the key alone).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Layout:
    """A tensor as a memref: labels, sizes and element strides, fastest mode first."""

    labels: tuple[str, ...]
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dynamic: frozenset[str] = frozenset()  # labels whose size is a `?` of the kernel

    def size_of(self, label: str) -> int:
        return self.shape[self.labels.index(label)]

    def stride_of(self, label: str) -> int:
        return self.strides[self.labels.index(label)]

    def dynamic_stride(self, pos: int) -> bool:
        """Mode `pos` comes after a dynamic mode: its stride grows with the batch."""
        return any(label in self.dynamic for label in self.labels[:pos])

    def with_dynamic(self, labels: frozenset[str]) -> "Layout":
        return Layout(self.labels, self.shape, self.strides, frozenset(labels) & frozenset(self.labels))

    def type_shape(self) -> tuple[int | None, ...]:
        """Sizes as the kernel's memref type has them (None: `?`)."""
        return tuple(None if label in self.dynamic else n for label, n in zip(self.labels, self.shape))

    def type_strides(self) -> tuple[int | None, ...]:
        return tuple(None if self.dynamic_stride(p) else s for p, s in enumerate(self.strides))

    def key(self) -> tuple:
        """What a kernel depends on: labels, static sizes and strides (dynamic ones as None)."""
        return (self.labels, self.type_shape(), self.type_strides())

    def dynamic_values(self) -> tuple[int, ...]:
        """The `?` sizes, then the `?` strides, in calling-convention order."""
        return (tuple(n for label, n in zip(self.labels, self.shape) if label in self.dynamic)
                + tuple(s for p, s in enumerate(self.strides) if self.dynamic_stride(p)))

    def representative(self, sizes: dict[str, int]) -> "Layout":
        """The layout with the dynamic labels at `sizes` and the dynamic strides packed after
        the mode before them: what the planner sees, the same for every batch size."""
        if not self.dynamic:
            return self
        shape = tuple(sizes[label] if label in self.dynamic else n for label, n in zip(self.labels, self.shape))
        strides: list[int] = []
        for p, s in enumerate(self.strides):
            strides.append(strides[-1] * shape[p - 1] if self.dynamic_stride(p) else s)
        return Layout(self.labels, shape, tuple(strides), self.dynamic)

    @property
    def extent(self) -> int:
        """Elements from the first to one past the last."""
        if any(n == 0 for n in self.shape):
            return 0
        return 1 + sum((n - 1) * s for n, s in zip(self.shape, self.strides))


def byte_strides_to_elements(strides: Sequence[int], itemsize: int) -> tuple[int, ...] | None:
    """Element strides, or None if a stride is not a multiple of the element size."""
    out = []
    for s in strides:
        q, r = divmod(int(s), itemsize)
        if r:
            return None
        out.append(q)
    return tuple(out)


def is_column_major(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """The memref rule: stride 0 of at least 1, S[i-1]*s[i-1] <= S[i]."""
    if strides and strides[0] < 1:
        return False
    return all(strides[i - 1] * shape[i - 1] <= strides[i] for i in range(1, len(shape)))


def layout(labels: Sequence[str], shape: Sequence[int], strides: Sequence[int] | None,
           write: bool = False, keep: frozenset[str] = frozenset()) -> Layout | None:
    """The memref view of an array whose dimension d holds `labels[d]`.

    Dimensions of size 1 (unless their label is in `keep`: a batch of one) and
    (for inputs) of stride 0 are dropped; repeated labels are merged into their
    diagonal. None if no valid memref fits.
    """
    if strides is None:
        return None
    dims: dict[str, list[int]] = {}
    for label, n, s in zip(labels, shape, strides):
        if n == 1 and label not in keep:
            continue
        if s == 0 and not write:
            continue
        if s < 0:
            return None
        if label in dims:
            if write:
                return None
            dims[label][1] += s
        else:
            dims[label] = [n, s]
    order = sorted(dims, key=lambda label: (dims[label][1], dims[label][0]))
    result = Layout(tuple(order), tuple(dims[label][0] for label in order),
                    tuple(dims[label][1] for label in order))
    if not is_column_major(result.shape, result.strides):
        return None
    return result


def packed(labels: Sequence[str], sizes: dict[str, int]) -> Layout:
    """A dense column-major tensor with modes in the given order."""
    strides, current = [], 1
    for label in labels:
        strides.append(current)
        current *= sizes[label]
    return Layout(tuple(labels), tuple(sizes[label] for label in labels), tuple(strides))


def c_order_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array."""
    strides, current = [], 1
    for n in reversed(shape):
        strides.append(current)
        current *= max(n, 1)
    return tuple(reversed(strides))


def f_order_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a Fortran-contiguous array."""
    strides, current = [], 1
    for n in shape:
        strides.append(current)
        current *= max(n, 1)
    return tuple(strides)
