"""parse → print → parse gives the same IR, for the samples and for every syntactic form."""

from __future__ import annotations

import math

import pytest

from tinyc.diagnostics import CompilationError
from parser_testlib import SAMPLES, roundtrip

from tinyc.ir import instructions as ins
from tinyc.ir.types import (
    DYNAMIC, AddressSpace, CoopMatrixType, GroupType, MatrixUse, MemrefType, bool_, c32, f16, f32,
    i32, index, void,
)
from tinyc.parser import parse

ARGS = ("%a: f32, %b: f32, %i: index, %j: index, %n: i32, %m: i32, %c: c32, %flag: bool, "
        "%M: memref<f32x8x8>, %V: memref<f32x8>, %W: memref<f32x8>, %S: memref<f32>, "
        "%D: memref<f32x?x?>, %G: group<memref<f32x8>x?>, %T: memref<f32x4x6x8>, "
        "%H: memref<f16x16x8>")


def fn(body: str, args: str = ARGS, attrs: str = "") -> str:
    return f"func @k({args}) {attrs} {{\n{body}\n}}\n"


def only(text: str) -> ins.Instruction:
    """Round-trips `text` and returns the last top-level instruction of its function."""
    return roundtrip(text).functions[0].body.instructions[-1]


def test_samples_exist():
    assert len(SAMPLES) >= 9


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_roundtrip(path):
    roundtrip(path.read_text())


@pytest.mark.parametrize("text", ["", "; nothing but a comment\n", "\n\n  \t\n", "\ufeff"])
def test_a_program_without_function_is_an_error(text):
    with pytest.raises(CompilationError) as info:
        parse(text)
    [d] = info.value.diagnostics
    assert d.message == "the program defines no function"
    assert (d.line, d.column) == (1, 1)


def test_empty_function():
    prog = roundtrip("func @f() {}")
    assert prog.functions[0].args == [] and prog.functions[0].body.instructions == []


def test_several_functions_keep_their_order():
    prog = roundtrip("func @one() {}\nfunc @two(%x: f32) {}\nfunc @3() {}")
    assert [f.name for f in prog.functions] == ["one", "two", "3"]


# ---------------------------------------------------------------- types

@pytest.mark.parametrize("text, expected", [
    ("bool", bool_), ("i8", "i8"), ("i16", "i16"), ("i32", i32), ("i64", "i64"),
    ("index", index), ("bf16", "bf16"), ("f16", f16), ("f32", f32), ("f64", "f64"),
    ("c32", c32), ("c64", "c64"), ("void", void),
])
def test_scalar_and_simple_types(text, expected):
    t = roundtrip(f"func @f(%x: {text}) {{}}").functions[0].args[0].type
    assert str(t) == str(expected)


@pytest.mark.parametrize("text, shape, stride, space", [
    ("memref<f32>", (), (), AddressSpace.GLOBAL),
    ("memref<f32,strided<>>", (), (), AddressSpace.GLOBAL),
    ("memref<i8x4>", (4,), (1,), AddressSpace.GLOBAL),
    ("memref<f32x4x?>", (4, DYNAMIC), (1, 4), AddressSpace.GLOBAL),
    ("memref<f32x?x4>", (DYNAMIC, 4), (1, DYNAMIC), AddressSpace.GLOBAL),
    ("memref<f32x4x4,strided<1,8>>", (4, 4), (1, 8), AddressSpace.GLOBAL),
    ("memref<f32x4x4,strided<1,4>>", (4, 4), (1, 4), AddressSpace.GLOBAL),
    ("memref<f64x?x?,strided<?,?>>", (DYNAMIC, DYNAMIC), (DYNAMIC, DYNAMIC), AddressSpace.GLOBAL),
    ("memref<f32x4,local>", (4,), (1,), AddressSpace.LOCAL),
    ("memref<f32x4,global>", (4,), (1,), AddressSpace.GLOBAL),
    ("memref<c64x2x3,strided<2,8>,local>", (2, 3), (2, 8), AddressSpace.LOCAL),
    ("memref< f32 x 4 x ? >", (4, DYNAMIC), (1, 4), AddressSpace.GLOBAL),
    ("memref<indexx3>", (3,), (1,), AddressSpace.GLOBAL),
])
def test_memref_types(text, shape, stride, space):
    t = roundtrip(f"func @f(%x: {text}) {{}}").functions[0].args[0].type
    assert isinstance(t, MemrefType)
    assert (t.shape, t.stride, t.space) == (shape, stride, space)


def test_explicit_canonical_stride_is_the_same_type():
    a = parse("func @f(%x: memref<f32x5x6x7>, %y: memref<f32x5x6x7,strided<1,5,30>>) {}")
    x, y = a.functions[0].args
    assert x.type is y.type


@pytest.mark.parametrize("text, size, offset", [
    ("group<memref<f32x16x8>x?>", DYNAMIC, 0),
    ("group<memref<f32x?>x8>", 8, 0),
    ("group<memref<f32x8>x?, offset: 2>", DYNAMIC, 2),
    ("group<memref<f32x8>x?, offset: ?>", DYNAMIC, DYNAMIC),
    ("group<memref<f32x4x4,strided<1,8>>x3,offset:?>", 3, DYNAMIC),
])
def test_group_types(text, size, offset):
    t = roundtrip(f"func @f(%x: {text}) {{}}").functions[0].args[0].type
    assert isinstance(t, GroupType)
    assert (t.size, t.offset) == (size, offset)


@pytest.mark.parametrize("use", ["matrix_a", "matrix_b", "matrix_acc"])
def test_coopmatrix_types(use):
    inst = only(fn(f"%x = constant 1.0 : coopmatrix<f32x8x16,{use}>"))
    t = inst.result.type
    assert isinstance(t, CoopMatrixType)
    assert (t.component, t.rows, t.cols, t.use) == (f32, 8, 16, MatrixUse(use))


# ---------------------------------------------------------------- constants

@pytest.mark.parametrize("literal, value", [
    ("true", True), ("false", False),
    ("0", 0), ("-5", -5), ("+7", 7), ("9223372036854775807", 2**63 - 1),
    ("-9223372036854775807", -(2**63) + 1), ("100000000000000000000000000000", 10**29),
    ("1.5", 1.5), ("-0.25", -0.25), (".5", 0.5), ("5.", 5.0), ("1e5", 1e5), ("1E-3", 1e-3),
    ("2.5e+3", 2500.0), ("0x1.8p3", 12.0), ("-0x.8p-1", -0.25), ("0x1p4", 16.0),
    ("0X1P4", 16.0), ("0x1.", 1.0), ("0xA.8", 10.5), ("1e-320", 1e-320),
    ("[1.0, -2.0]", complex(1, -2)), ("[0x1p1, 1e3]", complex(2, 1000)),
    ("[-.5,+.25]", complex(-0.5, 0.25)),
])
def test_constant_literals(literal, value):
    inst = only(fn(f"%x = constant {literal} : f64"))
    assert isinstance(inst, ins.Constant)
    assert inst.value == value and type(inst.value) is type(value)


def test_negative_zero_survives():
    inst = only(fn("%x = constant -0.0 : f32"))
    assert math.copysign(1.0, inst.value) == -1.0


# ---------------------------------------------------------------- attributes

def test_function_and_argument_attributes():
    prog = roundtrip(
        'func @f(%A: memref<f32x8x?> {alignment=64, shape_gcd=[8, 4], stride_gcd=[1,8]},\n'
        '        %x: f32 {}) attributes {subgroup_size=16, work_group_size=[16,2],\n'
        '        "custom"=[1, -2, [true, "s"], {"nested"=false, unroll=true}], "e"=[]} {}')
    f = prog.functions[0]
    assert f.attrs == {"subgroup_size": 16, "work_group_size": [16, 2],
                       "custom": [1, -2, [True, "s"], {"nested": False, "unroll": True}],
                       "e": []}
    assert f.args[0].attrs == {"alignment": 64, "shape_gcd": [8, 4], "stride_gcd": [1, 8]}
    assert f.args[1].attrs == {}


def test_quoted_keyword_attribute_name_is_the_keyword():
    f = roundtrip('func @f() attributes {"subgroup_size"=8} {}').functions[0]
    assert f.attrs == {"subgroup_size": 8}


def test_attribute_strings_keep_printable_ascii():
    f = roundtrip('func @f() attributes {"k"="a b!#$%&\'()*+,-./:;<=>?@[]^_`{|}~"} {}').functions[0]
    assert f.attrs["k"] == "a b!#$%&'()*+,-./:;<=>?@[]^_`{|}~"


# ---------------------------------------------------------------- instructions

def test_alloca_with_and_without_attributes():
    a = only(fn("%x = alloca : memref<f32x16x8,local>"))
    assert isinstance(a, ins.Alloca) and a.attrs == {}
    b = only(fn("%x = alloca {alignment=16} : memref<f32x16,local>"))
    assert b.attrs == {"alignment": 16}


@pytest.mark.parametrize("text, cls, fields", [
    ("axpby.n %a, %V, %b, %W", ins.Axpby, {"transpose": False, "atomic": False}),
    ("axpby.t.atomic %a, %M, %b, %M", ins.Axpby, {"transpose": True, "atomic": True}),
    ("cumsum %a, %M, 1, %b, %M", ins.Cumsum, {"mode": 1, "atomic": False}),
    ("cumsum.atomic %a, %V, 0, %b, %W", ins.Cumsum, {"mode": 0, "atomic": True}),
    ("gemm.n.t %a, %M, %M, %b, %M", ins.Gemm,
     {"transpose_a": False, "transpose_b": True, "atomic": False}),
    ("gemm.t.n.atomic %a, %M, %M, %b, %M", ins.Gemm,
     {"transpose_a": True, "transpose_b": False, "atomic": True}),
    ("gemv.t %a, %M, %V, %b, %W", ins.Gemv, {"transpose": True, "atomic": False}),
    ("gemv.n.atomic %a, %M, %V, %b, %W", ins.Gemv, {"transpose": False, "atomic": True}),
    ("ger %a, %V, %W, %b, %M", ins.Ger, {"atomic": False}),
    ("ger.atomic %a, %V, %W, %b, %M", ins.Ger, {"atomic": True}),
    ("hadamard_product %a, %V, %W, %b, %V", ins.HadamardProduct, {"atomic": False}),
    ("hadamard_product.atomic %a, %V, %W, %b, %V", ins.HadamardProduct, {"atomic": True}),
    ("sum.n %a, %M, %b, %V", ins.Sum, {"transpose": False, "atomic": False}),
    ("sum.t.atomic %a, %V, %b, %S", ins.Sum, {"transpose": True, "atomic": True}),
])
def test_blas_instructions(text, cls, fields):
    inst = only(fn(text))
    assert type(inst) is cls
    assert {k: getattr(inst, k) for k in fields} == fields
    assert inst.alpha.name == "a" and inst.beta.name == "b"


def test_foreach_with_and_without_type():
    inst = only(fn("foreach (%x, %y) = (%i, %i), (%j, %j) {\n"
                   "  %v = load %M[%x, %y] : f32\n  store %v, %M[%y, %x]\n}"))
    assert isinstance(inst, ins.Foreach) and inst.loop_type is index
    assert [v.name for v in inst.body.args] == ["x", "y"]
    assert [v.name for v in inst.lower] == ["i", "i"] and [v.name for v in inst.upper] == ["j", "j"]
    typed = only(fn("foreach (%x) : i32 = (%n), (%m) {}"))
    assert typed.loop_type is i32 and typed.body.args[0].type is i32


def test_parallel_region():
    inst = only(fn("parallel {\n  %l = builtin.subgroup_local_id : i32\n  barrier.local\n}"))
    assert isinstance(inst, ins.Parallel) and len(inst.body.instructions) == 2


@pytest.mark.parametrize("op", [o.value for o in ins.ArithBinaryOp])
def test_arith_binary(op):
    inst = only(fn(f"%x = arith.{op} %a, %b : f32"))
    assert isinstance(inst, ins.ArithBinary) and inst.op.value == op


@pytest.mark.parametrize("op", [o.value for o in ins.ArithUnaryOp])
def test_arith_unary(op):
    inst = only(fn(f"%x = arith.{op} %c : c32"))
    assert isinstance(inst, ins.ArithUnary) and inst.op.value == op


def test_arith_on_bool_and_coopmatrix():
    assert only(fn("%x = arith.and %flag, %flag : bool")).result.type is bool_
    inst = only(fn("%p = constant 1.0 : coopmatrix<f32x8x8,matrix_acc>\n"
                   "%q = arith.add %p, %p : coopmatrix<f32x8x8,matrix_acc>"))
    assert isinstance(inst.result.type, CoopMatrixType)


@pytest.mark.parametrize("text, fences", [
    ("barrier", (False, False)), ("barrier.global", (True, False)),
    ("barrier.local", (False, True)), ("barrier.global.local", (True, True)),
])
def test_barrier(text, fences):
    inst = only(fn(text))
    assert (inst.global_fence, inst.local_fence) == fences


@pytest.mark.parametrize("word", list(ins.Builtin.keywords))
def test_builtins(word):
    """Both versions' spellings: `builtin.group_id` (seed), `group_id.x` (newest)."""
    inst = only(fn(f"%x = {word} : i32"))
    which = ins.Builtin.keywords[word]
    expected = ins.SpmdBuiltin if which in ins.SPMD_BUILTINS else ins.Builtin
    assert type(inst) is expected and inst.builtin is which
    # or the newest with the seed's prefix, as the reference spelled them between the versions
    assert word in (which.seed, which.newest, f"builtin.{which.newest}")

def test_cast_cmp_math():
    assert isinstance(only(fn("%x = cast %n : f32")), ins.Cast)
    assert isinstance(only(fn("%p = constant 1.0 : coopmatrix<f32x8x8,matrix_a>\n"
                              "%x = cast %p : coopmatrix<f16x8x8,matrix_a>")), ins.Cast)
    for cond in ins.CmpCond:
        for word in (f"cmp.{cond.value}", cond.newest):
            inst = only(fn(f"%x = {word} %a, %b : bool"))
            assert inst.cond is cond and inst.result.type is bool_
    for op in ins.SEED_MATH:
        assert only(fn(f"%x = math.{op.value} %a : f32")).op is op
    for op in ins.MathUnaryOp:
        assert only(fn(f"%x = {op.value} %a : f32")).op is op


@pytest.mark.parametrize("text, mode, shape, dynamic", [
    ("expand %T[1 -> 2x3] : memref<f32x4x2x3x8>", 1, [2, 3], []),
    ("expand %T[0->2 x 2] : memref<f32x2x2x6x8>", 0, [2, 2], []),
    ("expand %T[1 -> %i x 2] : memref<f32x4x?x2x8>", 1, [DYNAMIC, 2], ["i"]),
    ("expand %T[1 -> 2 x%i] : memref<f32x4x2x?x8>", 1, [2, DYNAMIC], ["i"]),
    ("expand %T[2 -> %i x 2 x %j] : memref<f32x4x6x?x2x?>", 2, [DYNAMIC, 2, DYNAMIC], ["i", "j"]),
    ("expand %T[2 -> 2x2x2] : memref<f32x4x6x2x2x2>", 2, [2, 2, 2], []),
])
def test_expand(text, mode, shape, dynamic):
    inst = only(fn("%x = " + text))
    assert isinstance(inst, ins.Expand)
    assert (inst.mode, inst.static_shape) == (mode, shape)
    assert [v.name for v in inst.operands[1:]] == dynamic


def test_for_loop_forms():
    plain = only(fn("for %k = %i, %j {\n}"))
    assert isinstance(plain, ins.For) and plain.step is None and plain.loop_type is index
    stepped = only(fn("for %k : i32 = %n, %m, %n {} {unroll=false}"))
    assert stepped.step.name == "n" and stepped.loop_type is i32
    assert stepped.attrs == {"unroll": False}
    carried = only(fn("%r, %s = for %k = %i, %j init(%x = %a, %y = %flag) -> (f32, bool) {\n"
                      "  %z = arith.add %x, %x : f32\n  yield (%z, %y)\n} {unroll=true}"))
    assert [v.name for v in carried.results] == ["r", "s"]
    assert [v.type for v in carried.results] == [f32, bool_]
    assert [v.name for v in carried.carried] == ["x", "y"]
    assert [v.name for v in carried.init] == ["a", "flag"]
    assert carried.attrs == {"unroll": True}


def test_fuse_size_lifetime():
    inst = only(fn("%x = fuse %T[0, 2] : memref<f32x192>"))
    assert (inst.first, inst.last) == (0, 2)
    size = only(fn("%x = size %T[2] : index"))
    assert size.mode == 2 and size.result.type is index
    stop = only(fn("%x = alloca : memref<f32x4,local>\nlifetime_stop %x"))
    assert isinstance(stop, ins.LifetimeStop)


def test_if_forms():
    bare = only(fn("if %flag {\n  barrier\n}"))
    assert isinstance(bare, ins.If) and bare.results == [] and bare.otherwise.instructions == []
    both = only(fn("%x, %y = if %flag -> (f32, i32) {\n  yield (%a, %n)\n} else {\n"
                   "  yield (%b, %m)\n}"))
    assert [r.type for r in both.results] == [f32, i32]
    assert len(both.then.instructions) == len(both.otherwise.instructions) == 1
    else_only = only(fn("if %flag {} else {\n  barrier\n}"))
    assert len(else_only.otherwise.instructions) == 1


def test_load_and_store_forms():
    assert isinstance(only(fn("%x = load %S[] : f32")), ins.Load)
    assert only(fn("%x = load %M[%i, %j] : f32")).indices[1].name == "j"
    assert isinstance(only(fn("%x = load %G[%i] : memref<f32x8>")).result.type, MemrefType)
    for flag in ins.StoreFlag:
        inst = only(fn(f"store{flag.value} %a, %M[%i, %j]"))
        assert inst.flag is flag and inst.value.name == "a"
    assert only(fn("store %a, %S[]")).indices == []


@pytest.mark.parametrize("slices, offsets, sizes, single, dynamic", [
    ("%i, %j", [DYNAMIC, DYNAMIC], [0, 0], [True, True], ["i", "j"]),
    ("2:4, %i", [2, DYNAMIC], [4, 0], [False, True], ["i"]),
    ("%i:4, 2:%j", [DYNAMIC, 2], [4, DYNAMIC], [False, False], ["i", "j"]),
    ("%i:%j, 1:0", [DYNAMIC, 1], [DYNAMIC, 0], [False, False], ["i", "j"]),
    (":, %i", [0, DYNAMIC], [ins.WHOLE_MODE, 0], [False, True], ["i"]),
    (":,:", [0, 0], [ins.WHOLE_MODE, ins.WHOLE_MODE], [False, False], []),
    ("0, 0", [0, 0], [0, 0], [True, True], []),
])
def test_subview_forms(slices, offsets, sizes, single, dynamic):
    inst = only(fn(f"%x = subview %M[{slices}] : memref<f32x4>"))
    assert (inst.static_offsets, inst.static_sizes, inst.single_index) == (offsets, sizes, single)
    assert [v.name for v in inst.operands[1:]] == dynamic


def test_subview_of_order_zero():
    assert only(fn("%x = subview %S[] : memref<f32>")).static_offsets == []


def test_subview_keeps_offsets_before_sizes():
    inst = only(fn("%x = subview %M[%a:%b, %i:%j] : memref<f32x?x?>"))
    assert [v.name for v in inst.offsets] == ["a", "i"]
    assert [v.name for v in inst.sizes] == ["b", "j"]


def test_yield_forms():
    inst = only(fn("%r = for %k = %i, %j init(%x = %a) -> (f32) {\n  yield (%x)\n}"))
    assert isinstance(inst.body.instructions[-1], ins.Yield)
    empty = only(fn("if %flag {\n  yield ()\n}"))
    assert empty.then.instructions[0].operands == []


def test_cooperative_matrix_instructions():
    body = ("parallel {\n"
            "  %A = cooperative_matrix_load.n %H[%i, %j] : coopmatrix<f16x16x8,matrix_a>\n"
            "  %B = cooperative_matrix_load.t.rows_checked %H[%i, %j] : coopmatrix<f16x8x16,matrix_b>\n"
            "  %C = cooperative_matrix_load.n.cols_checked %M[%i, %j] : coopmatrix<f32x8x8,matrix_acc>\n"
            "  %E = cooperative_matrix_load.t.both_checked %M[%i, %j] : coopmatrix<f32x8x8,matrix_acc>\n"
            "  %P = cooperative_matrix_mul_add %A, %B, %C : coopmatrix<f32x16x16,matrix_acc>\n"
            "  %F = cooperative_matrix_scale %a, %P : coopmatrix<f32x16x16,matrix_acc>\n"
            "  cooperative_matrix_store %F, %M[%i, %j]\n"
            "  cooperative_matrix_store.rows_checked.atomic %F, %M[%i, %j]\n"
            "  cooperative_matrix_store.both_checked.atomic_add %F, %M[%i, %j]\n"
            "  cooperative_matrix_store.atomic %F, %M[%i, %j]\n"
            "}")
    region = only(fn(body)).body.instructions
    loads = region[:4]
    assert [(x.transpose, x.checked) for x in loads] == [
        (False, ins.CheckedFlag.NONE), (True, ins.CheckedFlag.ROWS),
        (False, ins.CheckedFlag.COLS), (True, ins.CheckedFlag.BOTH)]
    assert isinstance(region[4], ins.CoopMatrixMulAdd)
    assert isinstance(region[5], ins.CoopMatrixScale)
    stores = region[6:]
    assert [(s.checked, s.flag) for s in stores] == [
        (ins.CheckedFlag.NONE, ins.StoreFlag.NONE), (ins.CheckedFlag.ROWS, ins.StoreFlag.ATOMIC),
        (ins.CheckedFlag.BOTH, ins.StoreFlag.ATOMIC_ADD),
        (ins.CheckedFlag.NONE, ins.StoreFlag.ATOMIC)]


@pytest.mark.parametrize("op", ["add", "max", "min"])
@pytest.mark.parametrize("mode", ["reduce", "inclusive_scan", "exclusive_scan"])
def test_subgroup_operations(op, mode):
    inst = only(fn(f"parallel {{\n  %x = subgroup_{op}.{mode} %a : f32\n}}")).body.instructions[0]
    assert (inst.op.value, inst.mode.value) == (op, mode)


def test_subgroup_broadcast():
    inst = only(fn("parallel {\n  %x = subgroup_broadcast %a, %n : f32\n}")).body.instructions[0]
    assert isinstance(inst, ins.SubgroupBroadcast)


def test_whitespace_and_comments_are_free():
    dense = "func @f(%a:f32){%x=arith.add %a,%a:f32;c\n%y=constant 1:i32}"
    airy = ("func @f ( %a : f32 )  {  ; comment\n\n  %x = arith.add %a , %a : f32\n"
            "  %y = constant 1 : i32  ; trailing comment\n}")
    roundtrip(dense)
    from parser_testlib import assert_same_ir
    assert_same_ir(parse(dense), parse(airy))


def test_names_are_kept_for_printing():
    prog = roundtrip(fn("%0 = arith.add %a, %b : f32\n%tmp_1 = arith.mul %0, %0 : f32"))
    assert [r.name for i in prog.functions[0].body for r in i.results] == ["0", "tmp_1"]


def test_region_arguments_and_results_do_not_clash():
    # The spec's Fibonacci example (with `constant ... : type`): `%fn` is defined
    # in the loop body and again as a result of the loop; the scopes differ.
    prog = roundtrip(
        "func @fib() {\n"
        "  %from = constant 2 : i32\n  %to = constant 6 : i32\n"
        "  %f0 = constant 0 : i64\n  %f1 = constant 1 : i64\n"
        "  %fn_1, %fn = for %n : i32 = %from, %to init(%fn_2 = %f0, %fn_1 = %f1) -> (i64, i64) {\n"
        "    %fn = arith.add %fn_2, %fn_1 : i64\n"
        "    yield (%fn_1, %fn)\n"
        "  }\n}")
    loop = prog.functions[0].body.instructions[-1]
    assert [v.name for v in loop.results] == ["fn_1", "fn"]
    assert loop.body.instructions[-1].operands[1] is loop.body.instructions[0].result
