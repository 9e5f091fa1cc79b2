"""memory_effects: roots, per-instruction accesses, and the conflict relation."""

from __future__ import annotations

import pytest

from pass_testlib import parse_checked
from tinyc.ir.core import Instruction, Value
from tinyc.ir.types import AddressSpace, f32
from tinyc.analysis.memory_effects import (
    EffectKind, MemoryEffect, MemoryObject, conflicts, direct_effects, effects, memory_object,
    root_of, touches,
)

R, W, ADD = EffectKind.READ, EffectKind.WRITE, EffectKind.ATOMIC_ADD

SOURCE = """func @k(%A: memref<f32x16x16>, %B: memref<f32x16x16>, %C: memref<f32x16x16>,
        %G: group<memref<f32x16x16>x?>, %n: index) {
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  %c0 = constant 0 : index
  %i = builtin.group_id : index
  %T = alloca : memref<f32x16x16,local>
  %S = subview %A[:, 0:8] : memref<f32x16x8>
  %F = fuse %S[0, 1] : memref<f32x128>
  %X = expand %C[1 -> 4x4] : memref<f32x16x4x4>
  %M = load %G[%i] : memref<f32x16x16>
  %Mv = subview %M[:, 0] : memref<f32x16>
  gemm.n.n %one, %A, %B, %zero, %C
  gemm.n.n %one, %A, %B, %one, %C
  gemm.n.n.atomic %one, %A, %B, %one, %C
  gemm.n.n.atomic %one, %A, %B, %zero, %C
  sum.n %one, %M, %zero, %Mv
  %x = load %T[%c0, %c0] : f32
  store %x, %T[%c0, %c0]
  store.atomic_add %x, %C[%c0, %c0]
  store.atomic %x, %C[%c0, %c0]
  parallel {
    %a = cooperative_matrix_load.n %A[%c0, %c0] : coopmatrix<f32x16x16,matrix_acc>
    cooperative_matrix_store %a, %T[%c0, %c0]
    for %j = %c0, %n {
      store %x, %B[%j, %c0]
    }
  }
  lifetime_stop %T
}
"""


@pytest.fixture(scope="module")
def fn():
    return parse_checked(SOURCE).functions[0]


def value(fn, name: str) -> Value:
    for a in fn.args:
        if a.name == name:
            return a
    for inst in fn.walk():
        for r in inst.results:
            if r.name == name:
                return r
    raise KeyError(name)


def top(fn, opname: str, nth: int = 0) -> Instruction:
    return [i for i in fn.body.instructions if i.opname == opname][nth]


def summary(found: list[MemoryEffect]) -> list[tuple[str, str]]:
    return [(e.obj.root.name, e.kind.value) for e in found]


def test_roots_through_views_and_group_loads(fn):
    A, C, G, T = (value(fn, n) for n in "ACGT")
    assert root_of(value(fn, "S")) is A
    assert root_of(value(fn, "F")) is A
    assert root_of(value(fn, "X")) is C
    assert root_of(value(fn, "M")) is G
    assert root_of(value(fn, "Mv")) is G
    assert root_of(T) is T
    assert memory_object(value(fn, "F")) == MemoryObject(A, AddressSpace.GLOBAL)
    assert memory_object(T) == MemoryObject(T, AddressSpace.LOCAL)
    assert memory_object(G).space is AddressSpace.GLOBAL
    assert memory_object(value(fn, "one")) is None
    assert memory_object(T).is_alloca and not memory_object(A).is_alloca


def test_gemm_with_zero_beta_only_writes_the_output(fn):
    assert summary(direct_effects(top(fn, "gemm", 0))) == [("A", "read"), ("B", "read"), ("C", "write")]


def test_gemm_with_beta_reads_the_output(fn):
    assert summary(direct_effects(top(fn, "gemm", 1))) == [
        ("A", "read"), ("B", "read"), ("C", "read"), ("C", "write")]


def test_atomic_accumulation_and_atomic_store(fn):
    assert summary(direct_effects(top(fn, "gemm", 2)))[-1] == ("C", "atomic_add")
    assert summary(direct_effects(top(fn, "gemm", 3)))[-1] == ("C", "write")


def test_group_member_accesses_belong_to_the_group(fn):
    assert summary(direct_effects(top(fn, "sum"))) == [("G", "read"), ("G", "write")]
    assert direct_effects(top(fn, "load", 0)) == []         # forming the member pointer


def test_load_and_stores(fn):
    assert summary(direct_effects(top(fn, "load", 1))) == [("T", "read")]
    assert summary(direct_effects(top(fn, "store", 0))) == [("T", "write")]
    assert summary(direct_effects(top(fn, "store", 1))) == [("C", "atomic_add")]
    assert summary(direct_effects(top(fn, "store", 2))) == [("C", "write")]


def test_views_and_bookkeeping_touch_no_memory(fn):
    for opname in ("subview", "fuse", "expand", "alloca", "lifetime_stop", "constant"):
        assert direct_effects(top(fn, opname)) == []


def test_region_effects_include_nested_instructions(fn):
    par = top(fn, "parallel")
    assert direct_effects(par) == []
    assert summary(effects(par)) == [("A", "read"), ("T", "write"), ("B", "write")]
    assert touches(par, value(fn, "T")) and not touches(par, value(fn, "C"))


def test_effect_identity_ignores_the_operand_used(fn):
    A = value(fn, "A")
    obj = MemoryObject(A, AddressSpace.GLOBAL)
    assert MemoryEffect(obj, R, A) == MemoryEffect(obj, R, value(fn, "S"))


def test_unknown_instruction_reads_and_writes_its_memrefs(fn):
    class Mystery(Instruction):
        opname = "mystery"

    A = value(fn, "A")
    assert summary(direct_effects(Mystery([A, value(fn, "one")]))) == [("A", "read"), ("A", "write")]


@pytest.mark.parametrize("first, second, expected", [
    (R, R, False), (R, W, True), (W, R, True), (W, W, True),
    (ADD, ADD, False), (ADD, R, True), (W, ADD, True),
])
def test_conflict_table(fn, first, second, expected):
    obj = MemoryObject(value(fn, "A"), AddressSpace.GLOBAL)
    assert conflicts(MemoryEffect(obj, first), MemoryEffect(obj, second)) is expected


def test_aliasing(fn):
    A, B, T = value(fn, "A"), value(fn, "B"), value(fn, "T")
    a = MemoryObject(A, AddressSpace.GLOBAL)
    assert not a.may_alias(MemoryObject(B, AddressSpace.GLOBAL))       # restrict arguments
    assert a.may_alias(MemoryObject(None, AddressSpace.GLOBAL))        # unknown root
    assert not a.may_alias(MemoryObject(None, AddressSpace.LOCAL))     # other space
    assert not conflicts(MemoryEffect(a, W), MemoryEffect(MemoryObject(T, AddressSpace.LOCAL), W))


def test_unknown_root():
    orphan = Value(f32)
    assert root_of(orphan) is None
