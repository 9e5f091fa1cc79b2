"""tinyc.builder: programs built from Python print to text that parses back to the same IR,
compile and run like parsed ones, and point verifier errors at the Python line."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import tinyc
from tinyc import builder as tb
from tinyc.builder import Program, c32, coopmatrix, f16, f32, group, i32, index, memref
from tinyc.ir import instructions as I
from tinyc.ir.core import Instruction
from tinyc.parser import parse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ir_equality import assert_same_ir  # noqa: E402


def every_instruction() -> Program:
    """One program that uses every instruction of the language (and both region kinds)."""
    prog = Program()
    fn = prog.function("all", alpha=f32, A=memref(f32, 16, 16, None), G=group(memref(f32, 8), offset=2),
                       H=memref(f16, 16, 8), Z=memref(c32, 4), n=index)
    fn.set_attribute("subgroup_size", 16)
    alpha, A, G, H, Z, n = fn.params
    g = fn.group_id(name="g")
    a = fn.subview(A, (slice(None), slice(None), g), name="a")
    top = fn.subview(a, ((0, 8), slice(0, 8)))
    col = fn.subview(a, (slice(None), 3))
    member = fn.load(G, [g])
    tmp = fn.alloca(memref(f32, 16, 16, local=True), alignment=64, name="tmp")
    fn.gemm(alpha, a, a, 0.0, tmp, transpose_b="t")
    fn.gemv(1.0, a, col, 1.0, col, transpose=True)
    fn.ger(alpha, col, col, 1.0, tmp)
    fn.hadamard_product(1.0, col, col, 0.0, col)
    fn.axpby(2.0, tmp, 1.0, a, transpose=True)
    fn.sum(1.0, top, 0.0, member)
    fn.cumsum(1.0, a, 1, 0.0, tmp, atomic=False)
    fused = fn.fuse(a, 0, 1)
    fn.expand(fused, 0, [16, 16])
    fn.expand(col, 0, [4, fn.div(fn.size(col, 0), 4)])
    fn.lifetime_stop(tmp)
    total = fn.group_size()
    with fn.for_(0, n, step=2, init=[alpha], unroll=True) as loop:
        x = fn.cast(loop.var, f32)
        y = fn.add(loop.carried[0], fn.mul(x, 0.5))
        fn.yield_([fn.max(y, fn.neg(y))])
    s = loop.results[0]
    cond = fn.lt(total, 100)
    with fn.if_(cond, [f32]) as branch:
        with branch.then():
            fn.yield_([fn.exp(s)])
        with branch.otherwise():
            fn.yield_([fn.native_exp(fn.abs(s))])
    z = fn.load(Z, [0])
    fn.store(fn.conj(z), Z, [1])
    fn.store(fn.cast(fn.re(z), c32), Z, [2])
    fn.store(fn.cast(fn.im(z), c32), Z, [3])
    g32 = fn.cast(g, i32)
    bits = fn.xor(fn.and_(fn.shl(fn.num_subgroups(), 1), fn.subgroup_size()), fn.or_(fn.shr(g32, 1), g32))
    fn.store(fn.cast(fn.rem(bits, 7), f32), col, [fn.cast(fn.min(bits, 3), index)])
    with fn.foreach([0, 0], [16, 16]) as (i, j):
        v = fn.load(a, [i, j])
        fn.store(fn.sub(v, 1.0), a, [i, j], flag="atomic_add")
    with fn.parallel():
        sg = fn.subgroup_id()
        lane = fn.subgroup_local_id()
        with fn.if_(fn.eq(sg, fn.constant(0, i32))) as first:
            with first.then():
                ma = fn.cooperative_matrix_load(H, 0, 0, coopmatrix(f16, 16, 8, "a"))
                mb = fn.cooperative_matrix_load(H, 0, 0, coopmatrix(f16, 8, 16, "b"), transpose=True)
                mc = fn.cooperative_matrix_load(a, 0, 0, coopmatrix(f32, 16, 16, "acc"), checked="rows")
                md = fn.cooperative_matrix_mul_add(ma, mb, mc)
                fn.cooperative_matrix_store(fn.cooperative_matrix_scale(alpha, md), a, 0, 0, checked="both")
                w = fn.load(col, [fn.cast(lane, index)])
                r = fn.subgroup("add", "inclusive_scan", w)
                fn.store(fn.subgroup_broadcast(fn.subgroup("max", "reduce", r), 0), col, [0])
        fn.barrier(global_fence=True, local_fence=True)
    fn.barrier()
    return prog


def newest_instructions() -> Program:
    """The instructions only the newest language has (tinyc.std)."""
    prog = Program()
    fn = prog.function("tiles", A=memref(f32, None, 8), n=index)
    A, n = fn.params
    present = fn.associated(A)
    with fn.if_(present) as branch:
        with branch.then():
            with fn.foreach_tile([0, 0], [n, 8], [16, 4]) as (offsets, sizes):
                x = fn.load(A, offsets)
                fn.store(fn.add(x, 1.0), A, offsets)
    coop = prog.function("coop", alpha=f32, A=memref(f32, 16, 16, None))
    coop.set_attribute("subgroup_size", 16)
    alpha, A = coop.params
    fn = coop
    a = fn.subview(A, (slice(None), slice(None), fn.group_id()))
    col = fn.subview(a, (slice(None), 3))
    with fn.parallel():
        mc = fn.cooperative_matrix_load(a, 0, 0, coopmatrix(f32, 16, 16, "acc"))
        md = fn.add(mc, fn.cooperative_matrix_construct(0.5, coopmatrix(f32, 16, 16, "acc")))
        # coopmatrix components, reductions, prefetch, atomics
        with fn.cooperative_matrix_apply(md, name="mapped") as ap:
            fn.yield_([fn.add(ap.value, fn.cast(fn.add(ap.row, ap.col), f32))])
        e = fn.cooperative_matrix_extract(ap.result, 3)
        mi = fn.cooperative_matrix_insert(fn.mul(e, alpha), ap.result, 0)
        rows = fn.cooperative_matrix_reduce("add", "row", mi)
        fn.cooperative_matrix_reduce("max", "column", mi)
        fn.cooperative_matrix_prefetch(1, a, 0, 0, 16, 16)
        fn.cooperative_matrix_store(rows, a, 0, 0, transpose=True)
        old = fn.cooperative_matrix_atomic("add", mi, a, 0, 0, checked="both", scope="device")
        fn.cooperative_matrix_atomic_store(old, a, 0, 0, transpose="t", semantics="release")
        fn.cooperative_matrix_atomic_load(a, 0, 0, coopmatrix(f32, 16, 16, "acc"), scope="subgroup")
        x = fn.atomic_add(1.0, col, [0], scope="device", semantics="acquire_release")
        fn.atomic_store(fn.atomic_max(x, col, [1]), col, [2])
        fn.atomic_min(fn.atomic_load(col, [3], semantics="acquire"), col, [4])
    return prog


def test_every_instruction_round_trips():
    for prog in (every_instruction(), newest_instructions()):
        prog.verify()
        text = str(prog)
        assert_same_ir(prog.ir, parse(text))
    assert str(Program()) == "\n"
    assert str(newest_instructions()).startswith("; std: newest\n")
    assert not str(every_instruction()).startswith(";")


def _concrete_classes() -> set[type]:
    from tinyc.ir.instructions import instruction_classes

    return set(instruction_classes())


def test_the_round_trip_uses_every_instruction_class():
    used = {type(inst) for prog in (every_instruction(), newest_instructions())
            for fn in prog.ir.functions for inst in fn.walk()}
    missing = {cls.__name__ for cls in _concrete_classes()} - {cls.__name__ for cls in used}
    assert not missing, f"add these instructions to every_instruction(): {sorted(missing)}"


def test_every_instruction_class_is_reachable():
    """Each keyword of each class is a builder method, or reachable generically (new ones)."""
    fn = Program().function("f")
    for cls in _concrete_classes():
        keywords = cls.keywords if hasattr(cls, "keywords") else (cls.opname,)
        for keyword in keywords:
            assert callable(getattr(fn, keyword.replace(".", "_"))), keyword


def test_family_keywords_reach_their_class():
    prog = Program()
    fn = prog.function("f", x=f32)
    y = fn.arith_add(fn["x"], fn["x"], f32)          # generic: the keyword fixes the operation
    fn.math_exp(y, f32)
    assert "arith.add %x, %x : f32" in str(prog) and "math.exp" in str(prog)
    prog.verify()


def test_generic_emit_for_classes_without_a_method():
    prog = Program()
    fn = prog.function("f", x=memref(f32, 4))
    fn.emit(I.Barrier, True, False)
    fn.lifetime_stop  # a method
    assert "barrier.global" in str(prog)
    with pytest.raises(AttributeError, match="no instruction 'frobnicate'"):
        fn.frobnicate()


def fused_kernel() -> Program:
    prog = Program()
    fn = prog.function("fused_kernel", alpha=f32, A=group(memref(f32, 16, 8)), B=memref(f32, 8, 8),
                       C=memref(f32, 8, 16), D=memref(f32, 16, 16, None))
    alpha, A, B, C, D = fn.params
    i = fn.group_id()
    a = fn.load(A, [i])
    d = fn.subview(D, (slice(None), slice(None), i))
    tmp = fn.alloca(memref(f32, 16, 8, local=True))
    fn.gemm(1.0, a, B, 0.0, tmp, transpose_b=True)
    fn.gemm(alpha, tmp, C, 1.0, d)
    return prog


def test_built_program_compiles_and_runs(device):
    prog = fused_kernel()
    program = tinyc.compile(prog)
    assert program.ir("parsed") == str(prog)
    rng = np.random.default_rng(1)
    n = 7
    A = [np.asfortranarray(rng.standard_normal((16, 8)), dtype=np.float32) for _ in range(n)]
    B = np.asfortranarray(rng.standard_normal((8, 8)), dtype=np.float32)
    C = np.asfortranarray(rng.standard_normal((8, 16)), dtype=np.float32)
    D = np.asfortranarray(rng.standard_normal((16, 16, n)), dtype=np.float32)
    want = D + np.stack([0.5 * a @ B.T @ C for a in A], -1)
    program["fused_kernel"](np.float32(0.5), A, B, C, D, batch=n)
    assert np.abs(D - want).max() < 1e-4


def test_verifier_errors_point_at_the_python_line():
    prog = Program()
    fn = prog.function("bad", A=memref(f32, 4, 4), B=memref(f32, 5, 4))
    A, B = fn.params
    line = inspect.currentframe().f_lineno + 1
    fn.gemm(1.0, A, B, 0.0, A)
    with pytest.raises(tinyc.CompilationError) as err:
        tinyc.compile(prog)
    d = err.value.diagnostics[0]
    assert d.line == line
    assert "columns of op(A) (4) do not match rows of op(B) (5)" in d.message
    text = str(err.value)
    assert f"test_builder.py:{line}." in text
    assert "fn.gemm(1.0, A, B, 0.0, A)" in text          # the Python line with carets
    assert "note: '%B' is defined here" in text


def test_builder_rejects_bad_calls_at_once():
    prog = Program()
    fn = prog.function("f", A=memref(f32, 4, 4))
    with pytest.raises(TypeError, match="needs a tinyc type"):
        fn.param("x", "f32")
    with pytest.raises(ValueError, match="already used"):
        fn.param("A", f32)
    with pytest.raises(ValueError, match="needs 2 entries"):
        fn.subview(fn["A"], (0,))
    with pytest.raises(ValueError, match="transpose_a must be"):
        fn.gemm(1.0, fn["A"], fn["A"], 0.0, fn["A"], transpose_a="x")
    with pytest.raises(ValueError, match="invalid value name"):
        fn.constant(1, i32, name="1x")
    with pytest.raises(ValueError, match="already defined"):
        prog.function("f")
    with pytest.raises(TypeError, match="not a scalar type"):
        fn.constant(1, "float7")
    with pytest.raises(TypeError, match="expects the source as str, UTF-8 bytes or a tinyc.builder.Program"):
        tinyc.compile(42)


def test_types_spelled_in_python():
    assert str(memref(f32, 16, 8)) == "memref<f32x16x8>"
    assert str(memref("f64", 4, None, stride=[1, None])) == "memref<f64x4x?,strided<1,?>>"
    assert str(memref(np.float32, 4, local=True)) == "memref<f32x4,local>"
    assert str(group(memref(f32, 8), 10, offset="?")) == "group<memref<f32x8>x10, offset: ?>"
    assert str(coopmatrix(f32, 8, 16, "matrix_acc")) == "coopmatrix<f32x8x16,matrix_acc>"
    assert tb.scalar(np.complex64) is c32


def test_collective_methods_are_made_from_the_classes_as_the_docs_show():
    """fn.gemm & co. come from the constructors (tinyc/builder/collectives.py): each collective
    class has one, with the signature docs/builder.md lists, and a "t" transpose works."""
    import inspect
    from pathlib import Path

    from tinyc.builder.function import FunctionBuilder
    from tinyc.ir.instructions import BlasInstruction, instruction_classes

    docs = (Path(__file__).parents[2] / "docs" / "builder.md").read_text()
    for cls in instruction_classes():
        if not issubclass(cls, BlasInstruction):
            continue
        method = getattr(FunctionBuilder, cls.opname)
        text = str(inspect.signature(method)).replace("self, ", "").replace(" -> None", "")
        assert f"| `{cls.opname}` | `{cls.opname}{text}` |" in docs, (cls.opname, text)
        assert method.__doc__ == cls.__doc__
    prog = Program()
    fn = prog.function("k")
    A = fn.param("A", memref(f32, 4, 3))
    C = fn.param("C", memref(f32, 3, 3))
    fn.gemm(2.0, A, A, 1, C, transpose_a="t")
    [gemm] = [i for i in fn.function.walk() if isinstance(i, BlasInstruction)]
    assert gemm.transpose_a and not gemm.transpose_b and not gemm.atomic
    assert str(gemm.alpha.type) == "f32" and str(gemm.beta.type) == "f32"
