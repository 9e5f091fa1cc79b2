"""Broken input must end in CompilationError: no other exception, no hang.

The samples are mutated token by token (deleted, duplicated, swapped,
replaced by another token of the file, random characters inserted, cut
short) and fed to `check_source`, so both the parser and the verifier see
near-valid programs as well as garbage.
"""

from __future__ import annotations

import re
import signal
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parser_testlib import SAMPLES

from tinyc.diagnostics import CompilationError
from tinyc.compiler import check_source

_TOKEN = re.compile(r"\s+|[%@]?[A-Za-z0-9_.+-]+|.", re.S)
_ODD_CHARACTERS = "%@{}()[]<>,:=?x.-+0123456789efnpt;\"\n \t_"
_SETTINGS = settings(max_examples=400, deadline=2000,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@contextmanager
def time_limit(seconds: float):
    """Turn a hang into a test failure (where the platform has SIGALRM)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def on_alarm(signum, frame):
        raise TimeoutError(f"check_source took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def only_compilation_errors(text: str) -> None:
    with time_limit(5.0):
        try:
            check_source(text, "fuzz.ir")
        except CompilationError as err:
            assert err.diagnostics, "a CompilationError must carry diagnostics"
            for d in err.diagnostics:
                assert d.line >= 1 and d.column >= 1, str(d)
                str(d)  # renders without error
                d.to_json()


@st.composite
def mutated_sample(draw) -> str:
    text = draw(st.sampled_from(SAMPLES)).read_text()
    tokens = _TOKEN.findall(text)
    for _ in range(draw(st.integers(1, 4))):
        if not tokens:
            break
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "replace", "insert",
                                     "truncate"]))
        i = draw(st.integers(0, len(tokens) - 1))
        if kind == "delete":
            del tokens[i]
        elif kind == "duplicate":
            tokens.insert(i, tokens[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == "replace":
            tokens[i] = draw(st.sampled_from(tokens))
        elif kind == "insert":
            alphabet = st.one_of(st.sampled_from(_ODD_CHARACTERS), st.characters())
            tokens.insert(i, draw(st.text(alphabet=alphabet, min_size=1, max_size=6)))
        else:
            tokens = tokens[:i]
    return "".join(tokens)


@_SETTINGS
@given(mutated_sample())
def test_mutated_samples_raise_only_compilation_errors(text):
    only_compilation_errors(text)


@settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.one_of(st.sampled_from(_ODD_CHARACTERS), st.characters()),
               max_size=200))
def test_random_text_raises_only_compilation_errors(text):
    only_compilation_errors(text)


@settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(sorted({t for p in SAMPLES for t in _TOKEN.findall(p.read_text())
                                       if not t.isspace()})),
                max_size=60))
def test_token_soup_raises_only_compilation_errors(tokens):
    only_compilation_errors(" ".join(tokens))


@pytest.mark.parametrize("text", [
    "", "func", "func @f", "func @f(", "func @f() {", "}", "{", "%", "@", '"', "0x", "1e",
    "func @f() { %x = constant 0x : f32 }", "func @f() { %x = constant 1e : f32 }",
    "func @f(%a: memref<f32x>) {}", "func @f(%a: memref<x4>) {}", "func @f(%a: group<>) {}",
    "func @f() { %x = subview %y[:] : memref<f32> }", "\x00\x01\x02", "\ufeff func @f() {}",
])
def test_edge_cases(text):
    only_compilation_errors(text)
