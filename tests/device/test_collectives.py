"""Collectives on the device against NumPy: every lowering, type, transpose, shape.

Each case is one kernel; the kernels of a family share one program, compiled
once per module (JIT costs 100-300 ms per program). A case launches a batch
of 3 work-groups (batch through a `?` mode, a group, or one shared output
for atomic accumulation) once per run: runs vary the run-time alpha/beta
(beta = 0 with NaN in the output) and, for `?` sizes, the shapes.
"""

from __future__ import annotations

import itertools
import zlib
from pathlib import Path

import numpy as np
import pytest
from collective_cases import (
    BATCH,
    COMPLEX_TYPES,
    INT_TYPES,
    Case,
    Operand,
    ProgramCache,
    Run,
    literal,
    random_values,
)

from tinyc.ir.types import SCALAR_TYPES, promote

ROOT = Path(__file__).resolve().parents[2]
MULTI_SUBGROUP = "{work_group_size=[32, 2]}"   # 4 subgroups of 16
SUBGROUP_8 = "{subgroup_size=8, work_group_size=[16, 1]}"


def promoted(*types: str) -> str:
    result = SCALAR_TYPES[types[0]]
    for t in types[1:]:
        result = promote(result, SCALAR_TYPES[t])
    return result.name


def alpha_value(t: str) -> complex | float | int:
    return 2 if t in INT_TYPES else (0.75 - 0.5j if t in COMPLEX_TYPES else 0.75)


def beta_values(t: str) -> list:
    """Run-time betas: 0 (output holds NaN and must not be read), 1, other."""
    other = -2 if t in INT_TYPES else (0.5 + 0.25j if t in COMPLEX_TYPES else -0.5)
    return [0, 1, other]


def constant_pattern(i: int, alpha_t: str, beta_t: str) -> tuple[str, str]:
    """Alpha/beta as run-time arguments or constants, cycling through the rules."""
    two = literal(beta_t, 2)
    patterns = [("arg", "arg"), (literal(alpha_t, 1), literal(beta_t, 0)),
                (literal(alpha_t, alpha_value(alpha_t)), literal(beta_t, 1)),
                ("arg", two), (literal(alpha_t, 1), literal(beta_t, 1)),
                ("arg", literal(beta_t, 0))]
    return patterns[i % len(patterns)]


def runs_for(shapes: list[dict], alpha_t: str, beta_t: str, beta: str) -> list[Run]:
    """Runs over the given shapes; a run-time beta takes each of beta_values in turn."""
    if beta != "arg":
        return [Run(shape, alpha_value(alpha_t), 1) for shape in shapes]
    betas = beta_values(beta_t)
    n = max(len(shapes), len(betas))
    return [Run(shapes[i % len(shapes)], alpha_value(alpha_t), betas[i % len(betas)])
            for i in range(n)]


def atomic_update(atomic: str, out_type: str, beta: str, via: str) -> tuple[str, str]:
    """beta and the output's placement of a case: `.atomic` needs beta 0 or 1, and the
    "shared" variant accumulates every work-group into one output."""
    if not atomic:
        return beta, via
    return (literal(out_type, 0 if atomic == "beta0" else 1),
            "shared" if atomic == "shared" else via)


def op(x: np.ndarray, transpose: bool) -> np.ndarray:
    return x.T if transpose and x.ndim == 2 else x


def max_abs(x: np.ndarray) -> float:
    return float(np.max(np.abs(x))) if x.size else 0.0


# ------------------------------------------------------------------ gemm / gemv / ger

def gemm_case(program: str, ta: bool, tb: bool, M: int, N: int, K: int,
              types: tuple[str, str, str] = ("f32", "f32", "f32"), pattern: int = 0,
              dynamic: bool = False, via: str = "view", atomic: str = "",
              attributes: str = "", sizes: list[tuple[int, int, int]] | None = None,
              tag: str = "") -> Case:
    TA, TB, TC = types
    alpha_t = promoted(TA, TB)
    alpha, beta = constant_pattern(pattern, alpha_t, TC)
    beta, out_via = atomic_update(atomic, TC, beta, via)
    shapes_of = lambda m, n, k: {"A": (k, m) if ta else (m, k), "B": (n, k) if tb else (k, n),
                                 "C": (m, n)}
    shapes = shapes_of(M, N, K)
    name = (f"gemm_{'t' if ta else 'n'}{'t' if tb else 'n'}_{M}x{N}x{K}_{TA}{TB}{TC}_p{pattern}"
            f"{'_dyn' if dynamic else ''}{'_' + via if via != 'view' else ''}"
            f"{'_atomic_' + atomic if atomic else ''}{tag}")
    return Case(
        name=name, program=program,
        instruction=f"gemm.{'t' if ta else 'n'}.{'t' if tb else 'n'}" + (".atomic" if atomic else ""),
        inputs=[Operand("A", TA, shapes["A"], dynamic, via), Operand("B", TB, shapes["B"], dynamic, via)],
        output=Operand("C", TC, shapes["C"], dynamic, out_via),
        scalar_type=(alpha_t, TC), alpha=alpha, beta=beta,
        reference=lambda ins: op(ins[0], ta) @ op(ins[1], tb),
        scale=lambda ins: ins[0].shape[0 if ta else -1] * max_abs(ins[0]) * max_abs(ins[1]) + 1,
        runs=runs_for([shapes_of(*s) for s in (sizes or [(M, N, K)])], alpha_t, TC, beta),
        attributes=attributes)


def gemv_case(program: str, ta: bool, M: int, K: int, types=("f32", "f32", "f32"), pattern=0,
              dynamic=False, via="view", atomic="", attributes="", sizes=None, tag="") -> Case:
    TA, TB, TC = types
    alpha_t = promoted(TA, TB)
    alpha, beta = constant_pattern(pattern, alpha_t, TC)
    beta, out_via = atomic_update(atomic, TC, beta, via)
    shapes_of = lambda m, k: {"A": (k, m) if ta else (m, k), "b": (k,), "c": (m,)}
    name = (f"gemv_{'t' if ta else 'n'}_{M}x{K}_{TA}{TB}{TC}_p{pattern}{'_dyn' if dynamic else ''}"
            f"{'_' + via if via != 'view' else ''}{'_atomic_' + atomic if atomic else ''}{tag}")
    s = shapes_of(M, K)
    return Case(
        name=name, program=program,
        instruction=f"gemv.{'t' if ta else 'n'}" + (".atomic" if atomic else ""),
        inputs=[Operand("A", TA, s["A"], dynamic, via), Operand("b", TB, s["b"], dynamic, via)],
        output=Operand("c", TC, s["c"], dynamic, out_via),
        scalar_type=(alpha_t, TC), alpha=alpha, beta=beta,
        reference=lambda ins: op(ins[0], ta) @ ins[1],
        scale=lambda ins: ins[1].shape[0] * max_abs(ins[0]) * max_abs(ins[1]) + 1,
        runs=runs_for([shapes_of(*z) for z in (sizes or [(M, K)])], alpha_t, TC, beta),
        attributes=attributes)


def ger_case(program: str, M: int, N: int, types=("f32", "f32", "f32"), pattern=0, dynamic=False,
             via="view", atomic="", attributes="", sizes=None, tag="") -> Case:
    TA, TB, TC = types
    alpha_t = promoted(TA, TB)
    alpha, beta = constant_pattern(pattern, alpha_t, TC)
    beta, out_via = atomic_update(atomic, TC, beta, via)
    shapes_of = lambda m, n: {"a": (m,), "b": (n,), "C": (m, n)}
    name = (f"ger_{M}x{N}_{TA}{TB}{TC}_p{pattern}{'_dyn' if dynamic else ''}"
            f"{'_' + via if via != 'view' else ''}{'_atomic_' + atomic if atomic else ''}{tag}")
    s = shapes_of(M, N)
    return Case(
        name=name, program=program, instruction="ger" + (".atomic" if atomic else ""),
        inputs=[Operand("a", TA, s["a"], dynamic, via), Operand("b", TB, s["b"], dynamic, via)],
        output=Operand("C", TC, s["C"], dynamic, out_via),
        scalar_type=(alpha_t, TC), alpha=alpha, beta=beta,
        reference=lambda ins: np.outer(ins[0], ins[1]),
        scale=lambda ins: max_abs(ins[0]) * max_abs(ins[1]) + 1,
        runs=runs_for([shapes_of(*z) for z in (sizes or [(M, N)])], alpha_t, TC, beta),
        attributes=attributes)


GEMM_SHAPES = [(1, 1, 1), (8, 8, 8), (16, 16, 16), (13, 7, 19), (33, 20, 17), (64, 64, 64)]
TRANSPOSES = list(itertools.product([False, True], repeat=2))
GEMM_TYPES = [("f64", "f64", "f64"), ("c32", "c32", "c32"), ("c64", "c64", "c64"),
              ("f16", "f16", "f32"), ("bf16", "bf16", "f32"), ("i8", "i8", "i32"),
              ("i16", "i16", "i32"), ("i32", "i32", "i32"), ("f16", "f16", "f16"),
              ("f32", "c32", "c32"), ("f16", "f32", "f32"), ("i8", "i8", "f32"), ("i64", "i64", "i64")]
DYN_SIZES = [(1, 1, 1), (13, 7, 19), (40, 33, 9), (16, 16, 16), (64, 64, 64)]

GEMM_CASES = (
    [gemm_case("gemm", ta, tb, *shape, pattern=i)
     for i, ((ta, tb), shape) in enumerate(itertools.product(TRANSPOSES, GEMM_SHAPES))]
    + [gemm_case("gemm_dyn", ta, tb, 13, 7, 19, dynamic=True, sizes=DYN_SIZES, pattern=0)
       for ta, tb in TRANSPOSES]
    + [gemm_case("gemm_dyn", False, False, 13, 7, 19, dynamic=True, sizes=DYN_SIZES,
                 attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       gemm_case("gemm_dyn", False, True, 64, 64, 64, pattern=1, attributes=MULTI_SUBGROUP,
                 tag="_wg32x2"),
       gemm_case("gemm_dyn", True, False, 13, 7, 19, pattern=3, attributes=MULTI_SUBGROUP,
                 tag="_wg32x2"),
       gemm_case("gemm_dyn", False, False, 20, 9, 9, types=("f64", "f64", "f64"), pattern=0,
                 attributes="{subgroup_size=8, work_group_size=[32, 1]}", tag="_sg8"),
       gemm_case("gemm_dyn", False, True, 16, 8, 8, via="group", pattern=2),
       gemm_case("gemm_dyn", True, True, 13, 7, 19, via="group", dynamic=True, sizes=DYN_SIZES[:3])]
    + [gemm_case("gemm_types", ta, tb, *shape, types=types, pattern=p)
       for types in GEMM_TYPES
       for (ta, tb, shape, p) in [(False, True, (13, 7, 19), 0), (True, False, (16, 16, 16), 3)]]
    + [gemm_case("gemm_atomic", False, False, 13, 7, 19, atomic="beta0"),
       gemm_case("gemm_atomic", True, False, 16, 16, 16, atomic="beta1"),
       gemm_case("gemm_atomic", False, True, 13, 7, 19, atomic="shared"),
       gemm_case("gemm_atomic", False, False, 33, 20, 17, atomic="shared", attributes=MULTI_SUBGROUP,
                 tag="_wg32x2"),
       gemm_case("gemm_atomic", False, False, 8, 8, 8, types=("c32", "c32", "c32"), atomic="shared"),
       gemm_case("gemm_atomic", False, False, 8, 8, 8, types=("f64", "f64", "f64"), atomic="shared"),
       gemm_case("gemm_atomic", False, False, 8, 8, 8, types=("i32", "i32", "i32"), atomic="shared"),
       gemm_case("gemm_atomic", True, True, 13, 7, 19, dynamic=True, atomic="shared",
                 sizes=DYN_SIZES[:3])]
)

GEMV_SHAPES = [(1, 1), (8, 8), (16, 16), (13, 19), (64, 64), (40, 7)]
GEMV_CASES = (
    [gemv_case("gemv", ta, *shape, pattern=i)
     for i, (ta, shape) in enumerate(itertools.product([False, True], GEMV_SHAPES))]
    + [gemv_case("gemv", ta, 13, 19, dynamic=True, sizes=[(1, 1), (13, 19), (40, 7), (64, 64)])
       for ta in (False, True)]
    + [gemv_case("gemv", ta, 13, 19, types=types, pattern=p)
       for types in [("f64", "f64", "f64"), ("c32", "c32", "c32"), ("c64", "c64", "c64"),
                     ("i32", "i32", "i32"), ("f16", "f16", "f32"), ("bf16", "f32", "f32")]
       for ta, p in [(False, 0), (True, 3)]]
    + [gemv_case("gemv", False, 40, 7, atomic="shared"), gemv_case("gemv", True, 13, 19, atomic="beta1"),
       gemv_case("gemv", True, 64, 64, attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       gemv_case("gemv", False, 16, 8, via="group", pattern=1)]
    + [ger_case("gemv", *shape, pattern=i)
       for i, shape in enumerate([(1, 1), (8, 8), (16, 16), (13, 19), (64, 64), (40, 7)])]
    + [ger_case("gemv", 13, 19, dynamic=True, sizes=[(1, 1), (13, 19), (40, 7)]),
       ger_case("gemv", 13, 19, types=("c32", "c32", "c32")),
       ger_case("gemv", 13, 19, types=("f64", "f64", "f64"), pattern=3),
       ger_case("gemv", 13, 19, types=("i8", "i16", "i32"), pattern=0),
       ger_case("gemv", 13, 19, types=("f16", "f16", "f32"), pattern=0),
       ger_case("gemv", 13, 19, atomic="shared"), ger_case("gemv", 16, 16, atomic="beta0"),
       ger_case("gemv", 33, 20, attributes=MULTI_SUBGROUP, tag="_wg32x2")]
)


# ------------------------------------------------------------------ axpby / hadamard

def axpby_case(program: str, transpose: bool, shape: tuple[int, ...], types=("f32", "f32"),
               pattern=0, dynamic=False, via="view", atomic="", attributes="", sizes=None,
               tag="") -> Case:
    TA, TB = types
    alpha, beta = constant_pattern(pattern, TA, TB)
    beta, out_via = atomic_update(atomic, TB, beta, via)
    shapes_of = lambda s: {"A": tuple(reversed(s)) if transpose and len(s) == 2 else s, "B": s}
    s = shapes_of(shape)
    dims = "x".join(map(str, shape)) or "scalar"
    name = (f"axpby_{'t' if transpose else 'n'}_{dims}_{TA}{TB}_p{pattern}{'_dyn' if dynamic else ''}"
            f"{'_' + via if via != 'view' else ''}{'_atomic_' + atomic if atomic else ''}{tag}")
    return Case(
        name=name, program=program, instruction=f"axpby.{'t' if transpose else 'n'}"
        + (".atomic" if atomic else ""),
        inputs=[Operand("A", TA, s["A"], dynamic, via)], output=Operand("B", TB, s["B"], dynamic, out_via),
        scalar_type=(TA, TB), alpha=alpha, beta=beta,
        reference=lambda ins: op(ins[0], transpose),
        scale=lambda ins: max_abs(ins[0]) + 1,
        runs=runs_for([shapes_of(z) for z in (sizes or [shape])], TA, TB, beta),
        attributes=attributes)


def hadamard_case(program: str, shape: tuple[int, ...], types=("f32", "f32", "f32"), pattern=0,
                  dynamic=False, via="view", atomic="", attributes="", sizes=None, tag="") -> Case:
    TA, TB, TC = types
    alpha_t = promoted(TA, TB)
    alpha, beta = constant_pattern(pattern, alpha_t, TC)
    beta, out_via = atomic_update(atomic, TC, beta, via)
    dims = "x".join(map(str, shape))
    name = (f"hadamard_{dims}_{TA}{TB}{TC}_p{pattern}{'_dyn' if dynamic else ''}"
            f"{'_' + via if via != 'view' else ''}{'_atomic_' + atomic if atomic else ''}{tag}")
    return Case(
        name=name, program=program, instruction="hadamard_product" + (".atomic" if atomic else ""),
        inputs=[Operand("a", TA, shape, dynamic, via), Operand("b", TB, shape, dynamic, via)],
        output=Operand("c", TC, shape, dynamic, out_via),
        scalar_type=(alpha_t, TC), alpha=alpha, beta=beta,
        reference=lambda ins: ins[0] * ins[1],
        scale=lambda ins: max_abs(ins[0]) * max_abs(ins[1]) + 1,
        runs=runs_for([{"a": z, "b": z, "c": z} for z in (sizes or [shape])], alpha_t, TC, beta),
        attributes=attributes)


BLAS1_SHAPES = [(), (1,), (13,), (16,), (37,), (1, 1), (13, 7), (16, 16), (33, 20), (64, 64)]
BLAS1_CASES = (
    [axpby_case("blas1", t, shape, pattern=i)
     for i, (t, shape) in enumerate(itertools.product([False, True], BLAS1_SHAPES))]
    + [axpby_case("blas1", t, (13, 7), dynamic=True, sizes=[(1, 1), (13, 7), (40, 33)])
       for t in (False, True)]
    + [axpby_case("blas1", False, (37,), dynamic=True, sizes=[(1,), (16,), (37,)])]
    + [axpby_case("blas1", t, (13, 7), types=types, pattern=p)
       for types in [("f64", "f64"), ("c32", "c32"), ("c64", "c64"), ("f16", "f32"),
                     ("bf16", "f32"), ("i8", "i32"), ("i32", "i32"), ("f32", "c64"), ("f16", "f16")]
       for t, p in [(False, 0), (True, 3)]]
    + [axpby_case("blas1", False, (13, 7), atomic="beta0"), axpby_case("blas1", True, (13, 7), atomic="beta1"),
       axpby_case("blas1", False, (37,), atomic="shared"), axpby_case("blas1", False, (), atomic="shared"),
       axpby_case("blas1", True, (33, 20), attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       axpby_case("blas1", False, (37,), attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       axpby_case("blas1", False, (13, 7), via="group", pattern=2),
       axpby_case("blas1", False, (4, 20), pattern=3), axpby_case("blas1", True, (2, 40), pattern=1),
       axpby_case("blas1", False, (3, 33), attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       axpby_case("blas1", False, (3, 5), attributes=MULTI_SUBGROUP, tag="_wg32x2")]
    + [hadamard_case("blas1", shape, pattern=i)
       for i, shape in enumerate([(1,), (13,), (16,), (37,), (1, 1), (13, 7), (16, 16), (64, 64)])]
    + [hadamard_case("blas1", (13, 7), dynamic=True, sizes=[(1, 1), (13, 7), (40, 33)]),
       hadamard_case("blas1", (37,), dynamic=True, sizes=[(1,), (37,)])]
    + [hadamard_case("blas1", (13, 7), types=types, pattern=p)
       for types, p in [(("f64", "f64", "f64"), 0), (("c32", "c32", "c32"), 3), (("c64", "c64", "c64"), 0),
                        (("f16", "f16", "f32"), 0), (("i8", "i8", "i32"), 3), (("i16", "i32", "i32"), 0),
                        (("f32", "c32", "c32"), 0), (("bf16", "bf16", "f32"), 3)]]
    + [hadamard_case("blas1", (13, 7), atomic="shared"), hadamard_case("blas1", (37,), atomic="beta0"),
       hadamard_case("blas1", (33, 20), attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       hadamard_case("blas1", (3, 33), pattern=3), hadamard_case("blas1", (1, 40), pattern=0)]
)


# ------------------------------------------------------------------ sum / cumsum

def sum_case(program: str, transpose: bool, shape: tuple[int, ...], types=("f32", "f32"), pattern=0,
             dynamic=False, via="view", atomic="", attributes="", sizes=None, tag="") -> Case:
    TA, TB = types
    alpha, beta = constant_pattern(pattern, TA, TB)
    beta, out_via = atomic_update(atomic, TB, beta, via)

    def shapes_of(s: tuple[int, ...]) -> dict:
        out = () if len(s) == 1 else ((s[1],) if transpose else (s[0],))
        return {"A": s, "b": out}

    s = shapes_of(shape)
    dims = "x".join(map(str, shape))
    name = (f"sum_{'t' if transpose else 'n'}_{dims}_{TA}{TB}_p{pattern}{'_dyn' if dynamic else ''}"
            f"{'_' + via if via != 'view' else ''}{'_atomic_' + atomic if atomic else ''}{tag}")
    axis = 0 if transpose else 1
    return Case(
        name=name, program=program, instruction=f"sum.{'t' if transpose else 'n'}"
        + (".atomic" if atomic else ""),
        inputs=[Operand("A", TA, s["A"], dynamic, via)], output=Operand("b", TB, s["b"], dynamic, out_via),
        scalar_type=(TA, TB), alpha=alpha, beta=beta,
        reference=lambda ins: ins[0].sum() if ins[0].ndim == 1 else ins[0].sum(axis=axis),
        scale=lambda ins: ins[0].size * max_abs(ins[0]) + 1,
        runs=runs_for([shapes_of(z) for z in (sizes or [shape])], TA, TB, beta),
        attributes=attributes)


def cumsum_case(program: str, shape: tuple[int, ...], mode: int, types=("f32", "f32"), pattern=0,
                dynamic=False, via="view", atomic="", attributes="", sizes=None, tag="") -> Case:
    TA, TB = types
    alpha, beta = constant_pattern(pattern, TA, TB)
    beta, out_via = atomic_update(atomic, TB, beta, via)
    dims = "x".join(map(str, shape))
    name = (f"cumsum_{dims}_m{mode}_{TA}{TB}_p{pattern}{'_dyn' if dynamic else ''}"
            f"{'_' + via if via != 'view' else ''}{'_atomic_' + atomic if atomic else ''}{tag}")
    return Case(
        name=name, program=program, instruction="cumsum" + (".atomic" if atomic else ""),
        inputs=[Operand("A", TA, shape, dynamic, via)], output=Operand("B", TB, shape, dynamic, out_via),
        scalar_type=(TA, TB), alpha=alpha, beta=beta, extra=f", {mode}",
        reference=lambda ins: np.cumsum(ins[0], axis=mode),
        scale=lambda ins: ins[0].shape[mode] * max_abs(ins[0]) + 1,
        runs=runs_for([{"A": z, "B": z} for z in (sizes or [shape])], TA, TB, beta),
        attributes=attributes)


REDUCTION_CASES = (
    [sum_case("reductions", t, shape, pattern=i)
     for i, (t, shape) in enumerate(itertools.product(
         [False, True], [(1, 1), (8, 8), (16, 16), (13, 7), (33, 20), (64, 64)]))]
    + [sum_case("reductions", False, shape, pattern=i)
       for i, shape in enumerate([(1,), (13,), (16,), (37,), (100,)])]
    + [sum_case("reductions", t, (13, 7), dynamic=True, sizes=[(1, 1), (13, 7), (40, 33)])
       for t in (False, True)]
    + [sum_case("reductions", False, (37,), dynamic=True, sizes=[(1,), (16,), (37,)])]
    + [sum_case("reductions", t, shape, types=types, pattern=p)
       for types in [("f64", "f64"), ("c32", "c32"), ("c64", "c64"), ("f16", "f32"), ("i8", "i32"),
                     ("i32", "i32"), ("bf16", "f32")]
       for t, shape, p in [(False, (13, 7), 0), (True, (13, 7), 3), (False, (37,), 0)]]
    + [sum_case("reductions", False, (13, 7), atomic="shared"),
       sum_case("reductions", True, (13, 7), atomic="shared"),
       sum_case("reductions", False, (37,), atomic="shared"),
       sum_case("reductions", False, (37,), atomic="beta0"),
       sum_case("reductions", True, (33, 20), attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       sum_case("reductions", False, (33, 20), attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       sum_case("reductions", False, (100,), attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       sum_case("reductions", False, (100,), atomic="shared", attributes=MULTI_SUBGROUP,
                tag="_wg32x2"),
       sum_case("reductions", True, (13, 7), via="group", pattern=2)]
    + [cumsum_case("cumsum", shape, mode, pattern=i)
       for i, (shape, mode) in enumerate(
           [((1,), 0), ((13,), 0), ((16,), 0), ((37,), 0), ((13, 7), 0), ((13, 7), 1), ((4, 20), 0),
            ((33, 20), 0), ((33, 20), 1), ((5, 4, 3), 0), ((5, 4, 3), 1), ((5, 4, 3), 2),
            ((20, 3, 2), 0)])]
    + [cumsum_case("cumsum", (13, 7), mode, dynamic=True, sizes=[(1, 1), (13, 7), (40, 33)])
       for mode in (0, 1)]
    + [cumsum_case("cumsum", (37,), 0, dynamic=True, sizes=[(1,), (16,), (37,)])]
    + [cumsum_case("cumsum", (13, 7), mode, types=types, pattern=p)
       for types in [("f64", "f64"), ("c32", "c32"), ("c64", "c64"), ("f16", "f32"), ("i8", "i32"),
                     ("i32", "i32")]
       for mode, p in [(0, 0), (1, 3)]]
    + [cumsum_case("cumsum", (4, 5, 6), 2, pattern=3), cumsum_case("cumsum", (2, 30), 1, pattern=0),
       cumsum_case("cumsum", (13, 7), 0, atomic="shared"), cumsum_case("cumsum", (13, 7), 1, atomic="beta0"),
       cumsum_case("cumsum", (33, 20), 0, attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       cumsum_case("cumsum", (33, 20), 1, attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       cumsum_case("cumsum", (37,), 0, attributes=MULTI_SUBGROUP, tag="_wg32x2"),
       cumsum_case("cumsum", (13, 7), 0, via="group", pattern=2)]
)

ALL_CASES = GEMM_CASES + GEMV_CASES + BLAS1_CASES + REDUCTION_CASES


def _programs() -> dict[str, list[Case]]:
    programs: dict[str, list[Case]] = {}
    for case in ALL_CASES:
        programs.setdefault(case.program, []).append(case)
    return programs


@pytest.fixture(scope="module")
def programs(device) -> ProgramCache:
    return ProgramCache(_programs(), device)


def test_case_names_are_unique() -> None:
    names = [c.name for c in ALL_CASES]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.name)
def test_collective(programs: ProgramCache, case: Case) -> None:
    program = programs.get(case.program)
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    for run in case.runs:
        case.execute(program, run, rng)


# ------------------------------------------------------------------ foreach

FOREACH_SOURCE = """
func @foreach_1d(%A: memref<f32x?x?>, %lo: index, %hi: index) {
  %g = builtin.group_id : index
  %a = subview %A[:, %g] : memref<f32x?>
  foreach (%i) = (%lo), (%hi) {
    %x = load %a[%i] : f32
    %c = cast %i : f32
    %y = arith.add %x, %c : f32
    store %y, %a[%i]
  }
}
func @foreach_2d(%A: memref<f32x?x?x?>, %lo0: index, %hi0: index, %lo1: index, %hi1: index) {
  %g = builtin.group_id : index
  %a = subview %A[:, :, %g] : memref<f32x?x?>
  foreach (%i, %j) = (%lo0, %lo1), (%hi0, %hi1) {
    %x = load %a[%i, %j] : f32
    %ci = cast %i : f32
    %cj = cast %j : f32
    %k = constant 100.0 : f32
    %t = arith.mul %cj, %k : f32
    %u = arith.add %ci, %t : f32
    %y = arith.add %x, %u : f32
    store %y, %a[%i, %j]
  }
}
func @foreach_3d_i32(%A: memref<f32x5x4x3x?>) attributes {work_group_size=[32, 2]} {
  %g = builtin.group_id : index
  %a = subview %A[:, :, :, %g] : memref<f32x5x4x3>
  %z = constant 0 : i32
  %n0 = constant 5 : i32
  %n1 = constant 4 : i32
  %n2 = constant 3 : i32
  foreach (%i, %j, %k):i32 = (%z, %z, %z), (%n0, %n1, %n2) {
    %ii = cast %i : index
    %jj = cast %j : index
    %kk = cast %k : index
    %x = load %a[%ii, %jj, %kk] : f32
    %c = constant 2.0 : f32
    %y = arith.mul %x, %c : f32
    store %y, %a[%ii, %jj, %kk]
  }
}
func @foreach_2d_wg(%A: memref<f32x?x?x?>) attributes {work_group_size=[32, 2]} {
  %g = builtin.group_id : index
  %a = subview %A[:, :, %g] : memref<f32x?x?>
  %m = size %a[0] : index
  %n = size %a[1] : index
  %z = constant 0 : index
  foreach (%i, %j) = (%z, %z), (%m, %n) {
    %x = load %a[%i, %j] : f32
    %y = arith.neg %x : f32
    store %y, %a[%i, %j]
  }
}
func @foreach_1d_wg(%A: memref<f32x?x?>) attributes {work_group_size=[64, 1]} {
  %g = builtin.group_id : index
  %a = subview %A[:, %g] : memref<f32x?>
  %m = size %a[0] : index
  %z = constant 0 : index
  foreach (%i) = (%z), (%m) {
    %x = load %a[%i] : f32
    %y = arith.neg %x : f32
    store %y, %a[%i]
  }
}
"""


@pytest.fixture(scope="module")
def foreach_program(device):
    import tinyc

    return tinyc.compile(FOREACH_SOURCE, name="foreach.ir", device=device)


@pytest.mark.parametrize("lo, hi", [(0, 1), (0, 16), (3, 16), (0, 37), (5, 70), (4, 4)])
def test_foreach_1d(foreach_program, lo, hi) -> None:
    rng = np.random.default_rng(lo * 100 + hi)
    A = random_values(rng, "f32", (80, BATCH))
    want = A.copy()
    want[lo:hi] += np.arange(lo, hi, dtype=np.float32)[:, None]
    foreach_program["foreach_1d"](A, lo, hi, batch=BATCH)
    np.testing.assert_allclose(A, want, rtol=1e-6)


@pytest.mark.parametrize("lo0, hi0, lo1, hi1", [(0, 1, 0, 1), (0, 16, 0, 3), (2, 13, 1, 7),
                                                 (0, 40, 3, 33), (7, 8, 0, 20)])
def test_foreach_2d(foreach_program, lo0, hi0, lo1, hi1) -> None:
    rng = np.random.default_rng(hi0 * 100 + hi1)
    A = random_values(rng, "f32", (40, 33, BATCH))
    want = A.copy()
    i, j = np.meshgrid(np.arange(lo0, hi0), np.arange(lo1, hi1), indexing="ij")
    want[lo0:hi0, lo1:hi1] += (i + 100 * j).astype(np.float32)[:, :, None]
    foreach_program["foreach_2d"](A, lo0, hi0, lo1, hi1, batch=BATCH)
    np.testing.assert_allclose(A, want, rtol=1e-6)


def test_foreach_3d_i32_multi_subgroup(foreach_program) -> None:
    A = random_values(np.random.default_rng(3), "f32", (5, 4, 3, BATCH))
    want = A * 2
    foreach_program["foreach_3d_i32"](A, batch=BATCH)
    np.testing.assert_allclose(A, want, rtol=1e-6)


@pytest.mark.parametrize("shape", [(1, 1), (13, 7), (40, 33), (16, 1), (3, 50)])
def test_foreach_2d_multi_subgroup(foreach_program, shape) -> None:
    A = random_values(np.random.default_rng(4), "f32", (*shape, BATCH))
    want = -A
    foreach_program["foreach_2d_wg"](A, batch=BATCH)
    np.testing.assert_array_equal(A, want)


@pytest.mark.parametrize("n", [1, 16, 63, 64, 65, 200])
def test_foreach_1d_multi_subgroup(foreach_program, n) -> None:
    A = random_values(np.random.default_rng(5), "f32", (n, BATCH))
    want = -A
    foreach_program["foreach_1d_wg"](A, batch=BATCH)
    np.testing.assert_array_equal(A, want)


# ------------------------------------------------------------------ the spec's fused kernel

def test_fused_kernel_over_1000_matrices(device) -> None:
    import tinyc

    program = tinyc.compile((ROOT / "samples" / "fused_kernel.ir").read_text(),
                            name="fused_kernel.ir", device=device)
    n = 1000
    rng = np.random.default_rng(7)
    A = [random_values(rng, "f32", (16, 8)) for _ in range(n)]
    B = random_values(rng, "f32", (8, 8))
    C = random_values(rng, "f32", (8, 16))
    D = random_values(rng, "f32", (16, 16, n))
    want = D.astype(np.float64) + 0.5 * np.stack(
        [A[i].astype(np.float64) @ B.T.astype(np.float64) @ C.astype(np.float64) for i in range(n)],
        axis=2)
    program["fused_kernel"](np.float32(0.5), A, B, C, D, batch=n)
    np.testing.assert_allclose(D, want, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ strided views

STRIDED_SOURCE = """
func @gemm_nt(%alpha: f32, %beta: f32, %A: memref<f32x?x?,strided<?,?>>,
              %B: memref<f32x?x?,strided<?,?>>, %C: memref<f32x?x?,strided<?,?>>) {
  gemm.n.t %alpha, %A, %B, %beta, %C
}
func @gemm_static_ld(%alpha: f32, %beta: f32, %A: memref<f32x13x19,strided<1,40>>,
                     %B: memref<f32x19x7,strided<1,40>>, %C: memref<f32x13x7,strided<1,40>>) {
  gemm.n.n %alpha, %A, %B, %beta, %C
}
func @gemm_tn_static_ld(%alpha: f32, %beta: f32, %A: memref<f32x19x33,strided<1,40>>,
                        %B: memref<f32x19x20,strided<1,40>>, %C: memref<f32x33x20,strided<1,40>>) {
  gemm.t.n %alpha, %A, %B, %beta, %C
}
func @gemv_t(%alpha: f32, %beta: f32, %A: memref<f32x?x?,strided<?,?>>,
             %x: memref<f32x?,strided<?>>, %y: memref<f32x?,strided<?>>) {
  gemv.t %alpha, %A, %x, %beta, %y
}
func @axpby_t(%alpha: f32, %beta: f32, %A: memref<f32x?x?,strided<?,?>>,
              %B: memref<f32x?x?,strided<?,?>>) {
  axpby.t %alpha, %A, %beta, %B
}
func @sum_t(%alpha: f32, %beta: f32, %A: memref<f32x?x?,strided<?,?>>,
            %b: memref<f32x?,strided<?>>) {
  sum.t %alpha, %A, %beta, %b
}
func @cumsum_0(%alpha: f32, %beta: f32, %A: memref<f32x?x?,strided<?,?>>,
               %B: memref<f32x?x?,strided<?,?>>) {
  cumsum %alpha, %A, 0, %beta, %B
}
"""


@pytest.fixture(scope="module")
def strided_program(device):
    import tinyc

    return tinyc.compile(STRIDED_SOURCE, name="strided.ir", device=device)


def _view(rng: np.random.Generator, rows: int, cols: int, step: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """A (rows, cols) view with leading dimension 40 (and row step `step`) into a bigger array."""
    big = random_values(rng, "f32", (40 * step, cols + 3))
    return big, big[2:2 + rows * step:step, 1:1 + cols]


@pytest.mark.parametrize("step", [1, 2])
def test_strided_views(strided_program, step: int) -> None:
    rng = np.random.default_rng(step)
    alpha, beta = 0.5, -1.5
    _, A = _view(rng, 13, 19, step)
    _, B = _view(rng, 7, 19, step)
    bigC, C = _view(rng, 13, 7, step)
    outside = bigC.copy(order="F")
    want = alpha * A.astype(np.float64) @ B.T + beta * C
    strided_program["gemm_nt"](alpha, beta, A, B, C, batch=1)
    np.testing.assert_allclose(C, want, rtol=1e-5, atol=1e-5)
    mask = np.ones(bigC.shape, bool)
    mask[2:2 + 13 * step:step, 1:8] = False
    np.testing.assert_array_equal(bigC[mask], outside[mask])  # nothing outside the view written

    _, A = _view(rng, 19, 13, step)
    _, x = _view(rng, 19, 1, step)
    _, y = _view(rng, 13, 1, step)
    want = alpha * A.T.astype(np.float64) @ x[:, 0] + beta * y[:, 0]
    strided_program["gemv_t"](alpha, beta, A, x[:, 0], y[:, 0], batch=1)
    np.testing.assert_allclose(y[:, 0], want, rtol=1e-5, atol=1e-5)

    _, A = _view(rng, 7, 13, step)
    _, B = _view(rng, 13, 7, step)
    want = alpha * A.T + beta * B.astype(np.float64)
    strided_program["axpby_t"](alpha, beta, A, B, batch=1)
    np.testing.assert_allclose(B, want, rtol=1e-6)

    _, A = _view(rng, 33, 5, step)
    _, b = _view(rng, 5, 1, step)
    want = alpha * A.astype(np.float64).sum(axis=0) + beta * b[:, 0]
    strided_program["sum_t"](alpha, beta, A, b[:, 0], batch=1)
    np.testing.assert_allclose(b[:, 0], want, rtol=1e-5, atol=1e-5)

    _, A = _view(rng, 37, 3, step)
    _, B = _view(rng, 37, 3, step)
    want = alpha * np.cumsum(A.astype(np.float64), axis=0) + beta * B
    strided_program["cumsum_0"](alpha, beta, A, B, batch=1)
    np.testing.assert_allclose(B, want, rtol=1e-5, atol=1e-5)


def test_static_leading_dimension(strided_program) -> None:
    rng = np.random.default_rng(11)
    _, A = _view(rng, 13, 19)
    _, B = _view(rng, 19, 7)
    _, C = _view(rng, 13, 7)
    want = 2.0 * A.astype(np.float64) @ B + 0.5 * C
    strided_program["gemm_static_ld"](2.0, 0.5, A, B, C, batch=1)
    np.testing.assert_allclose(C, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transpose, instruction", [("loads", "vloadn"),
                                                     ("shuffles", "OpGroupNonUniformShuffleXor")])
def test_staged_transpose_of_a_strided_view(device, transpose: str, instruction: str) -> None:
    """gemm.t.n with a leading dimension of 40: op(A) is staged in local memory, each lane
    reading its contiguous column of A with vector loads, or the lanes reading along A's
    columns and transposing 16x16 blocks with shuffles (the `transpose` knob)."""
    import tinyc
    from tinyc.spirv.tools import disassemble

    strided_program = tinyc.compile(STRIDED_SOURCE, name="strided.ir", device=device, schedule={
        "gemm_tn_static_ld": {"subgroup_size": 16, "gemm": {"transpose": transpose}}})
    assert instruction in disassemble(strided_program.spirv)
    assert "memref<f32x33x19,local>" in strided_program.ir("lowered")
    rng = np.random.default_rng(13)
    _, A = _view(rng, 19, 33)
    _, B = _view(rng, 19, 20)
    bigC, C = _view(rng, 33, 20)
    outside = bigC.copy(order="F")
    want = 2.0 * A.T.astype(np.float64) @ B + 0.5 * C
    strided_program["gemm_tn_static_ld"](2.0, 0.5, A, B, C, batch=1)
    np.testing.assert_allclose(C, want, rtol=1e-5, atol=1e-5)
    mask = np.ones(bigC.shape, bool)
    mask[2:35, 1:21] = False
    np.testing.assert_array_equal(bigC[mask], outside[mask])
