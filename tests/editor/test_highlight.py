"""Syntax colours: the Pygments lexer and the TextMate grammar against the compiler's lexer.

Every token the compiler's own lexer finds in the samples (and in a set of
odd and broken texts) must come out of Pygments and of the TextMate grammar
(run with Oniguruma, the engine of VS Code) as one token of the kind its role
says: instructions, types, values, constants, attributes, comments.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import onigurumacffi
import pytest
from pygments.token import (
    Comment, Error, Keyword, Name, Number, Operator, Punctuation, String,
)

from tinyc.editor import textmate, vocabulary
from tinyc.editor.pygments_lexer import TinycLexer
from tinyc.editor.tokens import editor_tokens

REPO = Path(__file__).resolve().parents[2]
SAMPLES = sorted((REPO / "samples").glob("*.ir"))

ODD_TEXTS = [
    "func @f(%a: f32, %B: memref<f32x4x?,strided<1,?>> {alignment=16},\n"
    "        %G: group<memref<f32 x 8> x ?, offset : ?>) attributes {subgroup_size=16} {\n"
    "  %c = constant [1.0, -2.5e3] : c32 ; complex\n"
    "  %e = expand %B[0 -> 2 x %n] : memref<f32x2x2x?>\n"
    "  %t = constant true : bool\n  %h = constant 0x1p3 : f64\n"
    "  store.atomic_add %a, %B[%i, %j]\n  barrier.global.local\n"
    "  %x = cooperative_matrix_load.t.rows_checked %B[%i, %j] : coopmatrix<f16x8x8,matrix_a>\n"
    '  %q = for %k : i32 = %a, %b init(%u = %v) -> (f32) { yield (%u) } {unroll=true, "x"=[1]}\n'
    "}\n",
    "func @broken(%a: f3 { gemn.n.t %a, %b ; half\n  %x = arith.ad $ ! ^ 😀 .atomc indx\n",
    "\ufeff; a byte-order mark first\nfunc @g() {}\n",
]
TEXTS = [p.read_text() for p in SAMPLES] + ODD_TEXTS

PYGMENTS_KIND = {
    "instruction": Keyword, "modifier": Keyword, "type": Keyword.Type, "value": Name.Variable,
    "function": Name.Function, "number": Number, "string": String, "constant": Keyword.Constant,
    "attribute": Name.Attribute, "comment": Comment, "punctuation": (Punctuation, Operator),
    "keyword": (Keyword.Declaration, Keyword.Reserved), "unknown": Name, "error": Error,
}
TEXTMATE_SCOPE = {
    "instruction": "keyword.other.instruction", "modifier": "keyword.other.modifier",
    "type": "storage.type.tinyc", "value": "variable.other.value", "function": "entity.name.function",
    "number": "constant.numeric", "string": "string.quoted", "constant": "constant.language",
    "attribute": "entity.other.attribute-name", "comment": "comment.line",
    "punctuation": ("punctuation", "keyword.operator"), "keyword": ("keyword.control",
                                                                   "storage.type.function"),
    "unknown": "meta.word", "error": "invalid.illegal",
}


def _compiler_tokens(text: str):
    """(start, end, role) of every token and comment, by the compiler's lexer.

    An unterminated string is one error token to the compiler (to the end of
    its line); the colourers may split it, so it is left out."""
    return [(t.start, t.end, t.role) for t in editor_tokens(text)
            if not (t.role == "error" and t.text.startswith('"'))]


@pytest.mark.parametrize("text", TEXTS, ids=[p.name for p in SAMPLES] + ["odd", "broken", "bom"])
def test_pygments_tokens_agree_with_the_compiler(text):
    pieces = {}
    for index, kind, value in TinycLexer(stripnl=False, ensurenl=False).get_tokens_unprocessed(text):
        pieces[index] = (index + len(value), kind)
    for start, end, role in _compiler_tokens(text):
        assert start in pieces, (text[start:end], role)
        got_end, kind = pieces[start]
        assert got_end == end, (text[start:end], text[start:got_end])
        want = PYGMENTS_KIND[role]
        assert kind in (want if isinstance(want, tuple) else (want,)) or any(
            kind in w for w in (want if isinstance(want, tuple) else (want,))), (text[start:end], kind)


def test_pygments_distinguishes_the_kinds():
    text = SAMPLES[0].read_text()
    kinds = {kind for kind, _ in TinycLexer().get_tokens(ODD_TEXTS[0] + text)}
    for kind in (Keyword, Keyword.Type, Name.Variable, Number.Float, Number.Integer,
                 Name.Attribute, Comment.Single, Keyword.Constant):
        assert kind in kinds


def test_pygments_entry_point_is_declared():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    target = project["project"]["entry-points"]["pygments.lexers"]["tinyc"]
    module, _, name = target.partition(":")
    assert getattr(__import__(module, fromlist=[name]), name) is TinycLexer


def test_pygmentize_finds_the_lexer_after_pip_install(tmp_path):
    """`pip install` this tree, then `pygmentize -l tinyc` (and `tinyc --version`) from it."""
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(target), str(REPO)],
                   check=True, capture_output=True, cwd=tmp_path)
    env = dict(os.environ, PYTHONPATH=str(target))
    sample = REPO / "samples" / "fused_kernel.ir"
    proc = subprocess.run([sys.executable, "-m", "pygments", "-l", "tinyc", "-f", "raw",
                           str(sample)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Token.Keyword\t'gemm'" in proc.stdout and "Token.Keyword.Type\t'f32'" in proc.stdout
    guessed = subprocess.run([sys.executable, "-m", "pygments", "-N", str(sample)],
                             capture_output=True, text=True, env=env, cwd=tmp_path)
    assert guessed.stdout.strip() == "tinyc"
    version = subprocess.run([str(target / "bin" / "tinyc"), "--version"], capture_output=True,
                             text=True, env=env, cwd=tmp_path)
    assert version.stdout.strip() == f"tinyc {__import__('tinyc').__version__}"


# ---------------------------------------------------------------- TextMate

def _textmate_tokens(text: str) -> dict[int, tuple[int, str | None]]:
    """Tokenise line by line with TextMate's rule (earliest match, then first pattern)."""
    patterns = [(onigurumacffi.compile(p["match"]), p.get("name"))
                for p in textmate.grammar()["patterns"]]
    found: dict[int, tuple[int, str | None]] = {}
    offset = 0
    for line in text.splitlines(keepends=True):
        position = 0
        while position < len(line):
            best = None
            for regex, scope in patterns:
                m = regex.search(line, start=position)
                if m is not None and (best is None or m.start() < best[0].start()):
                    best = (m, scope)
            assert best is not None and best[0].end() > best[0].start(), line[position:]
            m, scope = best
            found[offset + m.start()] = (offset + m.end(), scope)
            position = m.end()
        offset += len(line)
    return found


def test_the_committed_grammar_is_generated():
    assert textmate.GRAMMAR.read_text() == textmate.render(), \
        "the language changed: run `python -m tinyc.editor.textmate` and commit the grammar"


def test_every_textmate_expression_compiles_in_oniguruma():
    for pattern in textmate.grammar()["patterns"]:
        onigurumacffi.compile(pattern["match"])


@pytest.mark.parametrize("text", TEXTS, ids=[p.name for p in SAMPLES] + ["odd", "broken", "bom"])
def test_textmate_scopes_agree_with_the_compiler(text):
    text = text.lstrip("\ufeff")  # editors strip the byte-order mark before colouring
    pieces = _textmate_tokens(text)
    for start, end, role in _compiler_tokens(text):
        assert start in pieces, (text[start:end], role)
        got_end, scope = pieces[start]
        assert got_end == end, (text[start:end], text[start:got_end])
        want = TEXTMATE_SCOPE[role]
        assert scope is not None and scope.startswith(want if isinstance(want, tuple) else (want,)), \
            (text[start:end], scope)


def test_keyword_lists_come_from_the_grammar():
    """Every instruction spelling, type and attribute name the grammar has is coloured."""
    text = "\n".join(w.spelling for w in vocabulary.instructions()) + "\n"
    text += " ".join(sorted(vocabulary.type_words())) + " " + " ".join(vocabulary.attribute_names())
    scopes = {scope for _, scope in _textmate_tokens(text).values()}
    assert "meta.word.tinyc" not in scopes and "invalid.illegal.tinyc" not in scopes
    kinds = {kind for _, kind in TinycLexer().get_tokens(text)}
    assert Name not in kinds and Error not in kinds
