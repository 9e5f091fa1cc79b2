"""The launch-bounds analysis remembers the bounds it derives (index_values.ScopedBounds):
with the memo, every result must be the one derived afresh at each query — also where a
guard refines a bound inside an `if` (the memo of that scope must neither see the outer
derivations nor leak its own out of the scope)."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

import tinyc
from tinyc.analysis import index_values
from tinyc.analysis.launch_bounds import analyse, unbounded_accesses
from tinyc.fuzz.programs import kernels
from tinyc.pipeline import check_source

REPO = Path(__file__).resolve().parents[2]

GUARDS = """
func @refined(%n: index, %A: memref<f32x?>, %B: memref<f32x64>) {
  %g = builtin.group_id : index
  %c4 = constant 4 : index
  %k = arith.mul %g, %c4 : index
  %v = load %A[%k] : f32
  %small = cmp.lt %g, %n : bool
  if %small {
    %w = load %A[%k] : f32
    %c16 = constant 16 : index
    %low = cmp.lt %g, %c16 : bool
    if %low {
      store %w, %B[%k]
    }
    store %v, %A[%k]
  }
  %u = load %A[%k] : f32
  store %u, %A[%g]
}
"""


class _Forgetful(index_values.ScopedBounds):
    """ScopedBounds without a memo: each query derives its bounds afresh."""

    @property  # type: ignore[override]
    def memo(self):
        return None

    @memo.setter
    def memo(self, value):
        pass


def _programs() -> list[tuple[str, str, str]]:
    texts = [("guards", GUARDS, "seed")]
    for path in sorted(glob.glob(str(REPO / "samples" / "*.ir")) + glob.glob(str(REPO / "tests" / "**" / "*.ir"),
                                                                            recursive=True)):
        texts.append((path, Path(path).read_text(), "newest"))
    for subscripts, shapes in [("ijb,jkb,klb->ilb", [(8, 8, 2000)] * 3), ("ijb,jb->ib", [(16, 16, 2000), (16, 2000)]),
                               ("k,bkl->kl", [(3,), (40, 3, 1)]), ("ik,kjb->ijb", [(16, 8), (8, 12, 2000)])]:
        texts.append((subscripts, tinyc.contract(subscripts, *shapes, dtype="f32").source, "seed"))
    texts += [(k.name, k.text, k.std) for k in kernels(20261127, 120)]
    return texts


def _results(texts: list[tuple[str, str, str]]) -> list[str]:
    found = []
    for name, text, std in texts:
        try:
            program = check_source(text, name, std=std)
        except tinyc.CompilationError:
            continue
        for fn in program.functions:
            r = analyse(fn)
            found.append(f"{name} {fn.name} {sorted(map(repr, r.conditions))} {r.unbounded!r} "
                         f"{r.batch_split_problem!r} {sorted(map(repr, r.last_groups))} {r.write_blocks!r} "
                         f"{unbounded_accesses(fn)!r}")
    return found


def test_remembered_bounds_are_the_derived_ones(monkeypatch: pytest.MonkeyPatch):
    texts = _programs()
    remembered = _results(texts)
    monkeypatch.setattr(index_values, "ScopedBounds", _Forgetful)
    derived = _results(texts)
    assert len(remembered) > 100
    assert remembered == derived
