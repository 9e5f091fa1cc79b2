"""The contraction corpus: einsum cases by family, with shapes and dtypes.

Sizes differ per label (so a transposed mode cannot pass by accident) and
some exceed a gemm tile (17, 33) to cover edge tiles. Every case is checked
against np.einsum by test_einsum_corpus.py.
"""

from __future__ import annotations

import itertools

import numpy as np

SIZES = {"a": 2, "b": 5, "c": 3, "i": 3, "j": 4, "k": 6, "l": 2, "m": 7, "n": 5, "I": 4}
BIG = {"b": 3, "i": 17, "j": 9, "k": 33}


def shapes(subscripts: str, sizes: dict[str, int] = SIZES) -> list[tuple[int, ...]]:
    """Operand shapes for `subscripts` from the size of each label."""
    inputs = subscripts.split("->")[0].split(",")
    return [tuple(sizes[c] for c in term) for term in inputs]


def _batched_matmuls() -> list[str]:
    """C = A·B with every transpose of A, B and C, the batch label first, middle or last."""
    cases = []
    for ta, tb, tc in itertools.product((False, True), repeat=3):
        a = "ji" if ta else "ij"
        b = "kj" if tb else "jk"
        c = "ki" if tc else "ik"
        for pos in (0, 1, 2):
            ins = [t[:pos] + "b" + t[pos:] for t in (a, b, c)]
            cases.append(f"{ins[0]},{ins[1]}->{ins[2]}")
    return cases


BATCHED_MATMUL = _batched_matmuls()  # 24
SHARED_OPERAND = [  # one operand without the batch label
    "bij,jk->bik", "ij,bjk->bik", "bij,kj->bik", "ijb,jk->ikb", "ij,jkb->ikb",
    "bji,jk->bki", "jk,bij->bik", "ibj,jk->ibk",
]
CHAINS = [  # three and four operands
    "ij,jk,kl->il", "bij,jk,kl->bil", "ik,jk,jl->il", "bik,jk,jl->bil", "ikb,jk,jl->ilb",
    "kl,blm,nm->bkn", "ij,jk,kl,lm->im", "bij,bjk,bkl->bil", "bi,bij,bj->b", "ij,bjk,kl,blm->bim",
]
TTM = [  # tensor-times-matrix on 3-D tensors, every mode
    "ijk,li->ljk", "ijk,lj->ilk", "ijk,lk->ijl", "ijk,il->ljk", "ijk,jl->ilk", "ijk,kl->ijl",
    "bijk,lj->bilk",
]
OUTER = ["i,j->ij", "bi,bj->bij", "ij,k->ijk", "i,j,k->ijk", "i,j->ji", "bi,bj->bji"]
REDUCTIONS = [
    "ij->i", "ij->j", "ijk->", "bij->b", "ii->", "ii->i", "bii->bi", "ijk->ik", "ijk->kj", "i->",
    "bij,bij->b", "ij,ij->",
]
PERMUTATIONS = ["ij->ji", "ijk->kji", "bij->bji", "ijk->jki", "ijk->ikj", "i->i"]
TWO_BATCH = ["cbij,cbjk->cbik", "bicj,cbjk->cbik", "ij,cbjk->cbik", "cbi,cbi->cb", "bcij,jk->cbik"]
ELEMENTWISE = ["ij,ij->ij", "bij,bij->bij", "ij,ji->ij", "i,i->i", "bi,b->bi", "ij,j->ij", "bij,bi->bij"]
MATVEC = ["ij,j->i", "ij,i->j", "bij,bj->bi", "bij,bi->bj", "i,ij->j", "i,i->"]
IMPLICIT = ["ij,jk", "ba,ab", "bij,bjk", "iI,Ij", "ii", "i,i", "ij,kl"]

FAMILIES = {
    "batched_matmul": BATCHED_MATMUL, "shared_operand": SHARED_OPERAND, "chain": CHAINS,
    "ttm": TTM, "outer": OUTER, "reduction": REDUCTIONS, "permutation": PERMUTATIONS,
    "two_batch": TWO_BATCH, "elementwise": ELEMENTWISE, "matvec": MATVEC, "implicit": IMPLICIT,
}

COMPLEX = ["bij,bjk->bik", "bji,bkj->bki", "ij,jk,kl->il", "ijk,lj->ilk", "bi,bi->b", "ij->ji",
           "i,j->ij", "kl,blm,nm->bkn"]
LARGE = ["bij,bjk->bik", "bji,bjk->bik", "bij,bkj->bki", "ij,jk->ik", "bij,jk->bik", "ik,jk->ij"]


def cases() -> list[tuple[str, str, tuple, str]]:
    """(id, subscripts, shapes, dtype) for the whole corpus."""
    out = []
    for family, items in FAMILIES.items():
        for k, sub in enumerate(items):
            dtype = "float32" if k % 3 else "float64"
            out.append((f"{family}-{sub}", sub, tuple(shapes(sub)), dtype))
    for sub in COMPLEX:
        for dtype in ("complex64", "complex128"):
            out.append((f"complex-{sub}-{dtype}", sub, tuple(shapes(sub)), dtype))
    for sub in LARGE:
        out.append((f"large-{sub}", sub, tuple(shapes(sub, BIG)), "float32"))
    return out


def random_operand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def tolerance(dtype: str) -> float:
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
