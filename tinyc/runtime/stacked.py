"""A group given as one stacked array holds its members along its *last* mode (member g is
`array[..., g]`, so a Fortran-order (16, 8, N) array is N column-major 16×8 members).

NumPy code often stacks matrices batch-first, `(N, rows, cols)`. Such an array does not fit
(too few members along the last mode, or members of the wrong shape); `batch_first` turns the
refusal into one that says where the members go and how to pass the array.
"""

from __future__ import annotations

from tinyc.diagnostics import LaunchError
from tinyc.ir.types import DYNAMIC, MemrefType


def looks_batch_first(shape: tuple[int, ...], memref: MemrefType, batch: int) -> bool:
    """An array that does not fit with its members along the last mode, but would with
    them along the first."""
    def fits(dims: tuple[int, ...]) -> bool:
        return len(dims) == memref.order and all(m in (DYNAMIC, n) for m, n in zip(memref.shape, dims))

    return len(shape) == memref.order + 1 and fits(shape[1:]) and (not fits(shape[:-1]) or shape[-1] < batch)


def batch_first(error: LaunchError, shape: tuple[int, ...] | None, memref: MemrefType, batch: int,
                name: str) -> LaunchError:
    """`error` about a stacked array of `shape` (None: not stacked), with the hint when the
    array looks batch-first; the error itself otherwise."""
    if shape is None or not looks_batch_first(shape, memref, batch):
        return error
    moved = shape[1:] + shape[:1]
    message = str(error).removeprefix(f"argument '{name}': ")
    return LaunchError(f"{message} (a stacked array holds its members along its last mode: member g is "
                       f"array[..., g]; this {shape} array looks batch-first, with its {shape[0]} members "
                       f"along the first mode: pass np.asfortranarray(np.moveaxis(array, 0, -1)), a "
                       f"{moved} array with column-major members, or a list of its members)", argument=name)
