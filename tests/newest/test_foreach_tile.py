"""foreach_tile: syntax, verifier rules, lowering, reference and device results against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.ir.instructions import ForeachTile
from tinyc.ir.printer import print_program
from tinyc.parser import parse
from tinyc.reference import run
from tinyc.std import Std

from newest_testlib import at, checked, error, fn

# Each tile copies its block of A to B, scaled by its tile number + 1 (so a
# tile visited twice or not at all shows), and writes its sizes to S.
TILED = """
func @tiled(%A: memref<{t}x{m}x{n}>, %B: memref<{t}x{m}x{n}>, %S: memref<i64x2x{m}x{n}>,
            %m0: {it}, %n0: {it}) attributes {{subgroup_size=8}} {{
    %m = constant {m} : {it}
    %n = constant {n} : {it}
    foreach_tile (%i, %j) = (%m0, %n0), (%m, %n) as (%ti, %tj) <= ({tm}, {tn}) {{
        %lane = subgroup_local_id : i32
        %l = cast %lane : {it}
        %zero = constant 0 : {it}
        for %c = %zero, %tj {{
            for %r0 = %zero, %ti, {step} {{
                %r = add %r0, %l : {it}
                %in = less_than %r, %ti : bool
                if %in {{
                    %x = add %i, %r : {it}
                    %y = add %j, %c : {it}
                    %xi = cast %x : index
                    %yi = cast %y : index
                    %a = load %A[%xi, %yi] : {t}
                    %s = cast %ti : i64
                    %u = cast %tj : i64
                    %c0 = constant 0 : index
                    %c1 = constant 1 : index
                    store %a, %B[%xi, %yi]
                    store %s, %S[%c0, %xi, %yi]
                    store %u, %S[%c1, %xi, %yi]
                }}
            }}
        }}
    }}
}}
"""


def tiled(t="f32", m=37, n=20, tm=16, tn=8, it="index") -> str:
    step = "%eight"
    text = TILED.format(t=t, m=m, n=n, tm=tm, tn=tn, it=it, step=step)
    return text.replace("for %r0 = %zero, %ti, %eight {",
                        f"%eight = constant 8 : {it}\n            for %r0 = %zero, %ti, %eight {{")


def expected_sizes(m, n, tm, tn, m0=0, n0=0):
    S = np.zeros((2, m, n), np.int64)
    for i in range(m0, m, tm):
        for j in range(n0, n, tn):
            S[0, i:i + tm, j:j + tn] = min(tm, m - i)
            S[1, i:i + tm, j:j + tn] = min(tn, n - j)
    return S


def test_foreach_tile_reads_and_prints_in_the_newest_spelling():
    program = checked(tiled())
    assert program.std is Std.NEWEST
    inst = program.functions[0].body.instructions[2]
    assert isinstance(inst, ForeachTile) and inst.tile_shape == [16, 8]
    assert [v.name for v in inst.offsets] == ["i", "j"] and [v.name for v in inst.sizes] == ["ti", "tj"]
    assert "foreach_tile (%i, %j) = (%m0, %n0), (%m, %n) as (%ti, %tj) <= (16, 8) {" in \
        print_program(program)


def test_foreach_tile_has_no_seed_spelling():
    with pytest.raises(tinyc.CompilationError, match="'foreach_tile' cannot be written in the seed "
                                                    "language"):
        print_program(parse(tiled()), Std.SEED)


@pytest.mark.parametrize("body, message, needle", [
    ("foreach_tile (%i) = (%z), (%n) as (%t, %u) <= (16) {\n}",
     "foreach_tile has 1 tile offsets, 1 lower and 1 upper bounds, 2 tile sizes and a tile shape of "
     "1 modes; all must have the same length", "foreach_tile"),
    ("foreach_tile (%i) = (%z), (%n) as (%t) <= (0) {\n}",
     "foreach_tile: the tile shape must be positive, got 0 in mode 0", "foreach_tile"),
    ("foreach_tile (%i) = (%z), (%n) as (%t) <= (24) {\n}",
     "foreach_tile: the first mode of the tile shape (24) must be a multiple of the subgroup size (16)",
     "foreach_tile"),
    ("foreach_tile (%i) = (%z), (%w) as (%t) <= (16) {\n}",
     "foreach_tile: upper bound 0 must have type index (the type of lower bound 0), got i32", "%w)"),
    ("foreach_tile (%i) = (%z), (%n) as (%t) <= (-16) {\n}",
     "tile shape entry must not be negative, got -16", "-16"),
    ("parallel {\n  foreach_tile (%i) = (%z), (%n) as (%t) <= (16) {\n  }\n}",
     "foreach_tile is a collective instruction and cannot appear inside an SPMD region (parallel at "
     "3.3)", "foreach_tile"),
])
def test_foreach_tile_errors(body, message, needle):
    text = fn("%z = constant 0 : index\n" + body, "%n: index, %w: i32", "{subgroup_size=16}")
    d = error(text)
    assert d.message == message
    assert (d.line, d.column) == at(text, needle)


@pytest.mark.parametrize("m, n, tm, tn, it", [
    (37, 20, 16, 8, "index"), (16, 16, 16, 16, "i32"), (8, 3, 8, 2, "i64"), (5, 40, 8, 32, "i32"),
])
def test_reference_tiles_the_range_once(m, n, tm, tn, it):
    fn_ = parse(tiled(m=m, n=n, tm=tm, tn=tn, it=it))["tiled"]
    A = np.asfortranarray(np.random.default_rng(0).random((m, n)).astype(np.float32))
    B = np.zeros_like(A, order="F")
    S = np.zeros((2, m, n), np.int64, order="F")
    run(fn_, [A, B, S, np.int64(0) if it != "i32" else np.int32(0),
              np.int64(0) if it != "i32" else np.int32(0)], 1)
    np.testing.assert_array_equal(B, A)
    np.testing.assert_array_equal(S, expected_sizes(m, n, tm, tn))


@pytest.fixture(scope="module")
def programs(device):
    return {case: tinyc.compile(tiled(*case)) for case in
            [("f32", 37, 20, 16, 8, "index"), ("f64", 8, 3, 8, 2, "i64"), ("i32", 5, 40, 8, 32, "i32")]}


@pytest.mark.parametrize("case", [("f32", 37, 20, 16, 8, "index"), ("f64", 8, 3, 8, 2, "i64"),
                                  ("i32", 5, 40, 8, 32, "i32")])
@pytest.mark.parametrize("origin", [(0, 0), (3, 1)])
def test_device_tiles_the_range_once(programs, case, origin):
    t, m, n, tm, tn, it = case
    dtype = {"f32": np.float32, "f64": np.float64, "i32": np.int32}[t]
    A = np.asfortranarray((np.random.default_rng(1).random((m, n)) * 100).astype(dtype))
    B = np.zeros_like(A, order="F")
    S = np.zeros((2, m, n), np.int64, order="F")
    scalar = np.int32 if it == "i32" else np.int64
    programs[case]["tiled"](A, B, S, scalar(origin[0]), scalar(origin[1]), batch=1)
    want_B = np.zeros_like(A)
    want_B[origin[0]:, origin[1]:] = A[origin[0]:, origin[1]:]
    np.testing.assert_array_equal(B, want_B)
    np.testing.assert_array_equal(S, expected_sizes(m, n, tm, tn, *origin))


def test_the_spec_example_copies_with_coopmatrices(device):
    """spec/newest/tensor-ir.rst, foreach_tile: a 70x64 copy in 32x32 tiles, checked at the rim."""
    text = """
func @copy(%A: memref<f32x70x64>, %B: memref<f32x70x64>) {
    %c0 = constant 0 : index
    %c70 = constant 70 : index
    %c64 = constant 64 : index
    foreach_tile (%i,%j)=(%c0,%c0),(%c70,%c64) as (%ti,%tj)<=(32,32) {
        %c32 = constant 32 : index
        %is_remainder = less_than %ti, %c32 : bool
        if %is_remainder {
            %tile = cooperative_matrix_load.n.rows_checked %A[%i,%j] : coopmatrix<f32x32x32,matrix_acc>
            cooperative_matrix_store.rows_checked %tile, %B[%i,%j]
        } else {
            %tile = cooperative_matrix_load.n %A[%i,%j] : coopmatrix<f32x32x32,matrix_acc>
            cooperative_matrix_store %tile, %B[%i,%j]
        }
    }
}
"""
    A = np.asfortranarray(np.random.default_rng(2).random((70, 64)).astype(np.float32))
    for check in ("device", "reference"):
        B = np.zeros_like(A, order="F")
        if check == "device":
            tinyc.compile(text)["copy"](A, B, batch=1)
        else:
            run(parse(text)["copy"], [A, B], 1)
        np.testing.assert_array_equal(B, A)
