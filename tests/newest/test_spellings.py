"""Both spellings: every seed spelling has a newest one that reads to the same IR, and back.

The samples (all seed programs) are printed in the newest spelling, read
back, and must give the same IR and, on the device, the same results; the
newest spelling printed as seed must give back the sample's IR.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.harness.arguments import make_arguments
from tinyc.ir import instructions as ins
from tinyc.ir.instructions.scalar import BUILTIN_TYPES
from tinyc.ir.printer import print_program
from tinyc.parser import parse
from tinyc.std import Std

from ir_equality import assert_same_ir
from newest_testlib import SAMPLES, checked, fn, migrated, only, same_meaning

ARGS = "%a: f32, %b: f32, %i: i32, %j: i32, %c: c32, %A: memref<f32x8x8>, %v: memref<f32x8>"


def pairs() -> list[tuple[str, str]]:
    """(seed, newest) instruction texts of one meaning, over every re-spelled keyword."""
    found = []
    for op in ins.ArithBinaryOp:
        t, x = ("i32", "%i, %j") if op.value in ("shl", "shr", "and", "or", "xor") else ("f32", "%a, %b")
        found.append((f"%r = arith.{op.value} {x} : {t}", f"%r = {op.value} {x} : {t}"))
    for op in ins.ArithUnaryOp:
        t, x = {"not": ("i32", "%i"), "conj": ("c32", "%c"), "im": ("f32", "%c"),
                "re": ("f32", "%c")}.get(op.value, ("f32", "%a"))
        found.append((f"%r = arith.{op.value} {x} : {t}", f"%r = {op.value} {x} : {t}"))
    for cond in ins.CmpCond:
        found.append((f"%r = cmp.{cond.value} %a, %b : bool", f"%r = {cond.newest} %a, %b : bool"))
    for op in ins.SEED_MATH:
        found.append((f"%r = math.{op.value} %a : f32", f"%r = {op.value} %a : f32"))
    for name in ins.BuiltinName:
        if name.seed and name.newest:
            t = str(BUILTIN_TYPES[name])
            texts = [f"%r = {word} : {t}" for word in (name.seed, name.newest)]
            if name in ins.SPMD_BUILTINS:
                texts = ["parallel {\n  " + text + "\n}" for text in texts]
            found.append((texts[0], texts[1]))
    for op in ins.SubgroupOp:
        for mode in ins.SubgroupMode:
            found.append((f"parallel {{\n  %r = subgroup_{op.value}.{mode.value} %a : f32\n}}",
                          f"parallel {{\n  %r = subgroup_{mode.value}_{op.value} %a : f32\n}}"))
    found += [
        ("%one = constant 1.0 : f32\ngemm.t.n.atomic %a, %A, %A, %one, %A",
         "%one = constant 1.0 : f32\ngemm.atomic.t.n %a, %A, %A, %one, %A"),
        ("gemm.t.n %a, %A, %A, %b, %A", "gemm.t %a, %A, %A, %b, %A"),
        ("gemv.n %a, %A, %v, %b, %v", "gemv %a, %A, %v, %b, %v"),
        ("%one = constant 1.0 : f32\nsum.t.atomic %a, %A, %one, %v",
         "%one = constant 1.0 : f32\nsum.atomic.t %a, %A, %one, %v"),
        ("axpby.n %a, %A, %b, %A", "axpby %a, %A, %b, %A"),
        ("hadamard_product %a, %v, %v, %b, %v", "hadamard %a, %v, %v, %b, %v"),
        ("%z = constant 0 : i32\nfor %k:i32 = %z, %i {\n} {unroll=true}",
         "%z = constant 0 : i32\nfor %k = %z, %i {\n} attributes {unroll=true}"),
        ("%z = constant 0 : i32\nforeach (%k):i32 = (%z), (%i) {\n}",
         "%z = constant 0 : i32\nforeach (%k) = (%z), (%i) {\n}"),
    ]
    return found


@pytest.mark.parametrize("seed, newest", pairs(), ids=lambda t: t.split("=")[-1][:28])
def test_both_spellings_read_to_one_ir_and_print_either_way(seed, newest):
    seed_text, newest_text = fn(seed, ARGS), fn(newest, ARGS)
    a, b = checked(seed_text), checked(newest_text)
    assert a.std is Std.SEED
    assert b.std is Std.NEWEST or b.version.how == "default"  # `hadamard`: both versions' spelling
    assert_same_ir(a, b)
    assert_same_ir(parse(migrated(seed_text, Std.NEWEST)), b)
    version = parse(migrated(seed_text, Std.NEWEST)).version
    assert version.std is Std.NEWEST or version.how == "default"  # no seed-only spelling left
    assert_same_ir(parse(migrated(newest_text, Std.SEED)), a)


def test_the_seed_count_of_all_subgroups_is_x_times_y_in_the_newest_spelling():
    text = fn("%n = builtin.num_subgroups : i32")
    printed = migrated(text, Std.NEWEST)
    assert "%num_subgroups_x = num_subgroups.x : i32" in printed
    assert "%num_subgroups_y = num_subgroups.y : i32" in printed
    assert "%n = mul %num_subgroups_x, %num_subgroups_y : i32" in printed
    checked(printed)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_every_sample_reads_the_same_in_the_newest_spelling(path):
    text = path.read_text()
    seed = parse(text)
    assert seed.std is Std.SEED
    newest_text = print_program(seed, Std.NEWEST)
    newest = checked(newest_text)
    assert newest.std is Std.NEWEST or newest.version.how == "default"
    if "builtin.num_subgroups" in text:
        # the seed's count of all subgroups has no single newest instruction: x·y (above)
        text = text.replace("builtin.num_subgroups", "builtin.subgroup_size")
        seed = parse(text)
        newest = checked(print_program(seed, Std.NEWEST))
    assert_same_ir(seed, newest)
    assert_same_ir(parse(print_program(newest, Std.SEED)), seed)


@pytest.fixture(scope="module")
def both_spellings(device):
    """Each sample compiled as written (seed) and as printed in the newest spelling."""
    return {p.stem: (tinyc.compile(p.read_text(), name=p.name),
                     tinyc.compile(migrated(p.read_text(), Std.NEWEST), name=p.name, std="newest"))
            for p in SAMPLES}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_every_sample_gives_the_same_results_in_both_spellings(path, both_spellings):
    seed, newest = both_spellings[path.stem]
    assert newest.std == "newest" and seed.std == "seed"
    for name in seed.kernel_names:
        info = seed[name].info
        assert (info.batch_axis, newest[name].info.batch_axis) == (2, 0)
        batch = 3
        results = []
        for program in (seed, newest):
            args, _ = make_arguments(program.checked_ir()[name], program[name].info, batch, {}, seed=7)
            program[name](*args, batch=batch)
            results.append(args)
        for got, want in zip(*results):
            for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_the_spelling_as_written_names_the_instruction_in_messages():
    for word in ("arith.add", "add"):
        inst = only(parse(fn(f"%r = {word} %a, %b : f32", ARGS)))
        assert inst.title == word
