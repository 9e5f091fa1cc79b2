"""The generated LALR tables are fresh, and the driver builds lark's trees and errors.

lark is a development dependency now: `tinyc/parser/gen_tables.py` uses it to
analyse tensor.lark. These tests parse the samples and thousands of broken
variants of them with both lark and `tinyc.parser.lalr` and compare every
node, token, position and the terminals offered at a syntax error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from tinyc.parser import gen_tables, lalr, tables
from tinyc.parser.lexer import LexError, TensorLexer

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted((REPO / "samples").glob("*.ir")) + sorted((REPO / "benchmarks" / "kernels").glob("*.ir"))


def test_committed_tables_are_fresh():
    committed = Path(tables.__file__).read_text(encoding="utf-8")
    assert gen_tables.render() == committed, "tinyc/parser/tables.py is stale: run `python -m tinyc.parser.gen_tables`"


def test_tables_do_not_depend_on_hash_seeds():
    script = "from tinyc.parser import gen_tables; print(gen_tables.render(), end='')"
    outputs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(REPO))
        outputs.add(subprocess.run([sys.executable, "-c", script], env=env, cwd=REPO, check=True,
                                   capture_output=True, text=True).stdout)
    assert len(outputs) == 1


def test_parsing_does_not_import_lark():
    script = "import sys; from tinyc.parser import parse; parse('func @f() {}'); print('lark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=str(REPO)),
                         cwd=REPO, check=True, capture_output=True, text=True).stdout
    assert out.strip() == "False"


# ---------------------------------------------------------------- lark as the oracle

@lru_cache(maxsize=1)
def _lark_parser():
    from lark import Lark, Token
    from lark.lexer import Lexer

    class Adapter(Lexer):
        """tinyc's lexer, giving lark's Token class."""

        __future_interface__ = 0

        def __init__(self, lexer_conf) -> None:
            self.inner = TensorLexer()

        def lex(self, text):
            for t in self.inner.lex(text):
                yield Token(t.type, t.value, t.start_pos, t.line, t.column, t.end_line, t.end_column, t.end_pos)

    return Lark(gen_tables.grammar(), parser="lalr", lexer=Adapter, propagate_positions=True,
                maybe_placeholders=False)


_POSITIONS = ("line", "column", "start_pos", "end_line", "end_column", "end_pos")
_CONTAINER = tuple(f"container_{p}" for p in _POSITIONS)


def _shape(node) -> tuple:
    """Everything the IR builder can see of a parse tree, comparable across both libraries."""
    if hasattr(node, "data"):
        meta = node.meta
        empty = getattr(meta, "empty", True)
        where = () if empty else tuple(getattr(meta, p) for p in _POSITIONS + _CONTAINER)
        return (str(node.data), empty, where, tuple(_shape(c) for c in node.children))
    return ("token", node.type, node.value) + tuple(getattr(node, p) for p in _POSITIONS)


def _outcome_lark(text: str) -> tuple:
    from lark.exceptions import UnexpectedToken

    try:
        return ("tree", _shape(_lark_parser().parse(text)))
    except LexError as err:
        return ("lex", err.message, err.line, err.column)
    except UnexpectedToken as err:
        return ("syntax", _shape(err.token), frozenset(err.interactive_parser.accepts()))


def _outcome_tinyc(text: str) -> tuple:
    try:
        return ("tree", _shape(lalr.parse(TensorLexer().lex(text))))
    except LexError as err:
        return ("lex", err.message, err.line, err.column)
    except lalr.ParseError as err:
        return ("syntax", _shape(err.token), frozenset(err.accepts()))


def _variants(text: str, step: int) -> list[str]:
    """The text, every `step`-th prefix (ends at token boundaries) and token deletions."""
    tokens = list(TensorLexer().lex(text))
    out = [text, ""]
    for i in range(0, len(tokens), step):
        t = tokens[i]
        out.append(text[:t.start_pos])                              # truncated before token i
        out.append(text[:t.start_pos] + text[t.end_pos:])           # token i deleted
        if i + 1 < len(tokens):                                     # tokens i and i+1 swapped
            u = tokens[i + 1]
            out.append(text[:t.start_pos] + text[u.start_pos:u.end_pos] + " "
                       + text[t.start_pos:t.end_pos] + text[u.end_pos:])
    return out


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_trees_and_errors_equal_lark(path):
    pytest.importorskip("lark")
    for text in _variants(path.read_text(), step=9):
        assert _outcome_tinyc(text) == _outcome_lark(text), text
