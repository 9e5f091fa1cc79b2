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

    def size_of(self, label: str) -> int:
        return self.shape[self.labels.index(label)]

    def stride_of(self, label: str) -> int:
        return self.strides[self.labels.index(label)]

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
           write: bool = False) -> Layout | None:
    """The memref view of an array whose dimension d holds `labels[d]`.

    Dimensions of size 1 and (for inputs) of stride 0 are dropped; repeated
    labels are merged into their diagonal. None if no valid memref fits.
    """
    if strides is None:
        return None
    dims: dict[str, list[int]] = {}
    for label, n, s in zip(labels, shape, strides):
        if n == 1:
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
