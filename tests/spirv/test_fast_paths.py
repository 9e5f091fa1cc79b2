"""The compile-speed paths of the SPIR-V builder give what the checked paths give
(benchmarks/compile_speed_warm.md): `Block.value`, shared ids, `Module.release`."""

import gc
from pathlib import Path

import pytest

from tinyc.pipeline import check_source
from tinyc.passes import run_pipeline
from tinyc.spirv import Id, Module
from tinyc.spirv.codegen import generate
from tinyc.spirv.instruction import Instruction, encode
from tinyc.spirv.spv import ExecutionModel, MemoryAccess, Op, OpenCLStd, StorageClass
from tinyc.spirv.tools import disassemble, validate


def _kernel_block():
    m = Module()
    i64, f32 = m.type_int(64), m.type_float(32)
    ptr = m.type_pointer(StorageClass.CrossWorkgroup, f32)
    f = m.function(m.type_void(), [ptr, i64])
    return m, f, f.block(), i64, f32, ptr


def test_value_makes_what_op_makes():
    m, f, blk, i64, f32, ptr = _kernel_block()
    base, n = f.params
    pairs = [(Op.IAdd, i64, n, n), (Op.InBoundsPtrAccessChain, ptr, base, n),
             (Op.Load, f32, base, MemoryAccess.Aligned, 4)]
    for opcode, result_type, *operands in pairs:
        by_op = blk.op(opcode, result_type, *operands)
        by_value = blk.value(opcode, result_type, *operands)
        first, second = blk.instructions[-2:]
        assert (second.opcode, second.result_type, second.operands) == (first.opcode, first.result_type,
                                                                       first.operands)
        assert by_value == by_op + 1 and second.result == by_value
        assert m.value_type(by_value) == m.value_type(by_op) == result_type
        assert encode([second])[1:] == [result_type, by_value, *operands]


def test_ext_goes_through_value_and_validates():
    m, f, blk, i64, f32, ptr = _kernel_block()
    base, _ = f.params
    x = blk.op(Op.Load, f32, base, MemoryAccess.Aligned, 4)
    y = blk.ext(OpenCLStd.fma, f32, x, x, x)
    blk.op(Op.Store, base, y, MemoryAccess.Aligned, 4)
    blk.op(Op.Return)
    m.entry_point(ExecutionModel.Kernel, f, "k")
    (call,) = [i for i in blk.instructions if i.opcode == Op.ExtInst]
    assert call.result == y and call.operands[1:] == [OpenCLStd.fma, x, x, x]
    validate(m.assemble())


def test_a_bad_operand_given_to_value_is_refused_when_encoded():
    m, f, blk, i64, f32, ptr = _kernel_block()
    blk.value(Op.IAdd, i64, f.params[1], 2.5)  # not an id, enumerant, literal word or string
    with pytest.raises(TypeError, match="bad SPIR-V operand"):
        encode(blk.instructions)


def test_ids_of_two_modules_are_equal_numbers():
    a, b = Module(), Module()
    ids = [a.new_id() for _ in range(3000)]
    assert ids == list(range(1, 3001)) and all(type(i) is Id for i in ids)
    assert [b.new_id() for _ in range(3)] == [1, 2, 3] and a.bound == 3001 and b.bound == 4


FUSED = (Path(__file__).resolve().parents[2] / "samples" / "fused_kernel.ir").read_text()


def test_codegen_leaves_no_instruction_for_the_collector():
    program = check_source(FUSED)
    run_pipeline(program, used={}, tuned={})
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        binary, _ = generate(program)
        left = [o for o in gc.get_objects() if type(o) is Instruction]
    finally:
        if was:
            gc.enable()
    assert left == []  # freed by reference counting when generate returned
    assert "OpEntryPoint Kernel" in disassemble(binary)
    validate(binary)
