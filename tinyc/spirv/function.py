"""Functions and basic blocks of a module under construction.

Blocks are created (and emitted) in creation order, but instructions can be
appended to any block at any time, so codegen may create a merge block
before filling the branches that jump to it. Labels can be allocated ahead
with `Module.new_id()` and handed to `Function.block(label=...)`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinyc.spirv.instruction import Id, Instruction, Operand, make_instruction
from tinyc.spirv.spv import FunctionControl, Op, OpenCLStd, StorageClass

if TYPE_CHECKING:
    from tinyc.spirv.module import Module

TERMINATORS = frozenset({Op.Branch, Op.BranchConditional, Op.Switch, Op.Return, Op.ReturnValue,
                         Op.Unreachable, Op.Kill, Op.TerminateInvocation})


class Block:
    """A basic block: a label id and its instructions."""

    def __init__(self, function: Function, label: Id) -> None:
        self.function = function
        self.label = label
        self.instructions: list[Instruction] = []
        module = function.module  # (what every append needs, looked up once per block)
        self._new_id, self._value_types = module.new_id, module.value_types

    def inst(self, opcode: Op, *args: Operand, result: Id | None = None) -> Instruction:
        """Append an instruction and return it (its operands stay patchable).

        Arguments follow the assembly text: result type first iff the opcode
        has one, then the operands (Id, int literal, enum member, str).
        """
        return self._append(opcode, args, result)

    def op(self, opcode: Op, *args: Operand, result: Id | None = None) -> Id | None:
        """Append an instruction; returns its result id (None if it has none)."""
        return self._append(opcode, args, result).result

    def _append(self, opcode: Op, args: tuple[Operand, ...], result: Id | None) -> Instruction:
        inst = make_instruction(opcode, args, result, self._new_id)
        if inst.result_type is not None and inst.result is not None:
            self._value_types[inst.result] = inst.result_type
        self.instructions.append(inst)
        return inst

    def value(self, opcode: Op, result_type: Id, *operands: Operand) -> Id:
        """Append an instruction that has a result type, with a fresh result id; returns it.

        What `op` does for such an opcode, for codegen's most frequent instructions (index
        arithmetic, addresses, loads): the caller's operands are ids, enum members and
        literal words, taken as they are (`op` checks each one).
        """
        result = self._new_id()
        self._value_types[result] = result_type
        self.instructions.append(Instruction(opcode, result_type, result, [*operands]))
        return result

    def phi(self, result_type: Id, *incoming: tuple[Id, Id], result: Id | None = None) -> Instruction:
        """OpPhi placed after the block's other Phis; extend `.operands` later
        with (value, parent label) pairs for back edges."""
        inst = make_instruction(Op.Phi, (result_type, *[x for pair in incoming for x in pair]),
                                result, self.function.module.new_id)
        self.function.module.value_types[inst.result] = result_type
        at = 0
        while at < len(self.instructions) and self.instructions[at].opcode == Op.Phi:
            at += 1
        self.instructions.insert(at, inst)
        return inst

    def ext(self, instruction: OpenCLStd, result_type: Id, *args: Operand) -> Id:
        """OpExtInst of the OpenCL.std set (imported on first use)."""
        ocl = self.function.module.ext_inst_import("OpenCL.std")
        return self.value(Op.ExtInst, result_type, ocl, instruction, *args)

    @property
    def terminated(self) -> bool:
        """True once the block ends in a branch/return/unreachable."""
        return bool(self.instructions) and self.instructions[-1].opcode in TERMINATORS

    def __repr__(self) -> str:
        return f"Block({self.label!r}, {len(self.instructions)} instructions)"


class Function:
    """An OpFunction with parameters and blocks."""

    def __init__(self, module: Module, return_type: Id, param_types: list[Id],
                 name: str | None, control: FunctionControl) -> None:
        self.module = module
        self.return_type = return_type
        self.type = module.type_function(return_type, param_types)
        self.id = module.new_id()
        self.control = FunctionControl(control)
        self.params = [module.new_id() for _ in param_types]
        self.param_types = list(param_types)
        self.blocks: list[Block] = []
        self._local_vars: list[Instruction] = []
        for param, ptype in zip(self.params, param_types):
            module.value_types[param] = ptype
        if name is not None:
            module.name(self.id, name)

    def block(self, label: Id | None = None) -> Block:
        """Append a new block (the first one created is the entry block)."""
        blk = Block(self, label if label is not None else self.module.new_id())
        self.blocks.append(blk)
        return blk

    def variable(self, ptr_type: Id, initializer: Id | None = None) -> Id:
        """Function-storage OpVariable; emitted at the top of the entry block."""
        var = self.module.new_id()
        operands: list[Operand] = [StorageClass.Function]
        if initializer is not None:
            operands.append(initializer)
        self._local_vars.append(Instruction(Op.Variable, ptr_type, var, operands))
        self.module.value_types[var] = ptr_type
        return var

    def instructions(self) -> list[Instruction]:
        """The function as a flat instruction list, ready to encode."""
        if not self.blocks:
            raise ValueError(f"function {self.id!r} has no blocks")
        out = [Instruction(Op.Function, self.return_type, self.id, [self.control, self.type])]
        out += [Instruction(Op.FunctionParameter, t, p) for p, t in zip(self.params, self.param_types)]
        for index, blk in enumerate(self.blocks):
            if not blk.terminated:
                raise ValueError(f"block {blk.label!r} of function {self.id!r} has no terminator")
            out.append(Instruction(Op.Label, None, blk.label))
            if index == 0:
                out += self._local_vars
            out += blk.instructions
        out.append(Instruction(Op.FunctionEnd))
        return out

    def __repr__(self) -> str:
        return f"Function({self.id!r}, {len(self.blocks)} blocks)"
