"""Each collective's `size_rules()` says exactly what its verifier checks on static shapes.

Bounds-checked launches check the same rules on `?` sizes at run time and
`tinyc run` makes related sizes agree by them, so they must not drift from
the verifier: for random static shapes, the verifier accepts a collective
if and only if every rule holds.
"""

from __future__ import annotations

import random

import pytest

from tinyc.compiler import check_source
from tinyc.diagnostics import CompilationError
from tinyc.ir.instructions import BlasInstruction

TEMPLATES = {  # instruction text, operand orders (A, B, C...)
    "gemm.n.n": ("gemm.n.n %a, %X0, %X1, %a, %X2", (2, 2, 2)),
    "gemm.t.n": ("gemm.t.n %a, %X0, %X1, %a, %X2", (2, 2, 2)),
    "gemm.n.t": ("gemm.n.t %a, %X0, %X1, %a, %X2", (2, 2, 2)),
    "gemm.t.t": ("gemm.t.t %a, %X0, %X1, %a, %X2", (2, 2, 2)),
    "gemv.n": ("gemv.n %a, %X0, %X1, %a, %X2", (2, 1, 1)),
    "gemv.t": ("gemv.t %a, %X0, %X1, %a, %X2", (2, 1, 1)),
    "ger": ("ger %a, %X0, %X1, %a, %X2", (1, 1, 2)),
    "axpby.n": ("axpby.n %a, %X0, %a, %X1", (2, 2)),
    "axpby.t": ("axpby.t %a, %X0, %a, %X1", (2, 2)),
    "axpby.t1": ("axpby.t %a, %X0, %a, %X1", (1, 1)),
    "sum.n": ("sum.n %a, %X0, %a, %X1", (2, 1)),
    "sum.t": ("sum.t %a, %X0, %a, %X1", (2, 1)),
    "cumsum": ("cumsum %a, %X0, 1, %a, %X1", (2, 2)),
    "hadamard": ("hadamard_product %a, %X0, %X1, %a, %X2", (2, 2, 2)),
}


def program(template: str, shapes: list[tuple[int, ...]]) -> str:
    args = ", ".join(f"%X{k}: memref<f32x{'x'.join(map(str, s))}>" for k, s in enumerate(shapes))
    return f"func @k(%a: f32, {args}) {{\n  {template}\n}}\n"


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_rules_agree_with_the_verifier(name):
    template, orders = TEMPLATES[name]
    rng = random.Random(name)
    accepted = rejected = 0
    for _ in range(40):
        shapes = [tuple(rng.choice((2, 3)) for _ in range(order)) for order in orders]
        text = program(template, shapes)
        try:
            fn = check_source(text).functions[0]
            valid = True
        except CompilationError:
            valid = False
            fn = None
        if fn is None:  # rules from a variant with `?` sizes (always accepted)
            dynamic = program(template, [tuple("?" for _ in s) for s in shapes])
            fn = check_source(dynamic).functions[0]
        inst = next(i for i in fn.walk() if isinstance(i, BlasInstruction))
        rules = inst.size_rules()
        holds = all(shapes[l[0] - 1][l[1]] == shapes[r[0] - 1][r[1]]
                    for l, r in ((_operand(rule.left, orders), _operand(rule.right, orders))
                                 for rule in rules))
        assert holds == valid, (text, [r.what for r in rules])
        accepted += valid
        rejected += not valid
    assert accepted and rejected


def _operand(position: tuple[int, int], orders) -> tuple[int, int]:
    """(1-based memref number, mode) of an operand index in alpha, X..., beta, out."""
    index, mode = position
    count = len(orders)
    number = index if index <= count - 1 else count  # the output is the last memref
    return number, mode
