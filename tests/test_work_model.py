"""The work model behind `tinyc bench`, against flops and bytes counted by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tinyc.cli.bench import count_work
from tinyc.compiler import compile_to_spirv
from tinyc.parser import parse

FUSED = Path(__file__).resolve().parents[1] / "samples" / "fused_kernel.ir"


def test_fused_kernel_flops_and_minimum_traffic():
    source = FUSED.read_text()
    info = compile_to_spirv(source, str(FUSED)).kernels["fused_kernel"]
    batch = 10
    rng = np.random.default_rng(1)
    A = [np.asfortranarray(rng.random((16, 8), dtype=np.float32)) for _ in range(batch)]
    B = np.asfortranarray(rng.random((8, 8), dtype=np.float32))
    C = np.asfortranarray(rng.random((8, 16), dtype=np.float32))
    D = np.zeros((16, 16, batch), dtype=np.float32, order="F")
    work = count_work(parse(source)["fused_kernel"], info, [np.float32(0.5), A, B, C, D], batch)
    # tmp = A·Bᵀ (16×8×8), then D += alpha·tmp·C (16×16×8): 2·M·N·K each.
    assert work.flops == batch * (2 * 16 * 8 * 8 + 2 * 16 * 16 * 8)
    # A, B and C read once; D (beta = 1) read and written once.
    assert work.bytes == 4 * (batch * 16 * 8 + 8 * 8 + 8 * 16 + 2 * batch * 16 * 16)
    np.testing.assert_array_equal(D, 0)  # counting runs on copies
