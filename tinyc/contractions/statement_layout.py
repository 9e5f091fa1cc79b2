"""How a tensor argument of a statements kernel lies in memory: a memref with a `?` batch.

A kernel is compiled for one *layout* of each tensor argument: the order of
its modes in memory (fastest first) and the strides of the modes up to and
including the batch mode, which do not depend on the batch size. Strides of
the modes slower than the batch mode grow with it, so they are `?`. Hence
one compile serves every batch size of arrays laid out alike:

    shape (56, 9, None), Fortran order   memref<f64x56x9x?>               (all static)
    shape (None, 56, 9), C order         memref<f64x9x56x?>               (all static)
    shape (56, 9, None), C order         memref<f64x?x9x56,strided<1,?,?>> (the batch fastest)

The default layout (what `contract` compiles first) keeps each batch
entry's data together: Fortran order when the batch mode is last, else C
order. Arrays of another layout get a kernel of their own, made on first
use (`derive`), so any strided array works without a copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from tinyc.contractions.statement_check import BATCH


@dataclass(frozen=True)
class ArgLayout:
    """modes in memory order (declared mode numbers, fastest first) and their strides
    in elements (None: `?`, given by the array at each call)."""

    order: tuple[int, ...]
    strides: tuple[int | None, ...]

    def fits(self, shape: Sequence[int], strides: Sequence[int]) -> bool:
        """Can an array of this shape and element strides be passed as this memref?"""
        for mode, fixed in zip(self.order, self.strides):
            if fixed is not None and shape[mode] > 1 and strides[mode] != fixed:
                return False
        ordered = [(shape[m], strides[m]) for m in self.order if shape[m] > 1]
        return all(s >= 1 for _, s in ordered) and all(
            ordered[i - 1][0] * ordered[i - 1][1] <= ordered[i][1] for i in range(1, len(ordered)))


def default_layout(shape: Sequence[int | None]) -> ArgLayout:
    """Each batch entry contiguous: Fortran order when the batch mode is last, else C order."""
    modes = list(range(len(shape)))
    order = modes if shape and shape[-1] is BATCH else modes[::-1]
    return _packed(shape, order)


def _packed(shape: Sequence[int | None], order: Sequence[int]) -> ArgLayout:
    strides: list[int | None] = []
    step: int | None = 1
    for mode in order:
        strides.append(step)
        step = None if step is None or shape[mode] is BATCH else step * int(shape[mode])  # type: ignore[arg-type]
    return ArgLayout(tuple(order), tuple(_dynamic_after_batch(shape, order, strides)))


def _dynamic_after_batch(shape: Sequence[int | None], order: Sequence[int],
                         strides: Sequence[int | None]) -> list[int | None]:
    """Strides of modes slower than the batch mode depend on the batch size: `?`."""
    out, seen = [], False
    for mode, stride in zip(order, strides):
        out.append(None if seen else stride)
        seen = seen or shape[mode] is BATCH
    return out


def derive(declared: Sequence[int | None], shape: Sequence[int], strides: Sequence[int]) -> ArgLayout | None:
    """The layout of an array (element strides), or None when no memref fits it
    (a negative stride, overlapping modes). Size-1 modes go last; so does a batch
    mode of size 1 (the slowest is where a batch belongs)."""
    if any(s < 0 for n, s in zip(shape, strides) if n > 1):
        return None
    modes = range(len(shape))
    order = sorted(modes, key=lambda m: (0, strides[m], m) if shape[m] > 1 else (1, declared[m] is not BATCH, m))
    fixed: list[int | None] = []
    step = 1
    for mode in order:
        fixed.append(strides[mode] if shape[mode] > 1 else step)
        step = max(step, (fixed[-1] or 1) * max(shape[mode], 1))
    layout = ArgLayout(tuple(order), tuple(_dynamic_after_batch(declared, order, fixed)))
    return layout if layout.fits(shape, strides) else None


def memref_shape(declared: Sequence[int | None], layout: ArgLayout) -> tuple[int | None, ...]:
    """Sizes in memory order (None: the batch)."""
    return tuple(declared[m] for m in layout.order)
