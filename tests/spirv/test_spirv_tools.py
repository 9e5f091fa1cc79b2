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


def test_in_process_validator_says_what_spirv_val_says():
    from tinyc.spirv import libtools, tools

    library = libtools.load()
    if library is None:
        pytest.skip("libSPIRV-Tools-shared is not installed")
    bad = assemble(MINIMAL.replace("OpCapability Addresses\n", ""))
    proc = tools._run("spirv-val", ["--target-env", "spv1.4", "-"], bad)
    assert proc.returncode != 0
    assert library.validate(bad, "spv1.4") == tools._output(proc)
    assert library.validate(assemble(MINIMAL), "spv1.4") is None


def test_without_the_library_the_binary_validates(monkeypatch):
    from tinyc.spirv import tools

    monkeypatch.setattr(tools, "_library", lambda: None)
    monkeypatch.setattr(tools, "_validated", {})
    validate(assemble(MINIMAL))
    with pytest.raises(SpirvValidationError, match="Addresses"):
        validate(assemble(MINIMAL.replace("OpCapability Addresses\n", "")))


def test_a_valid_module_is_validated_once(monkeypatch):
    from tinyc.spirv import tools

    class ValidatedAgain(Exception):
        pass

    def fail(*args):
        raise ValidatedAgain

    binary = assemble(MINIMAL)
    monkeypatch.setattr(tools, "_validated", {})
    validate(binary)
    monkeypatch.setattr(tools, "_library", fail)
    monkeypatch.setattr(tools, "_run", fail)
    validate(binary)
    with pytest.raises(ValidatedAgain):
        validate(binary, "spv1.5")  # another target environment is another check
