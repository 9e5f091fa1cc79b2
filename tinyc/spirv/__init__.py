"""SPIR-V layer: generated grammar tables (`spv`), the module builder
(`module`), and wrappers for the SPIRV-Tools binaries (`tools`)."""

from tinyc.spirv.function import Block, Function
from tinyc.spirv.instruction import Id, Instruction
from tinyc.spirv.module import Module

__all__ = ["Block", "Function", "Id", "Instruction", "Module"]
