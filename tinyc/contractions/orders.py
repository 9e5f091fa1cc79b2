"""The mode order of intermediates: the one that needs the fewest transposes.

Every matrix keeps its layout and `.t` absorbs a transpose (collectives.py),
but a transposed A operand of gemm costs a copy through local memory, and a
transposed B a strided read. An intermediate's layout is free to choose, so
each intermediate gets the order of its two label groups (the producing
step's rows, then columns, or the other way round) that minimises the
transposes of the step that makes it plus the step that reads it:
weighted 2 for A, 1 for B.
"""

from __future__ import annotations

from typing import Sequence

Labels = tuple[str, ...]


def _pick(group: Sequence[str], holder: Labels, sizes: dict[str, int]) -> str:
    """As collectives._pick on labels alone: the largest, then the fastest in `holder`."""
    return min(group, key=lambda label: (-sizes[label], holder.index(label)))


def gemm_transposes(X: Labels, Y: Labels, Z: Labels | None, sizes: dict[str, int]) -> int:
    """Weighted transposes of the gemm X·Y → Z (the best orientation when Z is not laid out yet);
    0 for steps that are not a gemm."""
    xs, ys = set(X), set(Y)
    zs = set(Z) if Z is not None else (xs ^ ys)
    M = [label for label in X if label in zs and label not in ys]
    N = [label for label in Y if label in zs and label not in xs]
    K = [label for label in X if label in ys and label not in zs]
    if not (M and N and K):
        return 0
    m, n, k = _pick(M, X, sizes), _pick(N, Y, sizes), _pick(K, X, sizes)
    x0 = next(label for label in X if label in (m, k))
    y0 = next(label for label in Y if label in (k, n))
    rows_first = 2 * (x0 == k) + (y0 == n)       # Z = (m, n): A = X, B = Y
    columns_first = 2 * (y0 == k) + (x0 == m)    # Z = (n, m): A = Y, B = X
    if Z is None:
        return min(rows_first, columns_first)
    z0 = next(label for label in Z if label in (m, n))
    return rows_first if z0 == m else columns_first


def candidate_orders(labels: frozenset[str], inputs: Sequence[Labels]) -> list[Labels]:
    """Orders worth trying for the result of a step over `inputs`."""
    if len(inputs) != 2:
        return [tuple(label for label in inputs[0] if label in labels)] if inputs else [tuple(sorted(labels))]
    X, Y = inputs
    rows = tuple(label for label in X if label in labels and label not in Y)
    columns = tuple(label for label in Y if label in labels and label not in X)
    batch = tuple(label for label in X if label in labels and label in Y)
    return [rows + columns + batch, columns + rows + batch]


def choose_order(labels: frozenset[str], inputs: Sequence[Labels], consumer_other: Labels | None,
                 consumer_out: Labels | None, sizes: dict[str, int]) -> Labels:
    """The candidate order of an intermediate with the fewest weighted transposes."""
    best, best_cost = None, None
    for order in candidate_orders(labels, inputs):
        cost = gemm_transposes(inputs[0], inputs[1], order, sizes) if len(inputs) == 2 else 0
        if consumer_other is not None:
            cost += min(gemm_transposes(order, consumer_other, consumer_out, sizes),
                        gemm_transposes(consumer_other, order, consumer_out, sizes))
        if best_cost is None or cost < best_cost:
            best, best_cost = order, cost
    assert best is not None
    return best
