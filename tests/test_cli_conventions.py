"""What users expect of a compiler's command line: --version, '-', several files,
exit codes, colour, JSON diagnostics, `tinyc fmt`, and no traceback ever."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import tinyc
from tinyc.cli import cli
from tinyc.cli.common import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE

REPO = Path(__file__).resolve().parent.parent
SAMPLES = sorted((REPO / "samples").glob("*.ir"))
GOOD = str(REPO / "samples" / "fused_kernel.ir")
ENV = dict(os.environ, PYTHONPATH=str(REPO))
ENV.pop("NO_COLOR", None)
BAD_TEXT = "func @f(%a: f32) {\n  %x = arith.ad %a, %a : f32\n}\n"
NAMES_TEXT = "func @f(%alpha: f32) {\n  %x = arith.add %alpah, %b : f32\n  %alpha = arith.add %x, %x : f32\n}\n"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def tinyc_cli(*args: str, input: bytes | None = None, env: dict | None = None):
    """`tinyc ARGS` in its own process (for stdin, stdout bytes and exit codes)."""
    return subprocess.run([sys.executable, "-m", "tinyc.cli", *args], input=input,
                          capture_output=True, env=env or ENV, cwd=REPO)


def invoke(*args: str, input: str | bytes | None = None):
    return CliRunner().invoke(cli, list(args), input=input)


@pytest.fixture
def bad(tmp_path) -> str:
    path = tmp_path / "bad.ir"
    path.write_text(BAD_TEXT)
    return str(path)


def one_line_error(stderr: str, *words: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tinyc: error: "), stderr
    assert all(w in lines[0] for w in words), stderr
    assert "Traceback" not in stderr


# ---------------------------------------------------------------- --version

@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    proc = tinyc_cli(flag)
    assert proc.returncode == 0
    assert proc.stdout.decode() == f"tinyc {tinyc.__version__}\n"


# ---------------------------------------------------------------- '-'

def test_check_reads_standard_input():
    proc = tinyc_cli("check", "-", input=BAD_TEXT.encode())
    assert proc.returncode == EXIT_INPUT
    assert proc.stderr.decode().startswith("<stdin>:2.8-15: error: unknown instruction 'arith.ad'")
    assert tinyc_cli("check", "-", input=Path(GOOD).read_bytes()).returncode == EXIT_OK


def test_compile_reads_stdin_and_writes_stdout(tmp_path):
    from_file = tmp_path / "k.spv"
    assert invoke("compile", GOOD, "-o", str(from_file)).exit_code == 0
    piped = tinyc_cli("compile", "-", "-o", "-", input=Path(GOOD).read_bytes())
    assert piped.returncode == 0
    assert piped.stdout == from_file.read_bytes()
    default = tinyc_cli("compile", "-", input=Path(GOOD).read_bytes())  # stdin: stdout by default
    assert default.stdout == from_file.read_bytes()
    assembly = tinyc_cli("compile", "-", "-S", "-o", "-", input=Path(GOOD).read_bytes())
    assert b"OpEntryPoint Kernel" in assembly.stdout


def test_no_binary_to_a_terminal():
    main, child = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "tinyc.cli", "compile", "-"],
                              input=Path(GOOD).read_bytes(), stdout=child, stderr=subprocess.PIPE,
                              env=ENV, cwd=REPO)
    finally:
        os.close(child)
        os.close(main)
    assert proc.returncode == EXIT_USAGE
    one_line_error(proc.stderr.decode(), "terminal")


# ---------------------------------------------------------------- several files, exit codes

def test_check_several_files_reports_each(bad):
    result = invoke("check", GOOD, bad, str(SAMPLES[1]))
    assert result.exit_code == EXIT_INPUT
    assert result.stderr.startswith(f"{bad}:2.8-15: error: unknown instruction")


def test_exit_2_when_no_input_can_be_read(tmp_path):
    result = invoke("check", str(tmp_path / "missing.ir"))
    assert result.exit_code == EXIT_USAGE
    one_line_error(result.stderr, "cannot read", "missing.ir", "No such file")
    both = invoke("check", str(tmp_path / "a.ir"), str(tmp_path / "b.ir"))
    assert both.exit_code == EXIT_USAGE
    assert both.stderr.count("tinyc: error: cannot read") == 2


def test_exit_1_when_some_input_cannot_be_read_and_the_rest_is_processed(tmp_path, bad):
    missing = str(tmp_path / "missing.ir")
    with_good = invoke("check", missing, GOOD)
    assert with_good.exit_code == EXIT_INPUT
    one_line_error(with_good.stderr, "missing.ir")
    with_bad = invoke("check", missing, bad)
    assert with_bad.exit_code == EXIT_INPUT
    assert "missing.ir" in with_bad.stderr and f"{bad}:2.8-15: error" in with_bad.stderr


def test_a_directory_is_an_unreadable_input(tmp_path):
    result = invoke("check", str(tmp_path))
    assert result.exit_code == EXIT_USAGE
    one_line_error(result.stderr, str(tmp_path), "Is a directory")


def test_compile_several_files_next_to_their_sources(tmp_path, bad):
    sources = []
    for sample in SAMPLES[:3]:
        copy = tmp_path / sample.name
        copy.write_text(sample.read_text())
        sources.append(str(copy))
    missing = str(tmp_path / "missing.ir")
    result = invoke("compile", sources[0], missing, bad, *sources[1:])
    assert result.exit_code == EXIT_INPUT
    assert "missing.ir" in result.stderr and "unknown instruction" in result.stderr
    for source in sources:
        assert Path(source).with_suffix(".spv").read_bytes()[:4] == b"\x03\x02\x23\x07"
    assert not Path(bad).with_suffix(".spv").exists()


def test_compile_several_files_into_a_directory(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    result = invoke("compile", *map(str, SAMPLES[:2]), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == sorted(p.with_suffix(".spv").name
                                                           for p in SAMPLES[:2])
    plain = invoke("compile", *map(str, SAMPLES[:2]), "-o", str(tmp_path / "one.spv"))
    assert plain.exit_code == EXIT_USAGE and "directory" in plain.output


@pytest.mark.parametrize("output", ["does/not/exist/x.spv", "file.txt/x.spv"])
def test_unwritable_output_is_one_line_and_exit_2(tmp_path, output):
    (tmp_path / "file.txt").write_text("not a directory")
    target = str(tmp_path / output)
    proc = tinyc_cli("compile", GOOD, "-o", target)
    assert proc.returncode == EXIT_USAGE
    one_line_error(proc.stderr.decode(), "cannot write", target)
    several = invoke("compile", GOOD, str(SAMPLES[0]), "-o", "-", "--emit", "ir")
    assert several.exit_code == 0


def test_unwritable_output_wins_over_other_outcomes(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "fused_kernel.spv").mkdir()  # cannot be replaced by a file
    result = invoke("compile", GOOD, str(SAMPLES[0]), "-o", str(target))
    assert result.exit_code == EXIT_USAGE
    assert (target / SAMPLES[0].with_suffix(".spv").name).exists()


def test_internal_errors_exit_3_with_one_line(monkeypatch):
    import tinyc.compiler

    def broken(*args, **kwargs):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(tinyc.compiler, "check_source", broken)
    result = invoke("check", GOOD)
    assert result.exit_code == EXIT_INTERNAL
    one_line_error(result.stderr, "internal error", "simulated bug")


def test_readme_lists_every_exit_code():
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("Exit codes"):]
    section = section[:section.index("\n\n", section.index("\n- "))]
    for code in (EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL):
        assert f"- {code} " in section or f"- `{code}`" in section, code
    assert "none" in section and "unwritable" in section.replace("cannot be written", "unwritable")


# ---------------------------------------------------------------- colour

def _stderr_on_a_terminal(args: list[str], env: dict) -> str:
    """Run with standard error on a pseudo-terminal, return what it shows."""
    main, child = pty.openpty()
    try:
        subprocess.run([sys.executable, "-m", "tinyc.cli", *args], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=child, env=env, cwd=REPO, timeout=60)
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(main)
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_unless_no_color(bad):
    coloured = _stderr_on_a_terminal(["check", bad], ENV)
    assert ANSI.search(coloured)
    assert "\x1b[1;31merror:" in coloured
    plain = _stderr_on_a_terminal(["check", bad], dict(ENV, NO_COLOR="1"))
    assert plain and not ANSI.search(plain)
    assert not ANSI.search(_stderr_on_a_terminal(["--color", "never", "check", bad], ENV))
    assert not ANSI.search(_stderr_on_a_terminal(["check", "--color=never", bad], ENV))


def test_colour_options_when_piped(bad):
    assert not ANSI.search(tinyc_cli("check", bad).stderr.decode())
    forced = tinyc_cli("check", "--color", "always", bad, env=dict(ENV, NO_COLOR="1"))
    text = forced.stderr.decode()
    assert ANSI.search(text)
    assert ANSI.sub("", text) == tinyc_cli("check", bad).stderr.decode()
    assert ANSI.search(tinyc_cli("--color=always", "check", bad).stderr.decode())


# ---------------------------------------------------------------- JSON

def test_json_has_hints_notes_and_lsp_ranges(tmp_path):
    path = tmp_path / "names.ir"
    path.write_text(NAMES_TEXT)
    result = invoke("check", "--format", "json", str(path))
    assert result.exit_code == EXIT_INPUT
    undefined, _, redefined = json.loads(result.stdout)
    assert undefined["message"] == "undefined value '%alpah'"
    assert undefined["hints"] == ["did you mean '%alpha'?"]
    # 1-based, inclusive end, like the text form `2.18-23`
    assert (undefined["line"], undefined["column"], undefined["end_column"]) == (2, 18, 23)
    # LSP: 0-based, exclusive end
    assert undefined["range"] == {"start": {"line": 1, "character": 17},
                                  "end": {"line": 1, "character": 23}}
    assert redefined["hints"] == []
    note = redefined["notes"][0]
    assert note["message"] == "'%alpha' is first defined here"
    assert (note["line"], note["column"]) == (1, 9)
    assert note["range"]["start"] == {"line": 0, "character": 8}
    assert note["file"] == str(path)


def test_json_ranges_count_utf16_units(tmp_path):
    path = tmp_path / "wide.ir"
    path.write_text('func @f() attributes {"😀\n')  # an unterminated string holding an emoji
    d = json.loads(invoke("check", "--format", "json", str(path)).stdout)[0]
    assert d["column"] == 23 and d["end_column"] == 24  # characters
    assert d["range"]["start"]["character"] == 22
    assert d["range"]["end"]["character"] == 25  # the emoji is two UTF-16 units


# ---------------------------------------------------------------- fmt

MESSY = "func @f(%a: f32) {\n%x=arith.add %a,%a:f32   ; sum\n}\n"
TIDY = "func @f(%a: f32) {\n  %x = arith.add %a, %a : f32  ; sum\n}\n"


def test_fmt_rewrites_files_in_place(tmp_path):
    messy, tidy = tmp_path / "messy.ir", tmp_path / "tidy.ir"
    messy.write_text(MESSY)
    tidy.write_text(TIDY)
    result = invoke("fmt", str(messy), str(tidy))
    assert result.exit_code == 0, result.output
    assert messy.read_text() == TIDY and tidy.read_text() == TIDY


def test_fmt_check_shows_a_diff_and_exits_1(tmp_path):
    messy = tmp_path / "messy.ir"
    messy.write_text(MESSY)
    result = invoke("fmt", "--check", str(messy))
    assert result.exit_code == EXIT_INPUT
    assert f"--- {messy}\n+++ {messy} (formatted)\n" in result.stdout
    assert "-%x=arith.add %a,%a:f32   ; sum\n" in result.stdout
    assert "+  %x = arith.add %a, %a : f32  ; sum\n" in result.stdout
    assert messy.read_text() == MESSY
    assert invoke("fmt", "--check", *map(str, SAMPLES)).exit_code == 0


def test_fmt_standard_input_to_standard_output():
    proc = tinyc_cli("fmt", "-", input=MESSY.encode())
    assert proc.returncode == 0 and proc.stdout.decode() == TIDY
    check = tinyc_cli("fmt", "--check", "-", input=MESSY.encode())
    assert check.returncode == EXIT_INPUT and "+++ <stdin> (formatted)" in check.stdout.decode()


def test_fmt_leaves_files_with_syntax_errors_alone(tmp_path, bad):
    before = Path(bad).read_text()
    missing = str(tmp_path / "missing.ir")
    result = invoke("fmt", bad, missing)
    assert result.exit_code == EXIT_INPUT
    assert "unknown instruction" not in result.stderr or "arith.ad" in result.stderr
    assert Path(bad).read_text() == before
    assert invoke("fmt", missing).exit_code == EXIT_USAGE


def test_hints_of_their_own_line_are_json_hints_too():
    from tinyc.diagnostics import Diagnostic, Source, Span

    source = Source("%x = constant 2 -> i32\n", "x.ir")
    d = Diagnostic("unexpected '->', expected ':'", Span(1, 17, 1, 18, source),
                   hint="write 'constant 2 : i32'")
    assert str(d).splitlines()[-1] == "hint: write 'constant 2 : i32'"
    assert d.to_json()["hints"] == ["write 'constant 2 : i32'"]
    assert d.to_json()["message"] == "unexpected '->', expected ':'"
