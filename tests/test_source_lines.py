"""Diagnostics quote their source line: a Source splits its text once, however many
diagnostics it renders (a file with 20,000 warnings split it once per warning: minutes)."""

from __future__ import annotations

import copy
import pickle

from tinyc.diagnostics import Diagnostic, Source, Span

TEXT = "first line\n  second\r\nthird\n\nfifth"


def test_lines_are_the_texts_lines_and_empty_outside():
    source = Source(TEXT, "f.ir")
    expected = TEXT.splitlines()
    assert [source.line(n) for n in range(1, len(expected) + 1)] == expected
    assert source.line(0) == "" and source.line(len(expected) + 1) == "" and source.line(-1) == ""


def test_the_text_is_split_once_for_many_diagnostics(monkeypatch):
    source = Source(TEXT * 50, "f.ir")
    splits = []
    original = str.splitlines

    class Counting(str):
        def splitlines(self, *args):
            splits.append(1)
            return original(self, *args)

    counted = Source(Counting(source.text), source.name)
    rendered = [Diagnostic("something", Span(n % 200 + 1, 1, n % 200 + 1, 3, counted)).render()
                for n in range(500)]
    assert len(splits) == 1
    assert rendered == [Diagnostic("something", Span(n % 200 + 1, 1, n % 200 + 1, 3, source)).render()
                        for n in range(500)]


def test_a_source_pickles_and_copies_without_its_split_lines():
    source = Source(TEXT, "f.ir")
    source.line(2)
    again = pickle.loads(pickle.dumps(source))
    assert again == source and "_lines" not in vars(again)
    assert copy.deepcopy(source) == source
    assert again.line(2) == "  second"
