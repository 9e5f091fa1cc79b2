"""The front half of the pipeline: text → parsed IR → checked IR.

Kept apart from the backend so `tinyc check` never imports dpctl or the
SPIR-V layer.
"""

from __future__ import annotations

from tinyc.ir.core import Program
from tinyc.ir.verifier import verify
from tinyc.parser import parse


def check_source(text: str, name: str = "<string>") -> Program:
    """Parse and verify; raises CompilationError with every independent error."""
    program = parse(text, name)
    verify(program)
    return program
