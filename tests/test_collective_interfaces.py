"""Every collective class answers every collective interface, and is named in few files.

A collective (gemm, gemv, ger, axpby, sum, cumsum, hadamard_product) declares on its class
its schedule knobs and their fixed defaults or its matmul shape, the knobs that change the
order of its additions, its NumPy meaning (shared by the reference interpreter and the
fuzz oracle), how many terms it sums and how many accumulators a tile keeps; its lowering
registers by class (`@lowers`), its evaluator is the generic one, and the builder method,
the schedule tables and the tuner's space are derived. So adding a collective touches its
class, its lowering, its evaluator (only if the generic one does not do) and tests; the
count of hand-written files under tinyc/ that name each class stays at most 5 (it was 7-10).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

import tinyc
from tinyc.compiler import check_source
from tinyc.ir.instructions import BlasInstruction, instruction_classes
from tinyc.ir.knobs import KNOB_NAMES, MatmulShape
from tinyc.passes.lowering.registry import LOWERINGS
from tinyc.reference.interpreter import run  # noqa: F401  (registers the evaluators)
from tinyc.reference.state import EVALUATORS

COLLECTIVES = [cls for cls in instruction_classes() if issubclass(cls, BlasInstruction)]
TINYC = Path(tinyc.__file__).parent
MAX_FILES = 5

EXAMPLES = {  # one instance of each collective, with static shapes (the tests name each)
    "Gemm": ("%A: memref<f32x4x3>, %B: memref<f32x5x3>, %C: memref<f32x4x5>",
             "gemm.n.t %a, %A, %B, %b, %C"),
    "Gemv": ("%A: memref<f32x3x4>, %x: memref<f32x3>, %y: memref<f32x4>", "gemv.t %a, %A, %x, %b, %y"),
    "Ger": ("%x: memref<f32x4>, %y: memref<f32x5>, %C: memref<f32x4x5>", "ger %a, %x, %y, %b, %C"),
    "Axpby": ("%A: memref<f32x3x4>, %B: memref<f32x4x3>", "axpby.t %a, %A, %b, %B"),
    "Sum": ("%A: memref<f32x3x4>, %x: memref<f32x4>", "sum.t %a, %A, %b, %x"),
    "Cumsum": ("%A: memref<f32x3x4>, %B: memref<f32x3x4>", "cumsum %a, %A, 1, %b, %B"),
    "HadamardProduct": ("%x: memref<f32x6>, %y: memref<f32x6>, %z: memref<f32x6>",
                        "hadamard_product %a, %x, %y, %b, %z"),
}


def instance(cls: type[BlasInstruction]) -> BlasInstruction:
    params, body = EXAMPLES[cls.__name__]
    fn = check_source(f"func @k(%a: f32, %b: f32, {params}) {{\n  {body}\n}}\n")["k"]
    [inst] = [i for i in fn.walk() if isinstance(i, cls)]
    return inst


def _own(cls: type, name: str) -> bool:
    below = cls.__mro__[:cls.__mro__.index(BlasInstruction)]
    return any(name in vars(c) for c in below)


def test_every_collective_has_an_example():
    assert sorted(EXAMPLES) == sorted(cls.__name__ for cls in COLLECTIVES)


@pytest.mark.parametrize("cls", COLLECTIVES, ids=lambda c: c.__name__)
def test_knobs_and_their_defaults(cls):
    """The knobs every collective has, first; each candidate inside its range; defaults
    fixed on the class and inside the ranges, or derived from a matmul shape."""
    assert _own(cls, "knobs") and tuple(cls.knobs)[:4] == KNOB_NAMES
    for knob in cls.knobs.values():
        assert knob.space and all(knob.range.problem(v) is None for v in knob.space), knob.name
    assert set(cls.order_changing) <= set(cls.knobs)
    inst = instance(cls)
    shape = inst.matmul()
    if cls.fixed_defaults is None:
        assert isinstance(shape, MatmulShape), "no fixed defaults and no matmul shape to derive them"
    else:
        assert shape is None
        assert set(cls.fixed_defaults) == set(cls.knobs)
        assert all(cls.knobs[k].problem(v) is None for k, v in cls.fixed_defaults.items())
    assert inst.accumulators([2, 3]) >= 1


@pytest.mark.parametrize("cls", COLLECTIVES, ids=lambda c: c.__name__)
def test_lowering_evaluator_and_meaning(cls):
    assert cls in LOWERINGS and cls in EVALUATORS
    assert _own(cls, "evaluate") and _own(cls, "term_flops")


@pytest.mark.parametrize("cls", COLLECTIVES, ids=lambda c: c.__name__)
def test_the_meaning_is_multilinear_with_non_negative_coefficients(cls):
    """The oracle bounds the terms by evaluate(|inputs|); that needs |X(x)| <= X(|x|)."""
    inst = instance(cls)
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(v.type.shape) for v in inst.inputs]
    value = np.asarray(inst.evaluate(inputs))
    bound = np.asarray(inst.evaluate([np.abs(x) for x in inputs]))
    assert value.shape == tuple(inst.output.type.shape)
    assert (np.abs(value) <= bound + 1e-12).all()
    doubled = np.asarray(inst.evaluate([2 * inputs[0], *inputs[1:]]))
    np.testing.assert_allclose(doubled, 2 * value)  # linear in each input
    assert 1 <= inst.summed_terms([x.shape for x in inputs]) <= max(x.size for x in inputs)


def files_naming(name: str) -> list[str]:
    """Hand-written modules under tinyc/ whose code (not strings or comments) names `name`."""
    found = []
    for path in sorted(TINYC.rglob("*.py")):
        text = path.read_text()
        if "Generated -- do not edit" in text[:2000]:
            continue
        for node in ast.walk(ast.parse(text)):
            named = ((isinstance(node, ast.Name) and node.id == name)
                     or (isinstance(node, ast.Attribute) and node.attr == name)
                     or (isinstance(node, ast.alias) and node.name == name)
                     or (isinstance(node, ast.ClassDef) and node.name == name))
            if named:
                found.append(str(path.relative_to(TINYC.parent)))
                break
    return found


@pytest.mark.parametrize("cls", COLLECTIVES, ids=lambda c: c.__name__)
def test_few_files_name_each_collective(cls):
    found = files_naming(cls.__name__)
    assert str(Path(inspect.getsourcefile(cls)).relative_to(TINYC.parent)) in found  # its own module
    assert len(found) <= MAX_FILES, found


def test_the_count_sees_a_name_in_code_only(tmp_path):
    assert files_naming("Gemm")  # (it finds the class)
    assert files_naming("NoSuchInstruction") == []
