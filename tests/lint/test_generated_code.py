"""The programs tinyc writes itself are warning-free: the contraction kernels of the whole
einsum corpus (plain and general, with and without an epilogue), the recipes, the samples.

A warning in generated code would be a false alarm the user cannot act on.
"""

from __future__ import annotations

import sys
import warnings as python_warnings
from pathlib import Path

import numpy as np
import pytest

from tinyc.compiler import CompilationWarning, check_source
from tinyc.contractions.compiled import Signature, analyse, kernel_spec
from tinyc.contractions.emit import build_kernel

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "contract"))
from corpus import cases  # noqa: E402

SAMPLES = sorted((HERE.parents[1] / "samples").glob("*.ir"))


def _signature(shape: tuple[int, ...], dtype: str) -> Signature:
    d = np.dtype(dtype)
    strides, step = [], d.itemsize
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(n, 1)
    return Signature("numpy", d, tuple(shape), tuple(strides))


def _sources():
    for case, subscripts, shapes, dtype in cases():
        for epilogue in (None, "relu"):
            if epilogue and "complex" in dtype:
                continue
            analysis = analyse(subscripts, [_signature(s, dtype) for s in shapes], None, None,
                               epilogue)
            if analysis.empty:
                continue
            for plain in (False, True):
                yield f"{case}-{epilogue}-{plain}", build_kernel(
                    kernel_spec(analysis, epilogue, plain)).checked_source()


def test_every_einsum_kernel_of_the_corpus_is_warning_free():
    checked = 0
    for name, source in _sources():
        found = check_source(source, name).warnings
        assert found == [], f"{name}:\n" + "\n".join(map(str, found)) + "\n" + source
        checked += 1
    assert checked > 400


@pytest.mark.parametrize("subscripts, shapes, order", [
    ("ikb,kjb->ijb", [(16, 8, 20000), (8, 12, 20000)], "C"),        # lanes, register blocks
    ("ijb,jb->ib", [(16, 16, 20000), (16, 20000)], "C"),            # lanes, the sum in passes
    ("kl,lmb,mn->knb", [(20, 20), (20, 9, 20000), (9, 9)], "C"),     # lanes, per-entry slots
    ("ij,jk,kl,lmb->imb", [(32, 24), (24, 16), (16, 12), (12, 8, 20000)], "C"),   # shared first
    ("ijb->b", [(16, 12, 20000)], "C"),                             # streamed reduction
    ("ijab,jkab->ikab", [(8, 8, 100, 200), (8, 8, 100, 200)], "C"),  # two batch modes
    ("bij,bkj->bik", [(20000, 16, 8), (20000, 12, 8)], "C"),        # entries on the group id
    ("ikb,kj->ijb", [(16, 8, 20000), (8, 12)], "F"),                # tiles of the batch
])
def test_benchmark_sized_kernels_are_warning_free(subscripts, shapes, order):
    for plain in (False, True):
        sigs = []
        for shape in shapes:
            a = np.empty(shape, np.float32, order=order)
            sigs.append(Signature("numpy", a.dtype, a.shape, a.strides))
        analysis = analyse(subscripts, sigs, None, None, None)
        source = build_kernel(kernel_spec(analysis, None, plain)).checked_source()
        assert check_source(source, subscripts).warnings == [], source


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_samples_are_warning_free(sample: Path):
    assert check_source(sample.read_text(), sample.name).warnings == []


@pytest.mark.parametrize("recipe, arguments", [
    ("small_gemm_batched", ("f32", "n", "n", 8, 8, 8, 8, 64, 8, 64, 8, 64)),
    ("small_gemm_batched", ("f64", "t", "n", 16, 4, 8, 8, 128, 16, 128, 16, 64)),
    ("small_gemm_batched", ("c32", "n", "t", 4, 4, 4, 4, 16, 4, 16, 4, 16)),
    ("tall_and_skinny", ("f32", 8, 8)),
    ("tall_and_skinny", ("f64", 4, 16, 32)),
    ("tall_and_skinny", ("f32", 8, 8, None, 100)),      # static M below the block
    ("tall_and_skinny", ("f32", 3, 5, 16, 100)),        # static M, a remainder block
    ("tall_and_skinny", ("f32", 3, 5, 16, 96)),         # static M, whole blocks
])
def test_recipes_are_warning_free(recipe: str, arguments: tuple):
    from tinyc import recipes

    with python_warnings.catch_warnings():
        python_warnings.simplefilter("error", CompilationWarning)
        made = getattr(recipes, recipe)(*arguments)
    assert made.program.warnings == []
    assert check_source(made.source).warnings == []


def _statement_sources():
    """Kernels of `tinyc.contract([...statements...])`: the DG examples, the statement forms the
    tests use (blocks of small entries, global scratch, the target read by its own right-hand
    side, broadcasts, no batch), random programs; in the default layout and with the batch mode
    fastest in memory (C order: `?` strides)."""
    from benchmarks.statements import EXAMPLES
    from test_statements import random_program
    from tinyc.contractions.statement_check import check, check_shapes
    from tinyc.contractions.statement_kernel import _source, generate
    from tinyc.contractions.statement_layout import derive
    from tinyc.contractions.statements import parse

    programs = [(name, statements, shapes) for name, (statements, shapes, _) in EXAMPLES.items()]
    programs += [
        ("block", ["Y[i,j,e] = X[i,k,e] * M[k,j] + s * X[i,j,e]"], {"X": (4, 4, None), "M": (4, 4), "Y": (4, 4, None)}),
        ("scratch", ["S[k,m,d] = K[d,k,l] * K[d,l,m]", "Y[k,q,e] = S[k,m,d] * X[m,q,e]"],
         {"K": (3, 64, 64), "X": (64, 5, None), "Y": (64, 5, None)}),
        ("in place", ["X[i,q,e] = 0.5 * X[i,q,e] + h * M[i,k] * P[k,q,e]", "P[i,q,e] = M[i,k] * P[k,q,e]"],
         {"X": (6, 4, None), "M": (6, 6), "P": (6, 4, None)}),
        ("broadcast", ["Y[i,q,e] = X[i,q,e] + v[q]", "s[q,e] = X[i,q,e]", "d[e] = X[i,e2] * X[i,e2]"],
         {"X": (7, 3, None), "v": (3,), "Y": (7, 3, None), "s": (3, None), "d": (None,)}),
        ("no batch", ["C[i,j] = A[i,k] * B[k,j]"], {"A": (5, 5), "B": (5, 3), "C": (5, 3)}),
    ]
    rng = np.random.default_rng(77)
    programs += [(f"random {k}", *random_program(rng)[:2]) for k in range(12)]
    for name, statements, shapes in programs:
        try:
            yield name, generate(statements, shapes, "f64")
        except ValueError:   # a random program the checks refuse: nothing to generate
            continue
        checked_shapes = check_shapes(shapes)
        checked = check(parse(statements), checked_shapes)
        layouts = {}
        for tensor in checked.arguments:   # C order, the batch (if any) as it falls
            shape = [2 if n is None else n for n in checked_shapes[tensor]]
            strides, step = [], 1
            for n in reversed(shape):
                strides.insert(0, step)
                step *= n
            layouts[tensor] = derive(checked_shapes[tensor], shape, strides)
        yield f"{name} (C order)", _source(checked, checked_shapes, layouts, np.dtype(np.float32))[0]


def test_every_statements_kernel_is_warning_free():
    checked = 0
    for name, source in _statement_sources():
        found = check_source(source, name).warnings
        assert found == [], f"{name}:\n" + "\n".join(map(str, found)) + "\n" + source
        checked += 1
    assert checked > 20
