"""Wrappers around spirv-val / spirv-dis / spirv-as."""

import pytest

from tinyc.spirv.tools import SpirvToolError, SpirvValidationError, assemble, disassemble, tool_path, validate

MINIMAL = """\
OpCapability Addresses
OpCapability Kernel
OpMemoryModel Physical64 OpenCL
OpEntryPoint Kernel %k "k"
%void = OpTypeVoid
%fn = OpTypeFunction %void
%k = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""


def test_tools_are_found():
    for name in ("spirv-val", "spirv-dis", "spirv-as"):
        assert tool_path(name).is_file()


def test_assemble_validate_disassemble():
    binary = assemble(MINIMAL)
    validate(binary)
    text = disassemble(binary)
    assert 'OpEntryPoint Kernel %1 "k"' in text  # spirv-as keeps no names without OpName
    assert "%void = OpTypeVoid" in text
    assert "%2 = OpTypeVoid" in disassemble(binary, raw_ids=True)
    assert assemble(text) == binary


def test_validation_error_carries_spirv_val_output():
    bad = assemble(MINIMAL.replace("OpCapability Addresses\n", ""))
    with pytest.raises(SpirvValidationError, match="Addresses"):
        validate(bad)


def test_target_env_is_passed():
    # OpEntryPoint interfaces with non-Input variables are only valid from 1.4 on.
    text = MINIMAL.replace('"k"', '"k" %v').replace(
        "%fn = OpTypeFunction %void",
        "%fn = OpTypeFunction %void\n%f = OpTypeFloat 32\n%p = OpTypePointer Workgroup %f\n"
        "%v = OpVariable %p Workgroup")
    validate(assemble(text, "spv1.4"), "spv1.4")
    with pytest.raises(SpirvValidationError, match="1.3 or earlier"):
        validate(assemble(text, "spv1.3"), "spv1.3")


def test_assembler_errors():
    with pytest.raises(SpirvToolError, match="spirv-as failed"):
        assemble("OpNoSuchThing\n")
