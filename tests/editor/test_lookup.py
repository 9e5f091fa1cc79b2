"""Names looked up in the IR (tinyc/editor/lookup.py) answer as the full analysis does.

The language server looks names up while the names of a large file are still being found;
the reference is `Analysis`, which finds all of them: at every offset of every sample (and
of a generated kernel), the name, its definition, type, description and uses must agree.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tinyc.editor.analysis import Analysis
from tinyc.editor.lookup import PointNames

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from benchmarks.lsp_latency import many_functions  # noqa: E402

TEXTS = {p.stem: p.read_text() for p in sorted((REPO / "samples").glob("*.ir"))}
TEXTS["generated"] = many_functions(300)


def described(o):
    if o is None:
        return None
    s = o.symbol
    return (o.start, o.end, o.is_definition, s.name, s.start, s.end, s.type, s.what, s.function)


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_lookups_agree_with_the_analysis_everywhere(name: str):
    text = TEXTS[name]
    full = Analysis(text, "k.ir")
    assert full.checked.program is not None
    looked = PointNames(text, full.checked.program)
    assert [(f.name, f.start, f.end, f.name_start, f.signature) for f in looked.functions] == \
        [(f.name, f.start, f.end, f.name_start, f.signature) for f in full.functions]
    for offset in range(len(text) + 1):
        want, got = full.occurrence_at(offset), looked.occurrence_at(offset)
        assert described(got) == described(want), (offset, text[offset - 10:offset + 10])
        if want is not None and want.symbol.name.startswith("%"):
            assert sorted((o.start, o.end, o.is_definition) for o in looked.references(got.symbol)) \
                == sorted((o.start, o.end, o.is_definition) for o in full.references(want.symbol))
    for offset in range(0, len(text) + 1, 7):
        assert [s.name for s in looked.definitions_before(offset)] == \
            [s.name for s in full.definitions_before(offset)]
