"""The garbage collector's pause around parsing: state restored, the host's frozen objects
left alone, and discarded programs still collected."""

from __future__ import annotations

import gc

import pytest

import tinyc.parser as parser
from tinyc.compiler import check_source

BIG = "func @big(%a: f32) {\n" + "".join(f"  %x{i} = arith.add %a, %a : f32\n" for i in range(3000)) + "}\n"


@pytest.fixture
def gc_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_enabled_again_and_survivors_move_to_the_oldest_generation(gc_enabled, monkeypatch):
    monkeypatch.setattr(parser, "_PROMOTE_ABOVE", 1000)
    gc.collect()
    program = check_source(BIG)
    assert gc.isenabled()
    function = program.functions[0]
    assert any(o is function for o in gc.get_objects(generation=2))  # not scanned as young
    assert len(function.body.instructions) == 3000


def test_a_disabled_collector_stays_disabled():
    was = gc.isenabled()
    gc.disable()
    try:
        check_source(BIG)
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_objects_the_host_froze_stay_frozen(gc_enabled, monkeypatch):
    monkeypatch.setattr(parser, "_PROMOTE_ABOVE", 1000)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        check_source(BIG)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_discarded_programs_are_collected_after_the_promotion_limit(gc_enabled, monkeypatch):
    monkeypatch.setattr(parser, "_PROMOTE_ABOVE", 1000)
    monkeypatch.setattr(parser, "_PROMOTED_LIMIT", 1)
    monkeypatch.setattr(parser, "_promoted", [0])
    full = []

    def count_full(phase: str, info: dict) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(info["collected"])

    gc.callbacks.append(count_full)
    try:
        check_source(BIG)  # promoted unscanned: over the limit of 1 from now on
        check_source(BIG)  # so this one collects, and finds the first program's cycles
    finally:
        gc.callbacks.remove(count_full)
    assert full and max(full) > 3000


def test_any_full_collection_restarts_the_count(gc_enabled, monkeypatch):
    monkeypatch.setattr(parser, "_PROMOTE_ABOVE", 1000)
    monkeypatch.setattr(parser, "_promoted", [0])
    check_source(BIG)
    assert parser._promoted[0] > 1000
    gc.collect()
    assert parser._promoted[0] == 0
