"""`tinyc compile --emit ir --std newest|seed`: a program printed in the other version's spelling."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tinyc.cli import cli
from tinyc.parser import parse
from tinyc.std import Std

from ir_equality import assert_same_ir
from newest_testlib import SAMPLES, checked, fn, migrated


def emit(path, *options) -> "object":
    return CliRunner().invoke(cli, ["compile", str(path), "--emit", "ir", *options])


@pytest.mark.parametrize("path", SAMPLES[:4], ids=lambda p: p.stem)
def test_a_seed_sample_migrates_to_the_newest_spelling_and_back(path, tmp_path):
    result = emit(path, "--std", "newest")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("; std: newest\n")
    newest = checked(result.output)
    assert newest.version.how == "declared" and newest.std is Std.NEWEST
    migrated = tmp_path / "newest.ir"
    migrated.write_text(result.output)
    back = emit(migrated, "--std", "seed")
    assert back.exit_code == 0 and back.output.startswith("; std: seed\n")
    assert_same_ir(parse(back.output), parse(path.read_text()))


def test_without_std_the_program_prints_in_its_own_version(tmp_path):
    path = tmp_path / "k.ir"
    path.write_text(fn("%r = add %a, %a : f32", "%a: f32"))
    result = emit(path)
    assert result.exit_code == 0 and "%r = add %a, %a : f32" in result.output
    assert not result.output.startswith(";")


def test_what_the_seed_cannot_spell_is_a_diagnostic_at_each_instruction(tmp_path):
    text = fn("""
    %r = cos %a : f32
    %i = constant inf : f32
    %y = group_id.y : index
    %z = constant 0 : index
    %n = constant 8 : index
    for %k = %z, %n {
    } attributes {unroll=4}
    """, "%a: f32")
    path = tmp_path / "k.ir"
    path.write_text(text)
    result = emit(path, "--std", "seed")
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if ": error: " in line]
    assert [line.split(": error: ")[1] for line in lines] == [
        "the constant 'inf' cannot be written in the seed language",
        "'group_id.y' cannot be written in the seed language",
        "the unroll count 4 cannot be written in the seed language",
    ]
    assert [line.split(":")[1].split(".")[0] for line in lines] == ["3", "4", "7"]


def test_what_the_seed_spells_differently_migrates(tmp_path):
    text = fn("""
    %one = constant 1.0 : f32
    gemm.atomic %one, %A, %A, %one, %A
    %s = subgroup_size : i32
    %c = less_than_equal %one, %one : bool
    %r = cos %one : f32
    """, "%A: memref<f32x8x8>")
    path = tmp_path / "k.ir"
    path.write_text(text)
    result = emit(path, "--std", "seed")
    assert result.exit_code == 0, result.output
    assert "gemm.n.n.atomic %one, %A, %A, %one, %A" in result.output
    assert "%s = builtin.subgroup_size : i32" in result.output
    assert "%c = cmp.le %one, %one : bool" in result.output
    assert "%r = math.cos %one : f32" in result.output  # as the seed's implementation spelled it
    assert parse(result.stdout).std is Std.SEED


def test_seed_atomic_stores_migrate_to_the_newest_atomics():
    """The newest language has no store flags: atomic_store, and atomic_add with a result."""
    from tinyc.parser.tables import KEYWORDS

    text = fn("""
    %i = constant 0 : index
    store.atomic %a, %A[%i]
    store.atomic_add %a, %A[%i]
    """, "%A: memref<f32x4>, %a: f32")
    printed = migrated(text, Std.NEWEST)
    assert "  atomic_store %a, %A[%i]\n" in printed
    assert "  %old = atomic_add %a, %A[%i] : f32\n" in printed
    if "atomic_store" in KEYWORDS:  # with the newest atomics (tinyc/ir/instructions/atomics.py)
        checked(printed)
