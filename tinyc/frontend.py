"""The front half of the pipeline: text → parsed IR → checked IR.

Kept apart from the backend so `tinyc check` never imports dpctl or the
SPIR-V layer.
"""

from __future__ import annotations

from typing import Any

from tinyc.ir.core import Program
from tinyc.ir.verifier import verify
from tinyc.parser import parse


def check_source(text: str, name: str = "<string>") -> Program:
    """Parse and verify; raises CompilationError with every independent error."""
    program = parse(text, name)
    verify(program)
    return program


def source_text(source: Any, what: str = "tinyc.compile()") -> str:
    """The source as text: a str as is; bytes, bytearray or memoryview as UTF-8.

    A byte that is not UTF-8 becomes U+FFFD, so one inside a comment is
    harmless and one elsewhere is reported by the lexer at its place.
    Anything else is a TypeError that says what is expected.
    """
    if isinstance(source, str):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source).decode("utf-8", errors="replace")
    raise TypeError(f"{what} expects the source as str or UTF-8 bytes, got "
                    f"{type(source).__name__}")
