"""The house's layers: no import runs back up a layer, no import cycle, no module over 500 lines.

The folders are the pipeline: diagnostics (source positions, the error type)
and the language versions at the bottom, then the IR, the front ends (parser,
builder), the passes and analyses, SPIR-V, the reference interpreter, the
runtime, tuning, the compiler's driver and the run/bench/tune harness, and on
top the command line, the editor support and the fuzzer (issue 21 §3). A module may import its own layer
and the layers below, lazily or not; only imports for type annotations (under
`if TYPE_CHECKING:`) may point anywhere. Modules import each other in no cycle
(type-only imports aside), and no hand-written module is longer than 500 lines
(generated tables say "Generated -- do not edit").

The house meets all three (issue 21 §3): there is no list of exceptions, so the
tests fail on the first new back-edge, cycle or long module.
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


def imports_of(name: str, text: str) -> dict[str, bool]:
    """The tinyc modules the module `name` (source `text`) imports, lazily or not:
    {imported module: whether only for type annotations}."""
    tree = ast.parse(text)
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
    return edges


@lru_cache(maxsize=None)
def imports() -> dict[str, dict[str, bool]]:
    """module -> {imported module: whether only for type annotations}, for every tinyc module."""
    return {name: imports_of(name, path.read_text()) for name, path in modules().items()}


def test_every_module_has_a_layer():
    for name in modules():
        layer_of(name)


def up_edges(graph: dict[str, dict[str, bool]]) -> list[str]:
    """Imports at run time from a lower layer to a higher one ("A -> B (layer imports layer)")."""
    return [f"{a} -> {b} ({LAYERS[layer_of(a)][0]} imports {LAYERS[layer_of(b)][0]})"
            for a, edges in sorted(graph.items()) for b, typing in sorted(edges.items())
            if not typing and layer_of(b) > layer_of(a)]


def test_no_import_runs_up_a_layer():
    assert up_edges(imports()) == []


def cycles(imported: dict[str, dict[str, bool]] | None = None) -> list[list[str]]:
    """Strongly connected components of more than one module (imports at run time)."""
    imported = imports() if imported is None else imported
    graph = {a: [b for b, typing in edges.items() if not typing] for a, edges in imported.items()}
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
    assert cycles() == []


def test_no_hand_written_module_over_500_lines():
    long = []
    for name, path in modules().items():
        text = path.read_text()
        if "Generated -- do not edit" in text[:2000]:
            continue
        lines = text.count("\n")
        if lines > MAX_LINES:
            long.append(f"{name}: {lines}")
    assert long == []


def test_the_checks_see_what_they_look_for():
    """Made-up module texts: a lazy import up a layer and a cycle are found, an import for
    type annotations alone is not (the checks can fail)."""
    graph = {
        "tinyc.ir.core": imports_of("tinyc.ir.core", "def f():\n    from tinyc.cli.run import run_kernel\n"),
        "tinyc.ir.types": imports_of("tinyc.ir.types", "from typing import TYPE_CHECKING\n"
                                     "if TYPE_CHECKING:\n    from tinyc.runtime.kernel import Kernel\n"),
        "tinyc.cli.run": imports_of("tinyc.cli.run", "import tinyc.cli.common\n"),
        "tinyc.cli.common": imports_of("tinyc.cli.common", "from tinyc.cli import run\n"),
    }
    assert graph["tinyc.ir.types"] == {"tinyc.runtime.kernel": True}
    assert up_edges(graph) == ["tinyc.ir.core -> tinyc.cli.run (ir imports cli)"]
    assert cycles(graph) == [["tinyc.cli.common", "tinyc.cli.run"]]
    assert imports()["tinyc.cli.run"]["tinyc.harness.arguments"] is False  # the real graph is read
