"""The editor's piecewise check gives exactly `tinyc check`'s diagnostics (tinyc/editor/checking.py).

The reference is `check_source`, the function behind `tinyc check`: every diagnostic's
JSON (message, severity, warning name, location, notes, hints) must be equal, in order,
after any sequence of edits, whichever pieces the checker reused.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tinyc.compiler import check_source
from tinyc.diagnostics import CompilationError
from tinyc.editor.checking import FunctionChecker, pieces
from tinyc.editor.documents import to_earlier, to_later

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "samples").glob("*.ir"))


def reference(text: str) -> list[dict]:
    try:
        return [d.to_json() for d in check_source(text, "k.ir").warnings]
    except CompilationError as err:
        return [d.to_json() for d in err.all_diagnostics]


def kernel(name: str, k: int) -> str:
    """A small kernel with a value used, one unused (a warning), a loop."""
    return (f"func @{name}(%a: f32, %A: memref<f32x8x8>, %n: index) {{\n"
            f"  %c0 = constant 0 : index\n"
            f"  %x{k} = arith.add %a, %a : f32\n"
            f"  %unused{k} = arith.mul %a, %a : f32\n"
            f"  for %i = %c0, %n {{\n"
            f"    store %x{k}, %A[%i, %c0]\n"
            f"  }}\n"
            f"}}\n")


EDITS = [  # (what to find in one function, what to put there): errors of every kind
    ("%x{k} = arith.add %a, %a", "%x{k} = arith.add %a, %nope"),       # a name error
    ("%x{k} = arith.add %a, %a : f32", "%x{k} = arith.add %a, %a : f64"),  # a type error
    ("constant 0 : index", "constant 0 :"),                              # a syntax error
    ("%x{k} = arith.add", "%x{k} = add"),                                # newest spelling
    ("store %x{k}", "store.atomic %x{k}"),                               # seed spelling
    ("func @{name}(", "func @k0("),                                      # defined twice
    ("  %c0 = constant 0 : index\n", "  %c0 = constant 0 : index\n\n\n"),  # lines move
    ("  %unused{k} = arith.mul %a, %a : f32\n", ""),                     # a warning goes
    ("store %x{k}, %A[%i, %c0]", 'store %x{k}, %A[%i, %c0] ; "quoted" {'),  # a comment
]


def program(count: int) -> str:
    return "; a generated file\n" + "\n".join(kernel(f"k{k}", k) for k in range(count))


def test_a_file_is_cut_where_top_level_functions_start():
    text = program(3)
    cut = pieces(text)
    assert [line for line, _ in cut] == [1, 11, 20]
    assert "".join(piece for _, piece in cut) == text
    assert pieces(kernel("one", 0)) is None  # one function: nothing to gain
    assert pieces(text + '\nfunc @s() attributes {"x"=1} {\n}\n') is None  # strings


@pytest.mark.parametrize("seed", range(6))
def test_every_edit_gives_the_diagnostics_of_tinyc_check(seed: int):
    rng = random.Random(seed)
    text = program(6)
    checker = FunctionChecker("k.ir")
    assert [d.to_json() for d in checker.check(text).diagnostics] == reference(text)
    for _ in range(12):
        k = rng.randrange(6)
        find, put = rng.choice(EDITS)
        find, put = (x.replace("{k}", str(k)).replace("{name}", f"k{k}") for x in (find, put))
        start = text.find(f"func @k{k}(")
        at = text.find(find, max(start, 0))
        if at >= 0:
            text = text[:at] + put + text[at + len(find):]
        if rng.random() < 0.2:
            text = "; std: seed\n" + text if not text.startswith("; std") else text[12:]
        got = checker.check(text)
        assert [d.to_json() for d in got.diagnostics] == reference(text), text
        fresh = FunctionChecker("k.ir").check(text)
        assert [d.to_json() for d in fresh.diagnostics] == reference(text)


LIFETIME = "func @f() {\n  %t = alloca : memref<f32x16,local>\n  parallel {\n    lifetime_stop %t\n  }\n}\n"


def test_the_version_comes_from_the_whole_file():
    """lifetime_stop in an SPMD region is an error in the newest language only: a newest
    spelling in the last function makes the first function's lifetime_stop an error."""
    seed = LIFETIME + kernel("g", 1)
    newest = seed.replace("%x1 = arith.add", "%x1 = add")
    checker = FunctionChecker("k.ir")
    for text, errors in ((seed, 0), (newest, 1), (seed, 0)):
        got = checker.check(text).diagnostics
        assert [d.to_json() for d in got] == reference(text)
        assert sum(d.severity == "error" for d in got) == errors


def test_samples_joined_check_the_same():
    text = "\n".join(p.read_text() for p in SAMPLES)
    got = FunctionChecker("k.ir").check(text)
    assert [d.to_json() for d in got.diagnostics] == reference(text)


def test_only_changed_functions_are_parsed_again(monkeypatch):
    import tinyc.parser

    text = program(8)
    checker = FunctionChecker("k.ir")
    checker.check(text)
    parsed = []
    real = tinyc.parser.parse_functions
    monkeypatch.setattr(tinyc.parser, "parse_functions",
                        lambda piece, *a, **k: parsed.append(piece) or real(piece, *a, **k))
    edited = text.replace("%x5 = arith.add %a, %a", "%x5 = arith.add %a, %nope")
    assert [d.to_json() for d in checker.check(edited).diagnostics] == reference(edited)
    assert len(parsed) == 1 and "@k5" in parsed[0]


def test_offsets_map_through_edits_both_ways():
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice("ab\n") for _ in range(rng.randrange(0, 30)))
        origin = list(range(len(text)))  # where each character was before the edits
        edits = []
        for _ in range(rng.randrange(1, 4)):
            start = rng.randrange(len(text) + 1)
            end = rng.randrange(start, len(text) + 1)
            new = "X" * rng.randrange(0, 4)
            text = text[:start] + new + text[end:]
            origin = origin[:start] + [None] * len(new) + origin[end:]
            edits.append((start, end, len(new)))
        for now, before in enumerate(origin):
            assert to_earlier(edits, now) == before
            if before is not None:
                assert to_later(edits, before) == now
