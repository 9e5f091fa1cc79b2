"""Mutants of valid programs, fed to `tinyc.compile`: errors are fine, crashes and hangs are not.

A mutant is a valid source with one random edit at the token or line level:
a token deleted, repeated, swapped, or replaced by a keyword, type, name or
number from a list of edge cases (0, -1, 2^31, 2^63, huge literals, `?`),
a line deleted, repeated or moved, a stray or non-ASCII character, a
truncation, deep nesting. `tinyc.compile` must either succeed or raise
`CompilationError` within the time limit; any other exception is an
internal error and a timeout a hang.
"""

from __future__ import annotations

import random
import re
import signal
import traceback
import warnings
from dataclasses import dataclass
from typing import Callable

_TOKEN = re.compile(r"%[A-Za-z0-9_]+|@[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_.]*|[-+]?[0-9][0-9.eExXpP+-]*|\S")

NUMBERS = ["0", "-1", "1", "2", "3", "16", "255", "256", "65535", "2147483647", "2147483648",
           "-2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
           "18446744073709551616", "99999999999999999999999999", "1.5", "-0.0", "1e308", "1e309",
           "0x1p3", "?", "1.0e-320"]
TYPES = ["i8", "i16", "i32", "i64", "index", "bf16", "f16", "f32", "f64", "c32", "c64", "bool",
         "void", "memref<f32x?>", "memref<f32x4x4>", "memref<i8x0>", "memref<f32x?x?,strided<1,?>>",
         "memref<f32x4,local>", "group<memref<f32x4>x?>", "group<memref<f32x?>x2, offset: ?>",
         "coopmatrix<f32x8x8,matrix_acc>", "coopmatrix<f16x16x8,matrix_a>"]
WORDS = ["gemm.n.n", "gemm.t.t.atomic", "gemv.t", "ger", "axpby.n", "sum.t", "cumsum", "hadamard_product",
         "load", "store", "store.atomic_add", "subview", "expand", "fuse", "size", "alloca", "for",
         "if", "else", "yield", "foreach", "parallel", "barrier", "constant", "cast", "arith.add",
         "arith.div", "arith.shl", "arith.not", "cmp.lt", "math.exp", "builtin.group_id",
         "builtin.subgroup_local_id", "subgroup_add.reduce", "subgroup_broadcast",
         "cooperative_matrix_load.t.rows_checked", "cooperative_matrix_mul_add",
         "cooperative_matrix_store", "lifetime_stop", "func", "attributes", "init", "true", "false",
         "local", "global", "strided", "offset", "->", ":", ",", "=", "{", "}", "(", ")", "[", "]",
         "<", ">", "x", "%", "@", '"', ";", ".n", ".t", ".atomic"]
CHARACTERS = ["\x00", "\t", "\r", "\u00e9", "\u2013", "\ufffd", "\ufeff", "\x7f", "\\", "#", "$", "`"]


class CompileTimeout(BaseException):
    """The compiler ran past the time limit (a BaseException: no `except Exception` hides it)."""


@dataclass
class MutantOutcome:
    status: str  # "compiled", "rejected", "internal", "hang"
    text: str
    detail: str = ""


def _tokens(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text)]


def mutate(text: str, rng: random.Random) -> str:
    """One random edit of `text`."""
    return rng.choice(_MUTATIONS)(text, rng)


def _replace_token(text: str, rng: random.Random, pool: list[str] | None = None) -> str:
    spans = _tokens(text)
    if not spans:
        return text
    a, b = rng.choice(spans)
    if pool is None:
        pool = rng.choice((NUMBERS, TYPES, WORDS, [text[x:y] for x, y in rng.sample(spans, min(5, len(spans)))]))
    return text[:a] + rng.choice(pool) + text[b:]


def _numbers(text: str, rng: random.Random) -> str:
    found = list(re.finditer(r"(?<![%@A-Za-z_0-9])[-+]?[0-9][0-9.eE]*|\?", text))
    if not found:
        return _replace_token(text, rng, NUMBERS)
    m = rng.choice(found)
    return text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]


def _names(text: str, rng: random.Random) -> str:
    found = list(re.finditer(r"%[A-Za-z0-9_]+", text))
    if len(found) < 2:
        return _replace_token(text, rng)
    m, other = rng.sample(found, 2)
    return text[:m.start()] + other.group() + text[m.end():]


def _delete_token(text: str, rng: random.Random) -> str:
    spans = _tokens(text)
    if not spans:
        return text
    a, b = rng.choice(spans)
    return text[:a] + text[b:]


def _repeat_token(text: str, rng: random.Random) -> str:
    spans = _tokens(text)
    if not spans:
        return text
    a, b = rng.choice(spans)
    return text[:b] + " " + text[a:b] + text[b:]


def _swap_tokens(text: str, rng: random.Random) -> str:
    spans = _tokens(text)
    if len(spans) < 2:
        return text
    i = rng.randrange(len(spans) - 1)
    (a, b), (c, d) = spans[i], spans[i + 1]
    return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]


def _lines(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    if len(lines) < 3:
        return text
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    kind = rng.randrange(3)
    if kind == 0:
        del lines[i]
    elif kind == 1:
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _character(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(CHARACTERS) + text[at:]


def _truncate(text: str, rng: random.Random) -> str:
    return text[:rng.randrange(len(text) + 1)]


def _nest(text: str, rng: random.Random) -> str:
    """Wrap a line in many nested regions (parallel and if), deeper than the limit sometimes."""
    lines = text.split("\n")
    if len(lines) < 3:
        return text
    depth = rng.choice((3, 20, 70, 200))
    i = rng.randrange(1, len(lines) - 1)
    opener = rng.choice(("parallel {", "if %b {", "for %i = %a, %b {"))
    lines[i:i + 1] = [opener] * depth + [lines[i]] + ["}"] * depth
    return "\n".join(lines)


_MUTATIONS: list[Callable[[str, random.Random], str]] = [
    _replace_token, _replace_token, _numbers, _numbers, _names, _delete_token, _repeat_token,
    _swap_tokens, _lines, _lines, _character, _truncate, _nest,
]


def _alarm(signum, frame) -> None:
    raise CompileTimeout()


def check_mutant(text: str, time_limit: float = 20.0) -> MutantOutcome:
    """Compile `text`; classify what happened (a SIGALRM timer catches hangs)."""
    import tinyc

    use_timer = hasattr(signal, "setitimer")
    if use_timer:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, time_limit)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tinyc.compile(text, name="<mutant>", warnings="none")
        return MutantOutcome("compiled", text)
    except CompileTimeout:
        return MutantOutcome("hang", text, f"compiling took more than {time_limit:.0f} s")
    except tinyc.CompilationError:
        return MutantOutcome("rejected", text)
    except Exception as err:  # a crash of the compiler on bad input
        detail = f"{type(err).__name__}: {err}\n" + "".join(traceback.format_exception(err)[-6:])
        return MutantOutcome("internal", text, detail)
    finally:
        if use_timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
