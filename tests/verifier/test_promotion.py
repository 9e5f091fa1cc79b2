"""The spec's promotion order, cell by cell, and promote().

The matrix below is copied by hand from the relation matrix in the spec
(section "Scalar types"), independently of tinyc/ir/types.py.
"""

from __future__ import annotations

import itertools

import pytest

from tinyc.ir.types import SCALAR_TYPES, index, promotable, promote

SPEC_MATRIX = """
        i8 i16 i32 i64 bf16 f16 f32 f64 c32 c64
i8      1  1   1   1   1    1   1   1   1   1
i16     .  1   1   1   .    .   1   1   1   1
i32     .  .   1   1   .    .   .   1   1   1
i64     .  .   .   1   .    .   .   .   .   .
bf16    .  .   .   .   1    .   1   1   1   1
f16     .  .   .   .   .    1   1   1   1   1
f32     .  .   .   .   .    .   1   1   1   1
f64     .  .   .   .   .    .   .   1   .   1
c32     .  .   .   .   .    .   .   .   1   1
c64     .  .   .   .   .    .   .   .   .   1
"""


def _cells() -> list[tuple[str, str, bool]]:
    header, *rows = SPEC_MATRIX.strip().splitlines()
    columns = header.split()
    cells = []
    for row in rows:
        name, *marks = row.split()
        assert len(marks) == len(columns)
        cells += [(name, col, mark == "1") for col, mark in zip(columns, marks)]
    return cells


CELLS = _cells()


def test_matrix_is_complete():
    assert len(CELLS) == 100


@pytest.mark.parametrize("a, b, expected", CELLS, ids=[f"{a}<={b}" for a, b, _ in CELLS])
def test_promotable_cell(a, b, expected):
    assert promotable(SCALAR_TYPES[a], SCALAR_TYPES[b]) is expected


@pytest.mark.parametrize("a, b", [(a, b) for a, b, _ in CELLS])
def test_promote_follows_the_order(a, b):
    ta, tb = SCALAR_TYPES[a], SCALAR_TYPES[b]
    if promotable(ta, tb):
        assert promote(ta, tb) is tb
    elif promotable(tb, ta):
        assert promote(ta, tb) is ta
    else:
        assert promote(ta, tb) is None


@pytest.mark.parametrize("a, b, result", [
    ("i8", "f16", "f16"), ("f16", "i8", "f16"), ("i16", "f32", "f32"), ("f32", "c32", "c32"),
    ("c32", "f64", None), ("f64", "c32", None), ("bf16", "f16", None), ("f16", "bf16", None),
    ("i32", "f32", None), ("i64", "f64", None), ("i32", "i32", "i32"), ("i32", "c32", "c32"),
    ("f64", "c64", "c64"), ("i8", "bf16", "bf16"),
])
def test_promote_cases(a, b, result):
    # promote() picks one of its arguments: it is no join (c32 and f64 "fail" though c64 exists)
    got = promote(SCALAR_TYPES[a], SCALAR_TYPES[b])
    if result is None:
        assert got is None
    else:
        assert got is SCALAR_TYPES[result]


def test_order_is_reflexive_antisymmetric_transitive():
    types = [SCALAR_TYPES[n] for n in ("i8", "i16", "i32", "i64", "bf16", "f16", "f32", "f64", "c32", "c64")]
    for a in types:
        assert promotable(a, a)
    for a, b in itertools.permutations(types, 2):
        assert not (promotable(a, b) and promotable(b, a))
    for a, b, c in itertools.product(types, repeat=3):
        if promotable(a, b) and promotable(b, c):
            assert promotable(a, c), (a, b, c)


def test_index_ranks_like_i64():
    i32, i64 = SCALAR_TYPES["i32"], SCALAR_TYPES["i64"]
    assert promotable(i32, index) and promotable(index, i64) and promotable(index, index)
    assert not promotable(index, i32)
