"""The order of pairwise contractions, chosen by flop count as opt_einsum does.

A step contracts two tensors X and Y into one whose labels are those of
X ∪ Y still needed (by the output or a tensor not yet contracted); it
costs the product of the sizes of X ∪ Y (multiply-adds). Up to
`OPTIMAL_UP_TO` tensors every order is tried (the cheapest total wins;
ties go to the smaller largest intermediate, then to the first found);
beyond that a greedy choice takes the cheapest step each time.

The path is in opt_einsum's format: a list of (i, j) positions in the
current list of tensors; the result goes to the end of the list.

The sizes are those a work-group sees: with a tiled batch label (plan.py)
a product of shared operands is counted once per tile while the batched
steps count the whole tile, so a chain of shared matrices is multiplied
together first, as NumPy's optimizer does with one BLAS call before the
batched product.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

OPTIMAL_UP_TO = 6


def step_labels(x: frozenset[str], y: frozenset[str], others: Sequence[frozenset[str]],
                keep: frozenset[str]) -> frozenset[str]:
    """Labels of the result of contracting x and y."""
    needed = set(keep)
    for o in others:
        needed |= o
    return frozenset((x | y) & needed)


def _volume(labels: frozenset[str], sizes: dict[str, int]) -> int:
    return math.prod(sizes[label] for label in labels)


def contraction_path(tensors: Sequence[frozenset[str]], keep: frozenset[str],
                     sizes: dict[str, int]) -> list[tuple[int, int]]:
    """The pairwise order for `tensors` (label sets) producing `keep`."""
    if len(tensors) < 2:
        return []
    if len(tensors) <= OPTIMAL_UP_TO:
        return _optimal(tuple(tensors), keep, sizes)
    return _greedy(list(tensors), keep, sizes)


def _optimal(tensors: tuple[frozenset[str], ...], keep: frozenset[str],
             sizes: dict[str, int]) -> list[tuple[int, int]]:
    @lru_cache(maxsize=None)
    def best(current: tuple[frozenset[str], ...]) -> tuple[int, int, tuple[tuple[int, int], ...]]:
        if len(current) == 1:
            return 0, 0, ()
        found = None
        for i in range(len(current)):
            for j in range(i + 1, len(current)):
                others = current[:i] + current[i + 1:j] + current[j + 1:]
                result = step_labels(current[i], current[j], others, keep)
                cost = _volume(current[i] | current[j], sizes)
                rest_cost, rest_peak, rest_path = best(others + (result,))
                total = (cost + rest_cost, max(_volume(result, sizes), rest_peak))
                if found is None or total < found[:2]:
                    found = (*total, ((i, j),) + rest_path)
        assert found is not None
        return found

    return list(best(tensors)[2])


def _greedy(tensors: list[frozenset[str]], keep: frozenset[str],
            sizes: dict[str, int]) -> list[tuple[int, int]]:
    path = []
    while len(tensors) > 1:
        choice = None
        for i in range(len(tensors)):
            for j in range(i + 1, len(tensors)):
                others = tensors[:i] + tensors[i + 1:j] + tensors[j + 1:]
                result = step_labels(tensors[i], tensors[j], others, keep)
                key = (_volume(tensors[i] | tensors[j], sizes), _volume(result, sizes))
                if choice is None or key < choice[0]:
                    choice = (key, i, j, result)
        assert choice is not None
        _, i, j, result = choice
        path.append((i, j))
        tensors = tensors[:i] + tensors[i + 1:j] + tensors[j + 1:] + [result]
    return path
