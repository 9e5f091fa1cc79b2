"""A step onto the collectives: gemm, gemv, ger, hadamard_product, axpby, sum.

For a pair X·Y → Z the labels fall into four classes:

    L = in X, Y and Z     (a batch of the pair: a loop, or the hadamard dims)
    M = in X and Z only   (rows)        N = in Y and Z only   (columns)
    K = in X and Y only   (summed)

One label of each of M, N, K becomes a matrix mode (the largest; two modes
that are neighbours with matching strides everywhere become one by `fuse`);
the rest become `for` loops around the collective: loops over L, M and N
write disjoint parts of Z, loops over K accumulate (first with beta, then
with beta = 1: a batch-reduce GEMM). Every matrix keeps its memory layout:
`.t` stands for a transpose, and a Z stored transposed swaps the roles of
X and Y (Zᵀ = Yᵀ Xᵀ), so nothing is copied.

    M, N, K  → gemm        M, K → gemv (X the matrix)    N, K → gemv (Y)
    M, N     → ger         L only → hadamard_product
    one input: permutation → axpby, reduction → sum

Other shapes (a batched dot product, scaling by a vector) return False and
take the general foreach step (direct.py).
"""

from __future__ import annotations

from typing import Any, Sequence

from tinyc.builder import FunctionBuilder
from tinyc.contractions.tensors import Env, Tensor, accumulate, fuse_neighbours, nest, view


def _pick(labels: Sequence[str], tensor: Tensor) -> str:
    """The label that becomes a matrix mode: the largest, then the fastest in `tensor`."""
    return min(labels, key=lambda label: (-tensor.size_of(label), tensor.stride_of(label)))


def emit_pair(fn: FunctionBuilder, X: Tensor, Y: Tensor, Z: Tensor, sizes: dict[str, int],
              alpha: Any, beta: Any, chunk: int | None = None) -> bool:
    """Z := alpha X·Y + beta Z with collectives; False if the shape needs the general step.
    `chunk` overrides k_chunk's rows per chunk of a gemm (the tuner's knob; 0: one gemm)."""
    if not _pair_fits(X, Y, Z):  # decided before fusing: no `fuse` is left unused
        return False
    (X, Y, Z), sizes = fuse_neighbours(fn, [X, Y, Z], sizes)
    L, M, N, K = _roles(X, Y, Z)
    if M and N and K:
        m, n, k = _pick(M, Z), _pick(N, Z), _pick(K, X)
        outer = L + [label for label in M + N if label not in (m, n)]
        inner = [label for label in K if label != k]

        def gemm(env: Env, beta_now: Any) -> None:
            x, y, z = view(fn, X, env), view(fn, Y, env), view(fn, Z, env)
            swapped, transpose_a, transpose_b = _gemm_form(x.labels, y.labels, z.labels, m, n, k)
            a, b = (y, x) if swapped else (x, y)
            fn.gemm(alpha, a.value, b.value, beta_now, z.value, transpose_a=transpose_a, transpose_b=transpose_b)

        _, transpose_a, transpose_b = _gemm_form(X.labels, Y.labels, Z.labels, m, n, k)
        is_complex = Z.value.type.element.is_complex  # type: ignore[attr-defined]
        chunk = k_chunk(sizes[k], sizes[m] * sizes[n], transpose_a and transpose_b, is_complex, chunk)
        _loops(fn, outer, inner, sizes, beta, gemm if not chunk else
               lambda env, beta_now: _in_chunks(fn, k, sizes[k], chunk, env, beta_now, gemm))
        return True
    if K and (M or N) and not (M and N):
        matrix, vector, rows = (X, Y, M) if M else (Y, X, N)
        r, k = _pick(rows, Z), _pick(K, matrix)
        outer = L + [label for label in rows if label != r]
        inner = [label for label in K if label != k]

        def gemv(env: Env, beta_now: Any) -> None:
            a, v, z = view(fn, matrix, env), view(fn, vector, env), view(fn, Z, env)
            fn.gemv(alpha, a.value, v.value, beta_now, z.value, transpose=a.labels[0] == k)

        _loops(fn, outer, inner, sizes, beta, gemv)
        return True
    if M and N and not K:
        m, n = _pick(M, Z), _pick(N, Z)
        outer = L + [label for label in M + N if label not in (m, n)]

        def ger(env: Env, beta_now: Any) -> None:
            x, y, z = view(fn, X, env), view(fn, Y, env), view(fn, Z, env)
            first, second = (x, y) if z.labels[0] == m else (y, x)
            fn.ger(alpha, first.value, second.value, beta_now, z.value)

        _loops(fn, outer, [], sizes, beta, ger)
        return True
    if L and not (M or N or K):
        dims = _hadamard_dims(X, Y, Z)
        outer = [label for label in L if label not in dims]

        def hadamard(env: Env, beta_now: Any) -> None:
            x, y, z = view(fn, X, env), view(fn, Y, env), view(fn, Z, env)
            fn.hadamard_product(alpha, x.value, y.value, beta_now, z.value)

        _loops(fn, outer, [], sizes, beta, hadamard)
        return True
    return False


def _gemm_form(x: Sequence[str], y: Sequence[str], z: Sequence[str], m: str, n: str,
               k: str) -> tuple[bool, bool, bool]:
    """(swapped, transpose_a, transpose_b) of the gemm z := x·y on matrix labels m, n, k,
    from the memory order of the labels: a z stored n-first swaps the operands (Zᵀ = Yᵀ·Xᵀ),
    an operand stored with its other label first is read transposed."""
    x0 = next(label for label in x if label in (m, k))
    y0 = next(label for label in y if label in (k, n))
    if next(label for label in z if label in (m, n)) == m:
        return False, x0 == k, y0 == n
    return True, y0 == k, x0 == m


K_CHUNK = 64
"""Rows of the summed mode per gemm when a work-group's gemm is large (k_chunk): the
operands' panels of one chunk stay in the core's L1 cache over the lowering's column
tiles, which otherwise stream the whole panel from L2 once per tile. `ij,jk->ik` 1024²
f32 in 64 x 64 tiles: 31-36 ms in one gemm, 16.8-18.9 ms in chunks of 64-256."""
K_CHUNK_OUTPUT = 32 * 32
"""The least output of a work-group's gemm (M·N) that is cut along K: a small gemm's panels
fit the cache whole, and each chunk adds a pass over the output."""


def k_chunk(summed: Any, output: Any, both_transposed: bool, is_complex: bool,
            rows: int | None = None) -> int:
    """Rows of the summed mode per gemm (0: one gemm), where it holds at least two chunks
    (static sizes only): `rows` when given (the tuner's knob), else K_CHUNK for a large
    output, never for gemm.t.t nor complex numbers. gemm.t.t ran up to 1.6x slower in
    chunks (`ij,jk->ki`, which stages op(A) once per gemm), complex64 256² 1.15-1.2x slower
    (its products are already compute-bound). gemm.n.t gains most (`ji,jk->ik` 1024² f32
    33 ms in one gemm, 18 in chunks; 512² f64 5.8 against 4.0), gemm.t.n a little
    (`ij,kj->ik` 1024² 14.0 against 12.9, 512 x 256 0.94 against 0.67; 512² f64 alike)."""
    if not isinstance(summed, int):
        return 0
    if rows is None:
        if both_transposed or is_complex or not isinstance(output, int) or output < K_CHUNK_OUTPUT:
            return 0
        rows = K_CHUNK
    return rows if rows and summed >= 2 * rows else 0


def _in_chunks(fn: FunctionBuilder, label: str, size: int, chunk: int, env: Env, beta: Any,
               body) -> None:
    """`body` over `label` in chunks of `chunk` rows (a mode of that size): the first with
    `beta`, the rest with beta = 1 (an accumulation, like `accumulate`), the short last
    chunk its own static size."""
    whole, rest = divmod(size, chunk)
    body({**env, label: (0, chunk)}, beta)
    if whole > 1:
        with fn.for_(chunk, whole * chunk, chunk) as loop:
            body({**env, label: (loop.var, chunk)}, 1)
    if rest:
        body({**env, label: (whole * chunk, rest)}, 1)


def _roles(X: Tensor, Y: Tensor, Z: Tensor) -> tuple[list[str], ...]:
    """The labels of X·Y -> Z by role: batch (L), rows (M), columns (N), summed (K)."""
    L = [label for label in Z.labels if X.has(label) and Y.has(label)]
    M = [label for label in Z.labels if X.has(label) and not Y.has(label)]
    N = [label for label in Z.labels if Y.has(label) and not X.has(label)]
    K = [label for label in X.labels if Y.has(label) and not Z.has(label)]
    return L, M, N, K


def _pair_fits(X: Tensor, Y: Tensor, Z: Tensor) -> bool:
    """Whether emit_pair has a collective for X·Y -> Z. Fusing neighbouring labels does not
    change it: fused labels are held by the same tensors as their parts."""
    if any(not (Y.has(label) or Z.has(label)) for label in X.labels) or \
            any(not (X.has(label) or Z.has(label)) for label in Y.labels):
        return False
    L, M, N, K = _roles(X, Y, Z)
    return bool((M and N) or (K and (M or N)) or (L and not (M or N or K)))


def _hadamard_dims(X: Tensor, Y: Tensor, Z: Tensor) -> tuple[str, ...]:
    """Z's first two labels when X and Y hold them in the same order, else its first."""
    if len(Z.labels) >= 2:
        pair = Z.labels[:2]
        if all([label for label in t.labels if label in pair] == list(pair) for t in (X, Y)):
            return pair
    return Z.labels[:1]


def emit_unary(fn: FunctionBuilder, X: Tensor, Z: Tensor, sizes: dict[str, int],
               alpha: Any, beta: Any) -> bool:
    """Z := alpha (X permuted / summed over the labels Z lacks) + beta Z."""
    (X, Z), sizes = fuse_neighbours(fn, [X, Z], sizes)
    summed = [label for label in X.labels if not Z.has(label)]
    if not summed:
        dims = Z.labels[:2]
        outer = [label for label in Z.labels if label not in dims]

        def axpby(env: Env, beta_now: Any) -> None:
            x, z = view(fn, X, env), view(fn, Z, env)
            fn.axpby(alpha, x.value, beta_now, z.value,
                     transpose=len(dims) == 2 and x.labels[0] != z.labels[0])

        _loops(fn, outer, [], sizes, beta, axpby)
        return True
    r = _pick(summed, X)
    inner = [label for label in summed if label != r]
    row = Z.labels[:1]
    outer = [label for label in Z.labels if label not in row]

    def total(env: Env, beta_now: Any) -> None:
        x, z = view(fn, X, env), view(fn, Z, env)
        fn.sum(alpha, x.value, beta_now, z.value, transpose=bool(row) and x.labels[0] != row[0])

    _loops(fn, outer, inner, sizes, beta, total)
    return True


def _loops(fn: FunctionBuilder, outer: Sequence[str], inner: Sequence[str], sizes: dict[str, int],
           beta: Any, body) -> None:
    """Loops over `outer` (disjoint outputs) around accumulating loops over `inner`."""
    nest(fn, list(outer), sizes, {}, lambda env: accumulate(fn, list(inner), sizes, env, beta, body))
