"""The house's layers: no import runs back up a layer, no import cycle, no module over 500 lines.

The folders are the pipeline: diagnostics (source positions, the error type)
and the language versions at the bottom, then the IR, the front ends (parser,
builder), the passes and analyses, SPIR-V, the reference interpreter, the
runtime, tuning and the compiler's driver, and on top the command line, the
editor support and the fuzzer (issue 21 §3). A module may import its own layer
and the layers below, lazily or not; only imports for type annotations (under
`if TYPE_CHECKING:`) may point anywhere. Modules import each other in no cycle
(type-only imports aside), and no hand-written module is longer than 500 lines
(generated tables say "Generated -- do not edit").

What the house does not meet yet is listed in KNOWN_* (issue 21 §3, left for
when the other branches have landed, as the fixes move files); the tests fail
on anything new. Remove an entry when it is fixed.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import tinyc

TINYC = Path(tinyc.__file__).parent
MAX_LINES = 500

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("diagnostics", ("tinyc.diagnostics", "tinyc.positions", "tinyc.std", "tinyc.disk_cache", "tinyc.version")),
    ("ir", ("tinyc.ir", "tinyc.target", "tinyc.lint")),
    ("parser", ("tinyc.parser", "tinyc.builder")),
    ("passes", ("tinyc.analysis", "tinyc.schedule", "tinyc.passes")),
    ("spirv", ("tinyc.spirv", "tinyc.signature", "tinyc.pipeline")),
    ("reference", ("tinyc.reference",)),
    ("runtime", ("tinyc.runtime", "tinyc.opencl_loader")),
    ("tune", ("tinyc.tune", "tinyc.harness", "tinyc.compiler", "tinyc.compile_cache", "tinyc.distributed",
              "tinyc.contractions", "tinyc.recipes")),
    ("cli", ("tinyc.cli", "tinyc.editor", "tinyc.fuzz", "tinyc")),
]
"""Lowest first; a module belongs to the layer of its longest matching prefix."""

KNOWN_UP = {
    "tinyc.contractions.compiled -> tinyc",
    "tinyc.recipes -> tinyc",
}
KNOWN_CYCLES = [
    {"tinyc.ir.checks", "tinyc.ir.instructions.collective", "tinyc.ir.instructions.control",
     "tinyc.ir.instructions.scalar", "tinyc.ir.instructions.spmd", "tinyc.ir.instructions.views"},
    {"tinyc.runtime.arguments", "tinyc.runtime.groups"},
    {"tinyc.contractions.emit", "tinyc.contractions.lanes"},
]
KNOWN_LONG = {"tinyc.builder.function", "tinyc.ir.instructions.collective",
              "tinyc.ir.instructions.scalar", "tinyc.ir.instructions.views", "tinyc.runtime.groups"}


def layer_of(module: str) -> int:
    best, found = -1, None
    for k, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), k
    assert found is not None, f"{module} is in no layer"
    return found


@lru_cache(maxsize=None)
def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(TINYC.rglob("*.py")):
        parts = path.relative_to(TINYC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _target(name: str) -> str | None:
    """The module `name` refers to (a name imported from a module: that module)."""
    known = modules()
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


@lru_cache(maxsize=None)
def imports() -> dict[str, dict[str, bool]]:
    """module -> {imported module: whether only for type annotations}."""
    graph: dict[str, dict[str, bool]] = {}
    for name, path in modules().items():
        tree = ast.parse(path.read_text())
        typing_only = {id(sub) for node in ast.walk(tree) if isinstance(node, ast.If)
                       and getattr(node.test, "id", "") == "TYPE_CHECKING" for sub in ast.walk(node)}
        edges: dict[str, bool] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("tinyc"):
                targets = [_target(f"{node.module}.{alias.name}") for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [_target(alias.name) for alias in node.names if alias.name.startswith("tinyc")]
            else:
                continue
            for target in targets:
                if target and target != name:
                    edges[target] = edges.get(target, True) and id(node) in typing_only
        graph[name] = edges
    return graph


def test_every_module_has_a_layer():
    for name in modules():
        layer_of(name)


def test_no_import_runs_up_a_layer():
    up = [f"{a} -> {b}" for a, edges in imports().items() for b, typing in edges.items()
          if not typing and layer_of(b) > layer_of(a)]
    new = [f"{edge} ({LAYERS[layer_of(edge.split(' -> ')[0])][0]} imports "
           f"{LAYERS[layer_of(edge.split(' -> ')[1])][0]})" for edge in up if edge not in KNOWN_UP]
    assert new == []


def cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (imports at run time)."""
    graph = {a: [b for b, typing in edges.items() if not typing] for a, edges in imports().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    """A known cycle may shrink (a part of it fixed), not grow."""
    new = [c for c in cycles() if not any(set(c) <= known for known in KNOWN_CYCLES)]
    assert new == []


def test_no_hand_written_module_over_500_lines():
    long = []
    for name, path in modules().items():
        text = path.read_text()
        if "Generated -- do not edit" in text[:2000]:
            continue
        lines = text.count("\n")
        if lines > MAX_LINES and name not in KNOWN_LONG:
            long.append(f"{name}: {lines}")
    assert long == []


def test_the_checks_see_what_they_look_for():
    """The graph has the back-edges and cycles listed (the checks can fail)."""
    assert any(layer_of(b) > layer_of(a) for a, edges in imports().items() for b, t in edges.items()
               if not t)
    assert cycles()
