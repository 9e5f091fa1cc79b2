"""Modules that passed spirv-val are recorded on disk (tinyc/spirv/tools.py): another process
does not validate them again while the same validator is installed; nothing else is trusted."""

from __future__ import annotations

import pytest

from tinyc.spirv import tools
from tinyc.spirv.tools import SpirvValidationError, assemble, validate

MODULE = """
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k{n}"
       %void = OpTypeVoid
       %fnty = OpTypeFunction %void
          %k = OpFunction %void None %fnty
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"""


class Validated(Exception):
    """The validator ran."""


@pytest.fixture
def records(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tools, "_validated", {})
    monkeypatch.setattr(tools, "_use_records", [True])
    return tmp_path / tools.VALIDATED_DIR


def new_process(monkeypatch) -> None:
    """Nothing remembered in memory; the validator must not run."""
    monkeypatch.setattr(tools, "_validated", {})

    def ran(*args):
        raise Validated

    monkeypatch.setattr(tools, "_library", ran)
    monkeypatch.setattr(tools, "_run", ran)


def test_a_module_that_passed_is_not_validated_again_in_another_process(records, monkeypatch):
    binary = assemble(MODULE.format(n=1))
    validate(binary)
    (record,) = records.glob("*.spv")
    assert record.read_bytes().endswith(binary)
    new_process(monkeypatch)
    validate(binary)
    with pytest.raises(Validated):
        validate(binary, "spv1.5")  # another target environment is another check
    with pytest.raises(Validated):
        validate(assemble(MODULE.format(n=2)))  # and other bytes another module


def test_a_rejected_module_is_never_recorded(records):
    bad = assemble(MODULE.format(n=3).replace("OpCapability Addresses\n", ""))
    with pytest.raises(SpirvValidationError, match="Addresses"):
        validate(bad)
    assert not records.exists() or not list(records.glob("*.spv"))


def test_another_validator_misses(records, monkeypatch):
    binary = assemble(MODULE.format(n=4))
    validate(binary)
    new_process(monkeypatch)
    monkeypatch.setattr(tools, "_validator_identity", lambda: b"another spirv-val\0")
    with pytest.raises(Validated):
        validate(binary)


@pytest.mark.parametrize("damage", [b"", b"garbage", None], ids=["empty", "garbage", "truncated"])
def test_a_damaged_record_means_validating_again(records, monkeypatch, damage):
    binary = assemble(MODULE.format(n=5))
    validate(binary)
    (record,) = records.glob("*.spv")
    record.write_bytes(record.read_bytes()[:-4] if damage is None else damage)
    new_process(monkeypatch)
    with pytest.raises(Validated):
        validate(binary)


def test_forget_validated_ignores_the_records(records, monkeypatch):
    binary = assemble(MODULE.format(n=6))
    validate(binary)
    tools.forget_validated()
    new_process(monkeypatch)
    with pytest.raises(Validated):
        validate(binary)
