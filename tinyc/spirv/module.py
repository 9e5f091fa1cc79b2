"""In-memory SPIR-V module for OpenCL kernels, and its binary assembler.

A `Module` allocates ids, uniquifies types and constants (`Uniquifier`),
keeps each section of the logical layout in its own list, and at
`assemble()` time infers capabilities/extensions and entry-point interfaces
from what was actually emitted, so codegen never declares them by hand.
Always Physical64 addressing, OpenCL memory model, Addresses + Kernel.
"""

from __future__ import annotations

import struct

from tinyc.spirv.enums import Enumerant
from tinyc.spirv.function import Function
from tinyc.spirv.instruction import Id, Instruction, Operand, encode, make_instruction
from tinyc.spirv.requirements import Inference
from tinyc.spirv.spv import (
    ENUM_PARAMETERS, KINDS, MAGIC_NUMBER, AddressingModel, BuiltIn, Capability, Decoration,
    ExecutionMode, ExecutionModel, FunctionControl, MemoryModel, Op, StorageClass,
)
from tinyc.spirv.uniquify import Uniquifier

_B = BuiltIn
VECTOR3_BUILTINS = frozenset({_B.GlobalInvocationId, _B.WorkgroupId, _B.LocalInvocationId,
                              _B.NumWorkgroups, _B.WorkgroupSize, _B.GlobalSize, _B.GlobalOffset,
                              _B.EnqueuedWorkgroupSize})
"""Declared as `OpTypeVector %ulong 3` (size_t[3] under Physical64)."""
SIZE_T_BUILTINS = frozenset({_B.GlobalLinearId, _B.LocalInvocationIndex})
"""Scalar size_t builtins; all other builtins default to a 32-bit uint."""
_IDS: list[Id] = [Id(0)]
"""Id(n) at index n, shared by every module (ids are immutable ints): a module makes one
per instruction, and allocating an int subclass costs more than looking one up."""


class Module(Uniquifier):
    """A SPIR-V module under construction; `assemble()` gives the binary."""

    def __init__(self, version: tuple[int, int] = (1, 4)) -> None:
        self.version = version
        self._bound = 1
        self._capabilities: dict[Capability, None] = dict.fromkeys([Capability.Addresses, Capability.Kernel])
        self._extensions: dict[str, None] = {}
        self._ext_imports: dict[str, Id] = {}
        self._ext_import_insts: list[Instruction] = []
        self._entry_points: list[tuple[ExecutionModel, Function, str]] = []
        self._execution_modes: list[Instruction] = []
        self._debug: list[Instruction] = []
        self._annotations: dict[tuple, Instruction] = {}
        self._globals: list[Instruction] = []
        self._global_vars: dict[Id, StorageClass] = {}
        self._builtins: dict[BuiltIn, Id] = {}
        self.functions: list[Function] = []
        self.value_types: dict[Id, Id] = {}
        super().__init__(self.new_id, self._globals.append)

    # -- ids and explicit requirements ----------------------------------------
    def new_id(self) -> Id:
        """A fresh result id (for forward references: labels, Phi inputs)."""
        bound = self._bound
        self._bound = bound + 1
        if bound < len(_IDS):
            return _IDS[bound]
        _IDS.extend(Id(n) for n in range(len(_IDS), 2 * bound))
        return _IDS[bound]

    def value_type(self, value: Id) -> Id | None:
        """Type id of a result, parameter, variable or constant made by this module."""
        return self.value_types.get(value) or self.constant_types.get(value)

    @property
    def bound(self) -> int:
        """One more than the largest id allocated so far."""
        return self._bound

    def capability(self, cap: Capability) -> None:
        """Declare a capability explicitly (most are inferred)."""
        self._capabilities[Capability(cap)] = None

    def extension(self, name: str) -> None:
        """Declare an extension explicitly (most are inferred)."""
        self._extensions[name] = None

    def ext_inst_import(self, name: str = "OpenCL.std") -> Id:
        """Id of an extended instruction set import (deduplicated)."""
        if name not in self._ext_imports:
            self._ext_imports[name] = self.new_id()
            self._ext_import_insts.append(Instruction(Op.ExtInstImport, None, self._ext_imports[name], [name]))
        return self._ext_imports[name]

    # -- global section ------------------------------------------------------------
    def global_op(self, opcode: Op, *args: Operand, result: Id | None = None) -> Id | None:
        """Escape hatch: any instruction in the types/constants/variables section."""
        inst = make_instruction(opcode, args, result, self.new_id)
        self._globals.append(inst)
        if inst.result is not None and inst.result_type is not None:
            self.value_types[inst.result] = inst.result_type
        return inst.result

    def variable(self, ptr_type: Id, storage_class: StorageClass | None = None,
                 initializer: Id | None = None) -> Id:
        """Module-scope OpVariable (Workgroup arrays, constant tables, builtins)."""
        key = self.type_key(ptr_type)
        if key[0] != "pointer":
            raise TypeError(f"variable type {ptr_type!r} is not a pointer type")
        if storage_class is not None and StorageClass(storage_class) != key[1]:
            raise ValueError(f"storage class {storage_class!r} differs from the pointer's {key[1]!r}")
        operands: list[Operand] = [key[1]] + ([initializer] if initializer is not None else [])
        var = self.global_op(Op.Variable, ptr_type, *operands)
        self._global_vars[var] = key[1]
        return var

    def builtin_variable(self, builtin: BuiltIn, value_type: Id | None = None) -> Id:
        """Input variable for a builtin, decorated BuiltIn + Constant (deduplicated).

        `value_type` defaults to v3ulong for the 3-component builtins, ulong
        for linear ids and uint for the rest (sub-group builtins).
        """
        builtin = BuiltIn(builtin)
        if builtin not in self._builtins:
            if value_type is None:
                ulong = self.type_int(64)
                value_type = (self.type_vector(ulong, 3) if builtin in VECTOR3_BUILTINS
                              else ulong if builtin in SIZE_T_BUILTINS else self.type_int(32))
            var = self.variable(self.type_pointer(StorageClass.Input, value_type))
            self.decorate(var, Decoration.BuiltIn, builtin)
            self.decorate(var, Decoration.Constant)
            self._builtins[builtin] = var
        return self._builtins[builtin]

    # -- functions and entry points ------------------------------------------------
    def function(self, return_type: Id, param_types: list[Id] | tuple[Id, ...] = (), name: str | None = None,
                 control: FunctionControl = FunctionControl.None_) -> Function:
        """A new function; `name` adds an OpName (not needed for kernels)."""
        func = Function(self, return_type, list(param_types), name, control)
        self.functions.append(func)
        return func

    def entry_point(self, model: ExecutionModel, func: Function, name: str) -> None:
        """Declare `func` an entry point; the interface list is computed on assembly."""
        self._entry_points.append((ExecutionModel(model), func, name))

    def execution_mode(self, func: Function, mode: ExecutionMode, *literals: Operand) -> None:
        """OpExecutionMode (OpExecutionModeId when the mode takes ids)."""
        mode = ExecutionMode(mode)
        kinds = ENUM_PARAMETERS.get(ExecutionMode, {}).get(mode, ())
        opcode = Op.ExecutionModeId if "IdRef" in kinds else Op.ExecutionMode
        self._execution_modes.append(Instruction(opcode, None, None, [func.id, mode, *_coerce(kinds, literals)]))

    # -- debug names and decorations -------------------------------------------------
    def name(self, target: Id, text: str) -> None:
        self._debug.append(Instruction(Op.Name, None, None, [target, text]))

    def member_name(self, struct_type: Id, member: int, text: str) -> None:
        self._debug.append(Instruction(Op.MemberName, None, None, [struct_type, member, text]))

    def decorate(self, target: Id, decoration: Decoration, *literals: Operand) -> None:
        """OpDecorate (OpDecorateId when the decoration takes ids).

        Plain ints for enum parameters are turned into their enum type, so
        e.g. `decorate(v, Decoration.BuiltIn, 28)` still infers requirements.
        String parameters also use OpDecorate: spirv-val accepts that, while
        it rejects OpDecorateString on function ids.
        """
        self._annotate([target], Decoration(decoration), literals, {"": Op.Decorate, "IdRef": Op.DecorateId})

    def member_decorate(self, struct_type: Id, member: int, decoration: Decoration, *literals: Operand) -> None:
        self._annotate([struct_type, member], Decoration(decoration), literals, {"": Op.MemberDecorate})

    def _annotate(self, head: list[Operand], decoration: Decoration, literals: tuple[Operand, ...],
                  opcodes: dict[str, Op]) -> None:
        kinds = ENUM_PARAMETERS[Decoration].get(decoration, ())
        opcode = next((opcodes[k] for k in kinds if k in opcodes), opcodes[""])
        operands = [*head, decoration, *_coerce(kinds, literals)]
        key = (opcode, *((type(x).__name__, int(x)) if not isinstance(x, str) else x for x in operands))
        self._annotations.setdefault(key, Instruction(opcode, None, None, operands))

    # -- assembly ----------------------------------------------------------------------
    def _interface(self, func: Function, bodies: dict[Id, list[Instruction]]) -> list[Id]:
        """Module-scope variables `func` and its callees reference (RUNTIME-NOTES §1)."""
        seen, todo, used = set(), [func.id], set()
        variables = self._global_vars
        while todo:
            fid = todo.pop()
            if fid in seen:
                continue
            seen.add(fid)
            for inst in bodies[fid]:
                for op in inst.operands:
                    if op in variables and op.__class__ is Id:  # not a literal of the same value
                        used.add(op)
                if inst.opcode == Op.FunctionCall and inst.operands[0] in bodies:
                    todo.append(inst.operands[0])
        return [v for v, sc in self._global_vars.items()
                if v in used and (self.version >= (1, 4) or sc == StorageClass.Input)]

    def instructions(self) -> list[Instruction]:
        """The whole module in logical layout order, requirements inferred."""
        bodies = {f.id: f.instructions() for f in self.functions}
        entries = [Instruction(Op.EntryPoint, None, None, [model, f.id, name, *self._interface(f, bodies)])
                   for model, f, name in self._entry_points]
        memory_model = Instruction(Op.MemoryModel, None, None, [AddressingModel.Physical64, MemoryModel.OpenCL])
        body = (self._ext_import_insts + [memory_model] + entries + self._execution_modes
                + self._debug + list(self._annotations.values()) + self._globals)
        for func in self.functions:
            body += bodies[func.id]
        inference = Inference(self.version, self.type_keys, self.value_types)
        inference.add(body)
        caps, exts = inference.resolve(self._capabilities, self._extensions)
        head = [Instruction(Op.Capability, None, None, [c]) for c in caps]
        head += [Instruction(Op.Extension, None, None, [e]) for e in exts]
        return head + body

    def release(self) -> None:
        """Forget everything once assembled (the module is unusable after). Functions, blocks
        and the module refer to each other, so only the garbage collector could free them: a
        kernel's thousand instructions would sit through its collections, which then cost as
        much as a tenth of the compile. Without the cycles they go when codegen returns."""
        for func in self.functions:
            func.blocks.clear()
        vars(self).clear()

    def assemble(self) -> bytes:
        """The SPIR-V binary: header (magic, version, generator 0, bound, 0) + words."""
        words = [MAGIC_NUMBER, (self.version[0] << 16) | (self.version[1] << 8), 0, self._bound, 0]
        words += encode(self.instructions())
        return struct.pack(f"<{len(words)}I", *words)


def _coerce(kinds: tuple[str, ...], literals: tuple[Operand, ...]) -> list[Operand]:
    """Give plain-int parameters their enum type where the grammar names one."""
    out: list[Operand] = []
    for i, lit in enumerate(literals):
        cls = KINDS.get(kinds[i]) if i < len(kinds) else None
        if cls is not None and isinstance(lit, int) and not isinstance(lit, (Enumerant, Id)):
            lit = cls(lit)
        out.append(lit)
    return out
