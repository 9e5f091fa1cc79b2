"""The garbage collector is the command line's business: `tinyc check`, `compile` and `fmt`
pause it while they run; the library (check_source, tinyc.compile, the parser) never changes
the process's collector state."""

from __future__ import annotations

import gc

import pytest
from click.testing import CliRunner

from tinyc.cli import cli
from tinyc.compiler import check_source, compile_to_spirv

BIG = "func @big(%a: f32) {\n" + "".join(f"  %x{i} = arith.add %a, %a : f32\n" for i in range(3000)) + "}\n"


@pytest.fixture
def gc_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def collector_state() -> tuple:
    return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count(), list(gc.callbacks)


@pytest.mark.parametrize("call", [lambda: check_source(BIG), lambda: compile_to_spirv(BIG)],
                         ids=["check_source", "compile_to_spirv"])
def test_a_library_call_leaves_the_collector_alone(gc_enabled, call):
    seen = []
    gc.callbacks.append(lambda phase, info: seen.append(phase))
    try:
        before = collector_state()
        program = call()
        assert collector_state() == before
        assert seen, "the collector ran while the library checked 3000 instructions"
    finally:
        gc.callbacks.pop()
    del program


def test_the_library_does_not_disable_a_disabled_collector_either():
    was = gc.isenabled()
    gc.disable()
    try:
        check_source(BIG)
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


@pytest.mark.parametrize("command", [["check"], ["compile", "-o", "{out}"], ["fmt", "--check"]])
def test_front_end_commands_pause_the_collector_and_restore_it(gc_enabled, command, tmp_path,
                                                                   monkeypatch):
    source = tmp_path / "big.ir"
    source.write_text(BIG)
    import tinyc.editor.format
    import tinyc.parser

    enabled_while_parsing = []

    def watched(parse):
        def run(*args, **kwargs):
            enabled_while_parsing.append(gc.isenabled())
            return parse(*args, **kwargs)
        return run

    monkeypatch.setattr(tinyc.parser, "parse", watched(tinyc.parser.parse))
    monkeypatch.setattr(tinyc.editor.format, "parse_tree", watched(tinyc.editor.format.parse_tree))
    args = [a.format(out=tmp_path / "k.spv") for a in command] + [str(source)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert enabled_while_parsing == [False]
    assert gc.isenabled()


def test_survivors_of_a_paused_command_skip_the_young_generations(gc_enabled, monkeypatch):
    from tinyc import collector

    monkeypatch.setattr(collector, "PROMOTE_ABOVE", 1000)
    gc.collect()
    with collector.paused():
        program = check_source(BIG)
        assert not gc.isenabled()
    assert gc.isenabled()
    function = program.functions[0]
    assert any(o is function for o in gc.get_objects(generation=2))


def test_objects_the_host_froze_stay_frozen(gc_enabled, monkeypatch):
    from tinyc import collector

    monkeypatch.setattr(collector, "PROMOTE_ABOVE", 1000)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector.paused():
            check_source(BIG)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_discarded_programs_are_collected_after_the_promotion_limit(gc_enabled, monkeypatch):
    """In a long-running server (tinyc lsp), what pauses promote unscanned is bounded."""
    from tinyc import collector

    monkeypatch.setattr(collector, "PROMOTE_ABOVE", 1000)
    monkeypatch.setattr(collector, "PROMOTED_LIMIT", 1)
    monkeypatch.setattr(collector, "_promoted", [0])
    full = []

    def count_full(phase: str, info: dict) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(info["collected"])

    gc.callbacks.append(count_full)
    try:
        for _ in range(2):  # the first is promoted unscanned, the second collects the first's
            with collector.paused():
                check_source(BIG)
    finally:
        gc.callbacks.remove(count_full)
    assert full and max(full) > 3000


def test_any_full_collection_restarts_the_count(gc_enabled, monkeypatch):
    from tinyc import collector

    monkeypatch.setattr(collector, "PROMOTE_ABOVE", 1000)
    monkeypatch.setattr(collector, "_promoted", [0])
    with collector.paused():
        check_source(BIG)
    assert collector._promoted[0] > 1000
    gc.collect()
    assert collector._promoted[0] == 0


def test_importing_tinyc_registers_no_collector_callback():
    import subprocess
    import sys

    code = ("import gc; before = len(gc.callbacks); import tinyc, tinyc.parser, tinyc.compiler, "
            "tinyc.editor.checking, tinyc.cli; print(len(gc.callbacks) - before)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0"
