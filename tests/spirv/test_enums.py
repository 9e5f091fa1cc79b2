"""The light enumerations of spv.py behave like the IntEnum/IntFlag members they replace."""

import pickle

import pytest

from tinyc.spirv.enums import Enumerant, Flags
from tinyc.spirv.spv import Capability, Dim, LoopControl, MemorySemantics, Op, StorageClass


def test_members_are_ints_of_their_kind():
    assert Op.FAdd == 129 and isinstance(Op.FAdd, Op) and isinstance(Op.FAdd, Enumerant)
    assert StorageClass.Generic.name == "Generic" and StorageClass.Generic.value == 8
    assert str(Op.FAdd) == "129" and f"{Op.FAdd}" == "129" and repr(Op.FAdd) == "Op.FAdd"
    assert Dim.Dim1D == 0 and Dim.by_name("Dim1D") is Dim.Dim1D


def test_lookup_by_value_gives_the_member_and_rejects_unknown_values():
    assert StorageClass(8) is StorageClass.Generic
    assert Op(int(Op.FAdd)) is Op.FAdd
    with pytest.raises(ValueError, match="not a valid StorageClass"):
        StorageClass(123456)
    with pytest.raises(ValueError):
        StorageClass(True)


def test_aliases_are_the_same_member_named_by_the_first_spelling():
    assert Capability.DotProductKHR is Capability.DotProduct
    assert Capability.DotProductKHR.name == "DotProduct"


def test_flags_combine_within_their_kind():
    both = LoopControl.Unroll | LoopControl.PartialCount
    assert isinstance(both, LoopControl) and isinstance(both, Flags) and int(both) == 0x101
    assert both.name == "Unroll|PartialCount"
    assert (both & LoopControl.Unroll) is LoopControl.Unroll
    assert MemorySemantics(0) is MemorySemantics.Relaxed and MemorySemantics.None_ is MemorySemantics.Relaxed
    with pytest.raises(ValueError):
        LoopControl(-1)


def test_members_pickle_to_themselves():
    assert pickle.loads(pickle.dumps(Capability.Kernel)) is Capability.Kernel
