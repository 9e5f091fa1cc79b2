"""docs/schedules.md lists exactly the knobs of tinyc/schedule/knobs.py."""

from __future__ import annotations

from pathlib import Path

from tinyc.schedule.knobs import markdown_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "schedules.md"


def test_the_knob_table_of_the_docs_is_generated_from_the_knobs():
    text = DOC.read_text()
    start = text.index("<!-- knob table: generated -->\n") + len("<!-- knob table: generated -->\n")
    end = text.index("\n<!-- end of knob table -->")
    assert text[start:end] == markdown_table(), \
        "stale: paste tinyc.schedule.knobs.markdown_table() into docs/schedules.md"
