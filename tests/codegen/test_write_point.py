"""Codegen has one write point (tinyc/spirv/codegen/writes.py): no other emitter writes memory.

LLVM's sanitizers instrument loads and stores at one place so that none escapes them; the
dry run of a bounds-checked kernel relies on the same: it leaves out every global write in
`writes.write`, so no other module may emit a store, a vector store or an atomic that
writes. (tests/runtime/test_bounds_writes.py checks the resulting SPIR-V of each kind.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import tinyc.spirv.codegen as codegen

CODEGEN = Path(codegen.__file__).parent
WRITING_OPS = {"Store", "AtomicStore", "AtomicExchange", "AtomicCompareExchange", "AtomicIAdd",
               "AtomicISub", "AtomicSMin", "AtomicUMin", "AtomicSMax", "AtomicUMax", "AtomicAnd",
               "AtomicOr", "AtomicXor", "AtomicFAddEXT", "AtomicFMinEXT", "AtomicFMaxEXT",
               "AtomicIIncrement", "AtomicIDecrement", "AtomicFlagTestAndSet", "AtomicFlagClear"}
WRITING_EXTENSIONS = {"vstoren", "vstore_half", "vstore_halfn", "vstorea_halfn", "vstore_half_r",
                      "vstore_halfn_r", "vstorea_halfn_r"}
ALLOWED = {
    "writes.py": "the write point",
    "atomics.py": "the atomic primitives, called by writes.write only",
    "bounds.py": "the report buffer's recorder, not the kernel's memory",
}


def attributes(path: Path) -> list[tuple[str, str, int]]:
    """(object, attribute, line) of every `x.attr` in a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found.append((node.value.id, node.attr, node.lineno))
    return found


def test_only_the_write_point_emits_writes():
    offenders = []
    for path in sorted(CODEGEN.glob("*.py")):
        if path.name in ALLOWED:
            continue
        for obj, attr, line in attributes(path):
            if (obj == "Op" and attr in WRITING_OPS) or (obj == "OpenCLStd" and attr in WRITING_EXTENSIONS):
                offenders.append(f"{path.name}:{line}: {obj}.{attr}")
    assert offenders == []


def test_the_atomic_writes_are_called_by_the_write_point_only():
    offenders = []
    for path in sorted(CODEGEN.glob("*.py")):
        if path.name in ("writes.py", "atomics.py"):
            continue
        for obj, attr, line in attributes(path):
            if attr in ("atomic_store", "atomic_update", "_cas_narrow"):
                offenders.append(f"{path.name}:{line}: {obj}.{attr}")
        text = path.read_text()
        assert "import atomic_store" not in text and "import atomic_update" not in text
    assert offenders == []


def test_the_dry_run_is_decided_at_the_write_point_only():
    readers = sorted({path.name for path in CODEGEN.glob("*.py")
                      for _, attr, _ in attributes(path) if attr == "dry"}
                     | {path.name for path in CODEGEN.glob("*.py") if ".dry" in path.read_text()})
    assert readers == ["bounds.py", "kernel.py", "writes.py"]  # defined, set, read
    assert "bounds.dry" in (CODEGEN / "writes.py").read_text()
