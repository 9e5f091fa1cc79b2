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
