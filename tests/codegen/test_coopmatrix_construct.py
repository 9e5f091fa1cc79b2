"""cooperative_matrix_construct (newest language): syntax, verifier, reference and device vs NumPy.

C[:, :, g] := construct(x[g]) + C[:, :, g] for every use, over element
types and shapes whose rows do not fill the last subgroup block.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen_testlib import NUMPY, fortran, program
from ir_equality import roundtrip
from tinyc.diagnostics import CompilationError
from tinyc.compiler import check_source
from tinyc.ir.instructions import CoopMatrixConstruct
from tinyc.reference import run as run_reference

# (element type, rows, cols, subgroup size)
SHAPES = [("f32", 16, 8, 16), ("f32", 5, 3, 8), ("f64", 24, 4, 16), ("i32", 9, 2, 8),
          ("c32", 8, 4, 8), ("f16", 4, 4, 4)]
USES = ("matrix_a", "matrix_b", "matrix_acc")
CASES = [(t, rows, cols, S, use) for t, rows, cols, S in SHAPES for use in USES]


def kernel(k: int, case) -> str:
    t, rows, cols, S, use = case
    coop = f"coopmatrix<{t}x{rows}x{cols},{use}>"
    return f"""
func @k{k}(%x: memref<{t}x?>, %C: memref<{t}x{rows}x{cols}x?>)
    attributes {{subgroup_size={S}, work_group_size=[{S}, 1]}} {{
  %gid = builtin.group_id : index
  %c = subview %C[:, :, %gid] : memref<{t}x{rows}x{cols}>
  %v = load %x[%gid] : {t}
  parallel {{
    %z = constant 0 : index
    %m = cooperative_matrix_construct %v : {coop}
    %old = cooperative_matrix_load.n %c[%z, %z] : {coop}
    %sum = arith.add %m, %old : {coop}
    cooperative_matrix_store %sum, %c[%z, %z]
  }}
}}
"""


SOURCE = "\n".join(kernel(k, case) for k, case in enumerate(CASES))
IDS = [f"{t}_{r}x{c}_S{S}_{use}" for t, r, c, S, use in CASES]
BATCH = 3


def inputs(k: int) -> tuple[np.ndarray, np.ndarray]:
    t, rows, cols, _, _ = CASES[k]
    rng = np.random.default_rng(k)
    dtype = NUMPY[t]
    if t.startswith("i"):
        return (rng.integers(-50, 50, BATCH).astype(dtype),
                fortran(rng.integers(-50, 50, (rows, cols, BATCH)).astype(dtype)))
    x = rng.uniform(-2, 2, BATCH) + (1j * rng.uniform(-2, 2, BATCH) if t.startswith("c") else 0)
    C = rng.uniform(-2, 2, (rows, cols, BATCH)) + (
        1j * rng.uniform(-2, 2, (rows, cols, BATCH)) if t.startswith("c") else 0)
    return x.astype(dtype), fortran(C.astype(dtype))


def expected(x: np.ndarray, C: np.ndarray) -> np.ndarray:
    return C + x[None, None, :]


@pytest.mark.parametrize("k", range(len(CASES)), ids=IDS)
def test_device_matches_numpy(device, k):
    x, C = inputs(k)
    want = expected(x, C)
    program(SOURCE)[f"k{k}"](x, C, batch=BATCH)
    np.testing.assert_array_equal(C, want)  # one exact add per entry


@pytest.mark.parametrize("k", range(len(CASES)), ids=IDS)
def test_reference_matches_numpy(k):
    x, C = inputs(k)
    want = expected(x, C)
    run_reference(check_source(SOURCE)[f"k{k}"], [x, C], BATCH)
    np.testing.assert_array_equal(C, want)


def test_round_trip():
    first = roundtrip(SOURCE)
    found = [inst for fn in first.functions for inst in fn.walk() if isinstance(inst, CoopMatrixConstruct)]
    assert len(found) == len(CASES)
    assert found[0].operands[0].name == "v"


def _error(body: str, args: str = "%x: f32, %i: i32"):
    source = f"func @k({args}) {{\n{body}\n}}\n"
    with pytest.raises(CompilationError) as info:
        check_source(source)
    (d,) = info.value.diagnostics
    return d.message, (d.line, d.column, d.end_column)


def test_the_number_must_have_the_component_type():
    body = "  parallel {\n    %m = cooperative_matrix_construct %i : coopmatrix<f32x8x8,matrix_acc>\n  }"
    assert _error(body) == ("cooperative_matrix_construct: number must have type f32 (the component "
                            "type of coopmatrix<f32x8x8,matrix_acc>), got i32", (3, 39, 40))


def test_the_number_must_be_a_scalar():
    body = ("  parallel {\n    %z = constant 0.0 : f32\n"
            "    %a = cooperative_matrix_construct %z : coopmatrix<f32x8x8,matrix_a>\n"
            "    %m = cooperative_matrix_construct %a : coopmatrix<f32x8x8,matrix_acc>\n  }")
    message, where = _error(body)
    assert message == ("cooperative_matrix_construct: number must have a scalar type, got "
                       "coopmatrix<f32x8x8,matrix_a>")
    assert where == (5, 39, 40)


def test_the_result_must_be_a_coopmatrix():
    body = "  parallel {\n    %m = cooperative_matrix_construct %x : f32\n  }"
    assert _error(body) == ("unexpected 'f32', expected 'coopmatrix'", (3, 44, 46))
    # IR built without the parser is checked by the verifier
    from tinyc.ir.core import Function, Program, Value
    from tinyc.ir.instructions import Parallel
    from tinyc.ir.types import f32
    from tinyc.ir.verifier import verify

    x = Value(f32, "x")
    fn = Function("k", [x])
    body_region = fn.body.append(Parallel()).body
    body_region.append(CoopMatrixConstruct(x, f32))
    with pytest.raises(CompilationError, match="cooperative_matrix_construct: result type must be a "
                                               "coopmatrix, got f32"):
        verify(Program([fn]))


def test_it_is_an_spmd_instruction():
    message, where = _error("  %m = cooperative_matrix_construct %x : coopmatrix<f32x8x8,matrix_acc>")
    assert message.startswith("cooperative_matrix_construct is an SPMD instruction and cannot appear "
                              "in a collective region")
    assert where == (2, 3, 71)
