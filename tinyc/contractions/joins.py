"""Joining the batch label with its neighbour: `ik,kjb->ijb` as one long gemm.

In C order a trailing batch label `b` is the fastest mode, and the label before
it (`j` in `kjb`) often follows it in memory in every tensor that holds either:
its stride is b's size times b's stride. Then the pair is one mode of n_j·n_b
elements, and the contraction is `ik,kZ->iZ` with Z = (j, b): a shared operand
times one long matrix, which the lane mapping (lanes.py) streams with unit-stride
loads and stores, instead of a pass over the chunk per register block of j.
NumPy's tensordot does the same with a reshape.

Measured (tinyc.einsum, the joined kernel against the unjoined one in one process,
interleaved, C order, batches 2,000 and 20,000): `ik,kjb->ijb` 1.1x and 1.4x faster,
`ijkb,li->ljkb` (j, k and b joined) 1.05x and 1.2x, `ij,jk,kl,lmb->imb` 1.0x and
1.9x, `ijab,jkab->ikab` 1.3x and 2.3x; a reduction `ikb->kb` (f64, mixed layout)
0.9x and 1.0x.

`join_batch` rewrites the layouts of an analysis: the joined label is named by
its parts in the user's order (`jb`), so a description of the plan reads in the
user's labels; `joined` maps it to its parts. It joins only where it is exact
for this call's strides (the key then differs from an unjoined layout's, so a
kernel never sees a layout it was not built for).
"""

from __future__ import annotations

from dataclasses import dataclass

from tinyc.contractions.layout import Layout


@dataclass
class Joined:
    """Layouts with the batch label joined to its neighbours, and what was joined."""

    inputs: list[Layout]
    output: Layout
    dynamic: frozenset[str]
    sizes: dict[str, int]
    parts: dict[str, tuple[str, ...]]   # joined label -> the user's labels, slowest first


def join_batch(inputs: list[Layout], output: Layout, dynamic: frozenset[str],
               sizes: dict[str, int]) -> Joined:
    """Join the single batch label, while it is the output's stride-1 mode, with the label
    after it in memory wherever every tensor that holds one holds both, contiguously."""
    found = Joined(list(inputs), output, dynamic, dict(sizes), {})
    if len(dynamic) != 1:
        return found
    (batch,) = dynamic
    if (not batch.isascii() or not batch.isalpha() or batch not in output.labels
            or output.stride_of(batch) != 1 or sizes[batch] < 2):
        return found
    while True:
        tensors = [*found.inputs, found.output]
        outer = _next_label(tensors, batch)
        if outer is None:
            return found
        name = "".join(found.parts.get(outer, (outer,)) + found.parts.get(batch, (batch,)))
        if name in found.sizes:   # (every label of a layout has a size)
            return found
        found.inputs = [_joined(t, batch, outer, name) for t in found.inputs]
        found.output = _joined(found.output, batch, outer, name)
        found.sizes[name] = found.sizes.pop(outer) * found.sizes.pop(batch)
        found.parts[name] = found.parts.pop(outer, (outer,)) + found.parts.pop(batch, (batch,))
        found.dynamic = frozenset([name])
        batch = name


def _next_label(tensors: list[Layout], batch: str) -> str | None:
    """The label every holder of `batch` has right after it, contiguously, held by no other
    tensor; None if there is none."""
    holders = [t for t in tensors if batch in t.labels]
    after = set()
    for t in holders:
        p = t.labels.index(batch)
        if p + 1 == len(t.labels) or t.strides[p + 1] != t.shape[p] * t.strides[p]:
            return None
        after.add(t.labels[p + 1])
    if len(after) != 1:
        return None
    (outer,) = after
    if not outer.isascii() or not outer.isalpha() or any(outer in t.labels and batch not in t.labels
                                                          for t in tensors):
        return None
    return outer


def _joined(t: Layout, batch: str, outer: str, name: str) -> Layout:
    """`t` with `batch` and the mode right after it (`outer`) as one mode `name`."""
    if batch not in t.labels:
        return t
    p = t.labels.index(batch)
    return Layout(t.labels[:p] + (name,) + t.labels[p + 2:],
                  t.shape[:p] + (t.shape[p] * t.shape[p + 1],) + t.shape[p + 2:],
                  t.strides[:p + 1] + t.strides[p + 2:])
