"""Version rules: which version a program is in, and what the versions do differently.

docs/newest.md: given (`--std`, `std=`), else declared (`; std: ...`), else
inferred (newest if any newest-only spelling is used, else seed). The two
versions share one grammar; they differ in launch geometry, a few
restrictions, and the spelling the printer writes.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tinyc.cli import cli
from tinyc.compiler import compile_to_spirv
from tinyc.diagnostics import CompilationError
from tinyc.parser import parse
from tinyc.std import Std

from newest_testlib import at, error, errors, fn

SEED_ONLY = fn("""
%a = arith.add %x, %x : f32
""", "%x: f32")
NEWEST_ONLY = fn("""
%a = add %x, %x : f32
""", "%x: f32")
NEUTRAL = fn("""
%c = constant 1.0 : f32
""")


@pytest.mark.parametrize("text, std, how", [
    (SEED_ONLY, Std.SEED, "inferred"),
    (NEWEST_ONLY, Std.NEWEST, "inferred"),
    (NEUTRAL, Std.SEED, "default"),
    ("; std: newest\n" + NEUTRAL, Std.NEWEST, "declared"),
    ("; a comment\n;   std :  seed\n" + NEWEST_ONLY, Std.SEED, "declared"),
])
def test_the_version_is_declared_or_inferred(text, std, how):
    version = parse(text).version
    assert (version.std, version.how) == (std, how)


def test_a_mixed_file_is_newest_and_says_why():
    text = fn("""
    %a = arith.add %x, %x : f32
    %b = sub %x, %x : f32
    """, "%x: f32")
    version = parse(text).version
    assert version.std is Std.NEWEST
    assert version.describe() == "the newest language (inferred from 'sub' at 3.8)"


@pytest.mark.parametrize("given", list(Std))
def test_the_given_version_overrides_declaration_and_spellings(given):
    for text in (SEED_ONLY, NEWEST_ONLY, "; std: seed\n" + NEWEST_ONLY):
        version = parse(text, std=given).version
        assert (version.std, version.how) == (given, "given")


@pytest.mark.parametrize("spelling, std", [
    ("%r = cmp.lt %x, %x : bool", Std.SEED),
    ("%r = less_than %x, %x : bool", Std.NEWEST),
    ("%r = math.exp %x : f32", Std.SEED),
    ("%r = exp %x : f32", Std.NEWEST),
    ("%r = cos %x : f32", Std.NEWEST),
    ("%r = builtin.group_id : index", Std.SEED),
    ("%r = group_id.x : index", Std.NEWEST),
    ("%r = num_groups.z : index", Std.NEWEST),
    ("%r = constant -inf : f32", Std.NEWEST),
    ("%r = constant nan : f64", Std.NEWEST),
    ("axpby.n.atomic %x, %A, %one, %A", Std.SEED),
    ("axpby.atomic.n %x, %A, %one, %A", Std.NEWEST),
    ("axpby %x, %A, %x, %A", Std.NEWEST),
    ("hadamard_product %x, %A, %A, %x, %A", Std.SEED),
])
def test_spellings_of_one_version_decide(spelling, std):
    text = fn(f"%one = constant 1.0 : f32\n{spelling}", "%x: f32, %A: memref<f32x8>")
    assert parse(text).std is std


def test_spellings_both_versions_share_decide_nothing():
    text = fn("""
    %one = constant 1.0 : f32
    axpby.n %one, %A, %one, %A
    hadamard %one, %A, %A, %one, %A
    """, "%A: memref<f32x8>")
    assert parse(text).version.how == "default"


def test_a_declaration_with_an_unknown_version_is_an_error_at_the_name():
    text = "; std: newer\n" + NEUTRAL
    d = error(text)
    assert d.message == "unknown language version 'newer' in the declaration; write 'seed' or 'newest'"
    assert (d.line, d.column, d.end_column) == (1, 8, 12)


def test_two_different_declarations_are_an_error():
    d = error("; std: seed\n; std: newest\n" + NEUTRAL)
    assert d.message == "the file declares the newest language here but the seed language at line 1"
    assert d.line == 2


# ---------------------------------------------------------------- meaning per version

LIFETIME = fn("""
%t = alloca : memref<f32x16,local>
parallel {
  lifetime_stop %t
}
""")


def test_lifetime_stop_is_collective_in_the_newest_language_only():
    parse(LIFETIME, std=Std.SEED)  # mixed in the seed: fine
    from tinyc.ir.verifier import verify

    verify(parse(LIFETIME, std=Std.SEED))
    d = errors(LIFETIME, Std.NEWEST)[0]
    assert d.message == ("lifetime_stop is a collective instruction and cannot appear inside an SPMD "
                         "region (parallel at 3.3); a rule of the newest language (--std newest), "
                         "--std seed lifts it")
    assert (d.line, d.column) == at(LIFETIME, "lifetime_stop")


MUL_ADD = fn("""
parallel {
  %a = constant 1.0 : coopmatrix<f32x8x4,matrix_a>
  %b = constant 1.0 : coopmatrix<f32x4x8,matrix_b>
  %c = constant 0.0 : coopmatrix<f32x8x8,matrix_acc>
  %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<f32x8x8,matrix_acc>
}
""", attrs="{subgroup_size=16}")


def test_coopmatrix_rows_must_be_a_multiple_of_the_subgroup_size_in_the_newest_language():
    from tinyc.ir.verifier import verify

    verify(parse(MUL_ADD, std=Std.SEED))
    found = errors("; std: newest\n" + MUL_ADD)
    assert [d.message for d in found] == [
        "cooperative_matrix_mul_add: the rows of A (8) must be a multiple of the subgroup size (16); "
        "a rule of the newest language (declared at line 1), --std seed lifts it"]
    assert found[0].line == 7


def test_without_a_subgroup_size_the_compiler_picks_one_that_fits():
    text = MUL_ADD.replace(" attributes {subgroup_size=16}", "")
    result = compile_to_spirv(text, std="newest")
    assert result.kernels["k"].subgroup_size == 8
    with pytest.raises(CompilationError) as info:
        compile_to_spirv(text, std="newest", subgroup_size=16)
    assert "the rows of A (8) must be a multiple of the subgroup size (16); a rule of the newest " \
           "language (--std newest)" in str(info.value)


def test_rows_no_subgroup_size_divides_are_rejected_when_checking():
    text = MUL_ADD.replace(" attributes {subgroup_size=16}", "").replace("f32x8x4", "f32x6x4") \
        .replace("f32x8x8,matrix_acc", "f32x6x8,matrix_acc")
    found = errors(text, Std.NEWEST)
    assert found[0].message.startswith("cooperative_matrix_mul_add: the rows of A (6) must be a "
                                       "multiple of the subgroup size, and no subgroup size "
                                       "(4, 8, 16, 32 or 64) divides it")


@pytest.mark.parametrize("std, axis", [("seed", 2), ("newest", 0)])
def test_the_batch_runs_along_z_in_the_seed_and_along_x_in_the_newest_language(std, axis):
    result = compile_to_spirv(SEED_ONLY, std=std)
    assert result.kernels["k"].batch_axis == axis
    assert result.std is Std(std)


# ---------------------------------------------------------------- the command line and the API

def test_every_command_takes_std(tmp_path):
    path = tmp_path / "k.ir"
    path.write_text(LIFETIME)
    runner = CliRunner()
    assert runner.invoke(cli, ["check", str(path)]).exit_code == 0
    result = runner.invoke(cli, ["check", "--std", "newest", str(path)])
    assert result.exit_code == 1 and "a rule of the newest language (--std newest)" in result.output
    result = runner.invoke(cli, ["compile", "--std", "newest", "--emit", "ir", str(path)])
    assert result.exit_code == 1
    assert runner.invoke(cli, ["check", "--std", "newer", str(path)]).exit_code == 2
    for command in ("run", "bench"):
        assert "--std" in runner.invoke(cli, [command, "--help"]).output


def test_the_api_takes_std_and_rejects_other_names():
    import tinyc

    with pytest.raises(ValueError, match="unknown language version 'c99'; versions are seed, newest"):
        tinyc.compile(NEUTRAL, std="c99")
    with pytest.raises(CompilationError, match="a rule of the newest language"):
        tinyc.compile(LIFETIME, std="newest")


def test_a_comment_that_only_mentions_std_is_no_declaration():
    text = "; std: the standard notation of the paper\n;std:\n" + SEED_ONLY
    assert parse(text).version.how == "inferred"
    assert parse("; std: newest   \n" + SEED_ONLY).version.how == "declared"
