"""Module builder: ids, uniquified types/constants, encoding, layout."""

import struct

import numpy as np
import pytest

from tinyc.spirv import Id, Module
from tinyc.spirv.instruction import Instruction, string_words
from tinyc.spirv.literals import bf16_bits, float_bits, int_words
from tinyc.spirv.spv import BuiltIn, Capability, Decoration, ExecutionModel, FunctionControl, LinkageType, Op, StorageClass
from tinyc.spirv.tools import disassemble, validate


def words_of(binary: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(binary) // 4}I", binary))


def constant_operands(m: Module, cid: Id) -> list:
    """Operands of the OpConstant that defines `cid`."""
    (inst,) = [i for i in m.instructions() if i.result == cid]
    return inst.operands


def test_types_are_uniquified():
    m = Module()
    f32 = m.type_float(32)
    assert m.type_float(32) == f32 and isinstance(f32, Id)
    assert m.type_int(32) != m.type_int(64)
    assert m.type_vector(f32, 4) == m.type_vector(m.type_float(32), 4)
    assert m.type_pointer(StorageClass.CrossWorkgroup, f32) == m.type_pointer(5, f32)
    assert m.type_pointer(StorageClass.Workgroup, f32) != m.type_pointer(StorageClass.CrossWorkgroup, f32)
    assert m.type_array(f32, 16) == m.type_array(f32, 16)
    assert m.type_function(m.type_void(), [f32]) == m.type_function(m.type_void(), (f32,))
    assert m.type_struct([f32, f32]) == m.type_struct([f32, f32])
    assert m.type_key(m.type_vector(f32, 4)) == ("vector", f32, 4)
    n_types = sum(1 for i in m.instructions() if i.opcode.name.startswith("Type"))
    assert n_types == 10  # void float int32 (also the array length) int64 v4 ptrCW ptrWG array fn struct


def test_constants_are_uniquified():
    m = Module()
    f32, u32 = m.type_float(32), m.type_int(32)
    assert m.constant(f32, 1.0) == m.constant(f32, 1) == m.const_float(1.0)
    assert m.constant(u32, 1) != m.constant(f32, 1.0)
    assert m.const_bool(True) != m.const_bool(False)
    v = m.type_vector(f32, 2)
    assert m.constant(v, 0.5) == m.constant_composite(v, [m.const_float(0.5)] * 2)
    assert m.constant(v, [1.0, 2.0]) != m.constant(v, [2.0, 1.0])
    assert m.constant_null(v) == m.constant_null(v)
    assert m.undef(f32) == m.undef(f32)


@pytest.mark.parametrize("value, width, words", [
    (1, 32, [1]), (-1, 32, [0xFFFFFFFF]), (-1, 8, [0xFF]), (-128, 8, [0x80]), (255, 8, [0xFF]),
    (-2, 16, [0xFFFE]), (-1, 64, [0xFFFFFFFF, 0xFFFFFFFF]), (1 << 40, 64, [0, 1 << 8]),
    (0x1_2345_6789, 64, [0x2345_6789, 1]),
])
def test_int_constant_words(value, width, words):
    assert int_words(value, width) == words
    m = Module()
    assert constant_operands(m, m.const_int(value, width)) == words


@pytest.mark.parametrize("value, width", [(256, 8), (-129, 8), (1 << 64, 64)])
def test_int_constant_out_of_range(value, width):
    with pytest.raises(ValueError, match="does not fit"):
        int_words(value, width)


@pytest.mark.parametrize("value", [0.1, -2.5, 1e-40, 3.4e38, 1e39, float("inf"), -0.0, 1 / 3])
@pytest.mark.parametrize("width, dtype, itype", [
    (16, np.float16, np.uint16), (32, np.float32, np.uint32), (64, np.float64, np.uint64)])
def test_float_constant_bits(value, width, dtype, itype):
    with np.errstate(over="ignore"):
        expected = int(np.array([value], dtype).view(itype)[0])
    assert float_bits(value, width) == expected
    m = Module()
    words = constant_operands(m, m.const_float(value, width))
    assert sum(w << (32 * i) for i, w in enumerate(words)) == expected
    assert len(words) == (2 if width == 64 else 1)


def test_f32_constant_exact_bits():
    assert float_bits(0.1, 32) == 0x3DCCCCCD
    assert float_bits(1.0, 16) == 0x3C00
    assert float_bits(65520.0, 16) == 0x7C00  # rounds to inf, no exception


def _bf16_reference(x: float) -> int:
    """Exact round-to-nearest-even to bf16 via fractions (slow, for testing)."""
    from fractions import Fraction
    if x != x:
        return 0x7FC0
    bits = [b for b in range(0x10000) if (b & 0x7F80) != 0x7F80]
    candidates = {b: float(np.array([b << 16], np.uint32).view(np.float32)[0]) for b in bits}
    sign = [b for b in candidates if (b >> 15) == (x < 0 or (x == 0 and str(x)[0] == "-"))]
    best = min(sign, key=lambda b: (abs(Fraction(candidates[b]) - Fraction(x)), b & 1))
    limit = Fraction(2) ** 128 - Fraction(2) ** (127 - 8)  # halfway between max bf16 and 2^128
    if abs(Fraction(x)) >= limit:
        return 0xFF80 if x < 0 else 0x7F80
    return best


@pytest.mark.parametrize("x", [1.0, 0.1, -3.14159, 1.0 + 2 ** -8, 1.0 + 2 ** -8 + 2 ** -30,
                               1.0 + 3 * 2 ** -8, 1e-39, -1e-42, 3.3e38, 3.4e38, 1e39, 0.0, -0.0])
def test_bf16_bits_round_to_nearest_even(x):
    assert bf16_bits(x) == _bf16_reference(x)


def test_bf16_double_rounding_case():
    # 1 + 2^-8 is a tie in bf16 (-> 1.0); 2^-30 more must round up, but
    # rounding to f32 first would drop it and give 1.0.
    assert bf16_bits(1.0 + 2 ** -8) == 0x3F80
    assert bf16_bits(1.0 + 2 ** -8 + 2 ** -30) == 0x3F81
    m = Module()
    assert constant_operands(m, m.const_bf16(1.0)) == [0x3F80]


def test_string_encoding():
    assert string_words("") == [0]
    assert string_words("abc") == [0x00636261]
    assert string_words("abcd") == [0x64636261, 0]


def test_instruction_words_and_header():
    m = Module(version=(1, 3))
    inst = Instruction(Op.FAdd, Id(1), Id(4), [Id(2), Id(3)])
    assert inst.words() == [(5 << 16) | 129, 1, 4, 2, 3]
    words = words_of(m.assemble())
    assert words[:5] == [0x07230203, 0x00010300, 0, m.bound, 0]


def test_op_argument_rules():
    m = Module()
    f = m.function(m.type_void(), [])
    blk = f.block()
    with pytest.raises(TypeError, match="result type"):
        blk.op(Op.FAdd, 1, 2)  # plain ints are literals, not a type id
    with pytest.raises(TypeError, match="bad operand"):
        blk.op(Op.Store, None, None)
    with pytest.raises(TypeError, match="no result id"):
        blk.op(Op.Return, result=m.new_id())
    assert blk.op(Op.Return) is None and blk.terminated


def test_unterminated_block_is_an_error():
    m = Module()
    m.function(m.type_void(), [], name="f").block()
    with pytest.raises(ValueError, match="no terminator"):
        m.assemble()


def test_layout_and_determinism():
    m = Module()
    f32 = m.type_float(32)
    f = m.function(m.type_void(), [m.type_pointer(StorageClass.CrossWorkgroup, f32)], name="k",
                   control=FunctionControl.Inline)
    blk = f.block()
    blk.op(Op.Store, f.params[0], m.const_float(2.0))
    blk.op(Op.Return)
    m.entry_point(ExecutionModel.Kernel, f, "k")
    m.decorate(f.params[0], Decoration.Alignment, 16)
    m.decorate(f.params[0], Decoration.Alignment, 16)  # duplicates are dropped
    order = [i.opcode for i in m.instructions()]
    sections = [Op.Capability, Op.MemoryModel, Op.Name, Op.Decorate, Op.TypeFloat, Op.Function]
    assert [order.index(s) for s in sections] == sorted(order.index(s) for s in sections)
    assert order.count(Op.Decorate) == 1
    assert m.assemble() == m.assemble()
    validate(m.assemble())
    text = disassemble(m.assemble())
    assert "OpEntryPoint Kernel %k \"k\"\n" in text
    assert f"OpDecorate %{f.params[0]} Alignment 16" in text
    assert "OpFunction %void Inline" in text


def test_local_variables_go_to_entry_block():
    m = Module()
    f32 = m.type_float(32)
    f = m.function(f32, [], name="g")
    entry, second = f.block(), f.block()
    entry.op(Op.Branch, second.label)
    var = f.variable(m.type_pointer(StorageClass.Function, f32), m.const_float(1.0))
    second.op(Op.ReturnValue, second.op(Op.Load, f32, var))
    insts = f.instructions()
    assert [i.opcode for i in insts[:4]] == [Op.Function, Op.Label, Op.Variable, Op.Branch]
    m.capability(Capability.Linkage)
    m.decorate(f.id, Decoration.LinkageAttributes, "g", LinkageType.Export)  # a library function
    validate(m.assemble())


def test_interface_follows_calls_and_value_types():
    """A builtin used only in a called helper is still listed on the kernel's entry point."""
    m = Module()
    u64 = m.type_int(64)
    gid = m.builtin_variable(BuiltIn.GlobalInvocationId)
    assert m.builtin_variable(BuiltIn.GlobalInvocationId) == gid
    helper = m.function(u64, [], name="gid_x")
    hb = helper.block()
    ids = hb.op(Op.Load, m.type_vector(u64, 3), gid)
    hb.op(Op.ReturnValue, hb.op(Op.CompositeExtract, u64, ids, 0))
    k = m.function(m.type_void(), [m.type_pointer(StorageClass.CrossWorkgroup, u64)], name="k")
    kb = k.block()
    x = kb.op(Op.FunctionCall, u64, helper.id)
    kb.op(Op.Store, k.params[0], x)
    kb.op(Op.Return)
    m.entry_point(ExecutionModel.Kernel, k, "k")
    assert m.value_type(x) == u64 and m.value_type(m.const_int(3, 64)) == u64
    assert m.value_type(k.params[0]) == m.type_pointer(StorageClass.CrossWorkgroup, u64)
    validate(m.assemble())
    assert 'OpEntryPoint Kernel %k "k" %gl_GlobalInvocationID' in disassemble(m.assemble())
