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
    from tinyc.cli import common

    monkeypatch.setattr(common, "PROMOTE_ABOVE", 1000)
    gc.collect()
    with common.collector_paused():
        program = check_source(BIG)
        assert not gc.isenabled()
    assert gc.isenabled()
    function = program.functions[0]
    assert any(o is function for o in gc.get_objects(generation=2))


def test_objects_the_host_froze_stay_frozen(gc_enabled, monkeypatch):
    from tinyc.cli import common

    monkeypatch.setattr(common, "PROMOTE_ABOVE", 1000)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with common.collector_paused():
            check_source(BIG)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
