"""Helpers for reference-interpreter tests: build checked IR from text and run it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from tinyc.ir.core import Function
from tinyc.parser import parse
from tinyc.ir.verifier import verify
from tinyc.reference import run


# The spec's sample: D := alpha·A·Bᵀ·C + D over a group of A (grammar-conforming spelling).
FUSED = (Path(__file__).resolve().parents[2] / "samples" / "fused_kernel.ir").read_text()


def kernel(text: str, name: str | None = None) -> Function:
    """The checked function `name` (default: the only one) of `text`."""
    program = parse(text, "test.ir")
    verify(program)
    return program[name] if name else program.functions[0]


def run_text(text: str, args: Sequence[Any], batch: int = 1, **kwargs: Any) -> None:
    run(kernel(text), args, batch, **kwargs)


def fortran(shape: Sequence[int], dtype: Any = np.float32, seed: int = 0,
            low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """A random column-major array (integers for integer dtypes)."""
    rng = np.random.default_rng(seed)
    if np.issubdtype(np.dtype(dtype), np.integer):
        data = rng.integers(-50, 50, size=shape)
    elif np.issubdtype(np.dtype(dtype), np.complexfloating):
        data = rng.uniform(low, high, size=shape) + 1j * rng.uniform(low, high, size=shape)
    else:
        data = rng.uniform(low, high, size=shape)
    return np.asfortranarray(data.astype(dtype))
