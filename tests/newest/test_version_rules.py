"""The rules the two versions differ on, each in both directions (docs/newest.md, "Rules").

From spec/newest/DELTA.md and a comparison of the two specs' rules. The newest language
relaxes: `cast` from matrix_acc to matrix_a/b (seed: "The shape and the use the coopmatrix
types must match"); arithmetic on coopmatrices (seed: add, sub, mul, div and neg only, per its
tables); a loop's type follows its bounds (seed: "the default integer type is index"); subview
results with extra modes and gcd lists longer than the order (tests in
test_reference_programs.py). It is stricter on: coopmatrix rows of mul_add a multiple of the
subgroup size, and a collective lifetime_stop (tests in test_std.py, both directions).

Each relaxation: accepted with `--std newest` and `; std: newest`; an error with `--std seed`
and `; std: seed` in the seed spec's words, with the suffix that names the rule's version;
and, written without any other decisive spelling, it makes the program newest (inferred).
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from newest_testlib import at, checked, errors, fn
from tinyc.cli import cli
from tinyc.std import Std

COOP_ARGS = "%A: memref<f32x16x16>, %I: memref<i32x16x16>, %C: memref<c32x16x16>"


def coop(line: str) -> str:
    """`line` in an SPMD region with coopmatrices of every kind loaded before it."""
    return fn(f"""
    parallel {{
      %z = constant 0 : index
      %acc = cooperative_matrix_load.n %A[%z, %z] : coopmatrix<f32x16x8,matrix_acc>
      %ma = cooperative_matrix_load.n %A[%z, %z] : coopmatrix<f32x16x8,matrix_a>
      %mi = cooperative_matrix_load.n %I[%z, %z] : coopmatrix<i32x16x8,matrix_a>
      %mc = cooperative_matrix_load.n %C[%z, %z] : coopmatrix<c32x16x8,matrix_a>
      {line}
    }}
    """, COOP_ARGS, "{subgroup_size=16}")


SEED_SUFFIX = {"given": "; a rule of the seed language (--std seed), --std newest lifts it",
               "declared": "; a rule of the seed language (declared at line 1), --std newest "
                           "lifts it"}

CASTS = ["%r = cast %acc : coopmatrix<f32x16x8,matrix_a>",
         "%r = cast %acc : coopmatrix<f16x16x8,matrix_b>"]
CAST_WORDS = "the shape and the use of the coopmatrix types must match"

ARITHMETIC = [  # (line, the type the seed's message names)
    ("%r = arith.rem %mi, %mi : coopmatrix<i32x16x8,matrix_a>", "coopmatrix<i32x16x8,matrix_a>"),
    ("%r = arith.min %ma, %ma : coopmatrix<f32x16x8,matrix_a>", "coopmatrix<f32x16x8,matrix_a>"),
    ("%r = arith.max %ma, %ma : coopmatrix<f32x16x8,matrix_a>", "coopmatrix<f32x16x8,matrix_a>"),
    ("%r = arith.shl %mi, %mi : coopmatrix<i32x16x8,matrix_a>", "coopmatrix<i32x16x8,matrix_a>"),
    ("%r = arith.shr %mi, %mi : coopmatrix<i32x16x8,matrix_a>", "coopmatrix<i32x16x8,matrix_a>"),
    ("%r = arith.and %mi, %mi : coopmatrix<i32x16x8,matrix_a>", "coopmatrix<i32x16x8,matrix_a>"),
    ("%r = arith.or %mi, %mi : coopmatrix<i32x16x8,matrix_a>", "coopmatrix<i32x16x8,matrix_a>"),
    ("%r = arith.xor %mi, %mi : coopmatrix<i32x16x8,matrix_a>", "coopmatrix<i32x16x8,matrix_a>"),
    ("%r = arith.abs %ma : coopmatrix<f32x16x8,matrix_a>", "coopmatrix<f32x16x8,matrix_a>"),
    ("%r = arith.not %mi : coopmatrix<i32x16x8,matrix_a>", "coopmatrix<i32x16x8,matrix_a>"),
    ("%r = arith.conj %mc : coopmatrix<c32x16x8,matrix_a>", "coopmatrix<c32x16x8,matrix_a>"),
    ("%r = arith.re %mc : coopmatrix<f32x16x8,matrix_a>", "coopmatrix<c32x16x8,matrix_a>"),
    ("%r = arith.im %mc : coopmatrix<f32x16x8,matrix_a>", "coopmatrix<c32x16x8,matrix_a>"),
]

LOOPS = [
    (fn("for %i = %a, %b {\n}", "%a: i32, %b: i32"), "for", "for %i: i32"),
    (fn("foreach (%i, %j) = (%a, %a), (%b, %b) {\n}", "%a: i64, %b: i64"), "foreach",
     "foreach (%i, ...): i64"),
]


def _position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _versions(text: str):
    """(how, the program with the version given or declared, the std to give)."""
    yield "given", text, Std.SEED
    yield "declared", "; std: seed\n" + text, None


def _newest(text: str):
    yield text, Std.NEWEST
    yield "; std: newest\n" + text, None
    yield text, None  # inferred from the construct itself


@pytest.mark.parametrize("line", CASTS)
def test_cast_from_matrix_acc_is_the_newest_languages(line: str):
    text = coop(line)
    for newest, std in _newest(text):
        assert checked(newest, std).std is Std.NEWEST
    for how, seed, std in _versions(text):
        (d,) = errors(seed, std)
        source, target = line.split("%acc : ")[1], "coopmatrix<f32x16x8,matrix_acc>"
        assert d.message == f"cast: cannot cast {target} to {source}: {CAST_WORDS}{SEED_SUFFIX[how]}"
        type_at = seed.index(source, seed.index("cast %acc"))
        assert (d.line, d.column) == _position(seed, type_at)  # the result type


def test_a_cast_between_a_and_b_is_an_error_in_both_versions():
    text = coop("%r = cast %ma : coopmatrix<f32x16x8,matrix_b>")
    (newest,) = errors(text, Std.NEWEST)
    assert newest.message.endswith("the use must stay the same or change from matrix_acc to "
                                   "matrix_a or matrix_b")
    (seed,) = errors(text, Std.SEED)
    assert seed.message.endswith(CAST_WORDS)  # no version suffix: no version allows it


@pytest.mark.parametrize("line, shown", ARITHMETIC, ids=[a[0].split()[2] for a in ARITHMETIC])
def test_arithmetic_on_coopmatrices_beyond_the_seeds_table_is_the_newest_languages(line, shown):
    text = coop(line)
    for newest, std in _newest(text):
        assert checked(newest, std).std is Std.NEWEST
    for how, seed, std in _versions(text):
        (d,) = errors(seed, std)
        op = line.split()[2]
        assert d.message.startswith(f"{op}: the seed language does arithmetic on coopmatrices "
                                    f"with add, sub, mul, div and neg only, got {shown}")
        assert d.message.endswith(SEED_SUFFIX[how])


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_the_seeds_coopmatrix_arithmetic_is_fine_in_both(op: str):
    text = coop(f"%r = arith.{op} %ma, %ma : coopmatrix<f32x16x8,matrix_a>\n"
                f"      %n = arith.neg %ma : coopmatrix<f32x16x8,matrix_a>")
    assert checked(text, Std.SEED).std is Std.SEED and checked(text).std is Std.SEED
    checked(text, Std.NEWEST)


@pytest.mark.parametrize("text, keyword, written", LOOPS, ids=["for", "foreach"])
def test_a_loop_type_following_its_bounds_is_the_newest_languages(text, keyword, written):
    for newest, std in _newest(text):
        assert checked(newest, std).std is Std.NEWEST
    for how, seed, std in _versions(text):
        (d,) = errors(seed, std)
        ty = written.split(": ")[1]
        assert d.message == (f"{keyword}: the bounds have type {ty}, but without a type after the "
                             f"loop variable the loop type is index in the seed language; write "
                             f"'{written}'{SEED_SUFFIX[how]}")
        assert (d.line, d.column) == at(seed, keyword)
    typed = text.replace("for %i =", "for %i : i32 =").replace("(%i, %j) =", "(%i, %j) : i64 =")
    assert checked(typed, Std.SEED).std is Std.SEED and checked(typed).std is Std.SEED


def test_index_loops_without_a_type_are_the_same_in_both():
    text = fn("for %i = %a, %b {\n}", "%a: index, %b: index")
    assert checked(text).version.how == "default"
    checked(text, Std.SEED)
    checked(text, Std.NEWEST)


def test_tinyc_check_applies_the_seeds_rules_with_std_seed(tmp_path):
    path = tmp_path / "k.ir"
    path.write_text(coop(CASTS[0]))
    assert CliRunner().invoke(cli, ["check", str(path)]).exit_code == 0
    result = CliRunner().invoke(cli, ["check", "--std", "seed", str(path)])
    assert result.exit_code == 1
    assert f"{CAST_WORDS}; a rule of the seed language (--std seed)" in result.stderr
