"""Latencies of `tinyc lsp` on large files, measured by a client over stdio.

    python -m benchmarks.lsp_latency [--sizes 500,5000,40000] [--rounds 5] [--out FILE]
                                     [--before DIR] [--before-sizes 500,5000]

For each size, two generated files (warning-free, as tinyc's generators
write them): one function of N instructions, and N/50 functions of 50.
A real LSP client (pygls) starts `python -m tinyc.cli lsp` and measures,
each round on a fresh document:

- open: didOpen until its publishDiagnostics;
- edit: an incremental change (one operand renamed to an undefined name, in
  a function in the middle) until the diagnostics of that version arrive
  (they hold the new error);
- completion: a completion request at an instruction's start in the middle;
- hover: a hover on a value's use in the middle.

Medians over the rounds (wall clock; the machine is shared, so compare runs
made together). With --before, the server of another checkout (the one
before this work) is measured right before this one on the same files (for
--before-sizes), each in its own process. Writes lsp_latency.md next to this
file (or --out).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsprotocol import types
from pygls.lsp.client import LanguageClient

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

GROUP = [  # every value is used: the file is warning-free
    "  %x{i} = arith.add %acc{p}, %b : f32",
    "  %y{i} = arith.mul %x{i}, %a : f32",
    "  %v{i} = load %A[%i, %j] : f32",
    "  %w{i} = arith.add %y{i}, %v{i} : f32",
    "  store %w{i}, %A[%j, %i]",
    "  %s{i} = subview %A[%i:4, :] : memref<f32x4x8,strided<1,16>>",
    "  %u{i} = load %s{i}[%i, %j] : f32",
    "  %acc{i} = arith.add %w{i}, %u{i} : f32",
]
HEAD = ["  %i = constant 1 : index", "  %j = constant 2 : index",
        "  %acc0 = constant 0.0 : f32"]


def function(name: str, instructions: int) -> list[str]:
    """One kernel of about `instructions` instructions (groups of len(GROUP))."""
    lines = [f"func @{name}(%a: f32, %b: f32, %A: memref<f32x16x8>) {{", *HEAD]
    groups = max(1, (instructions - len(HEAD) - 1) // len(GROUP))
    for i in range(1, groups + 1):
        lines += [line.format(i=i, p=i - 1) for line in GROUP]
    lines += [f"  store %acc{groups}, %A[%i, %i]", "}"]
    return lines


def one_function(instructions: int) -> str:
    return "\n".join(function("big", instructions)) + "\n"


def many_functions(instructions: int, per: int = 50) -> str:
    lines: list[str] = []
    for k in range(max(1, instructions // per)):
        lines += function(f"k{k}", per)
    return "\n".join(lines) + "\n"


def targets(text: str) -> dict[str, types.Position]:
    """Where the benchmark edits, completes and hovers: the middle of the file."""
    lines = text.split("\n")
    middle = len(lines) // 2
    row = next(n for n in range(middle, len(lines)) if " = arith.mul %x" in lines[n])
    line = lines[row]
    operand = line.index("%a :")
    use = line.index("%x")
    return {"edit": types.Position(row, operand), "edit_end": types.Position(row, operand + 2),
            "complete": types.Position(row + 1, 2), "hover": types.Position(row, use + 1)}


class Client:
    """A pygls client that waits for the diagnostics of a given document version."""

    def __init__(self) -> None:
        self.client = LanguageClient("lsp-latency", "1")
        self.published: dict[str, asyncio.Future] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            waiter = self.published.get(f"{params.uri}@{params.version}")
            if waiter is not None and not waiter.done():
                waiter.set_result(params.diagnostics)

    def expect(self, uri: str, version: int) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self.published[f"{uri}@{version}"] = future
        return future


async def measure(text: str, rounds: int, checkout: Path) -> dict[str, float]:
    c = Client()  # (run from the checkout: `python -m` puts the working directory first)
    await c.client.start_io(sys.executable, "-m", "tinyc.cli", "lsp", cwd=str(checkout),
                            env=dict(os.environ, PYTHONPATH=str(checkout)))
    await c.client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    c.client.initialized(types.InitializedParams())
    at = targets(text)
    times: dict[str, list[float]] = {"open": [], "edit": [], "completion": [], "hover": []}
    for n in range(rounds + 1):  # the first round warms the server up and is not counted
        uri = f"file:///tmp/lsp-latency/doc{n}.ir"
        done = c.expect(uri, 1)
        start = time.perf_counter()
        c.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri, "tinyc", 1, text)))
        await asyncio.wait_for(done, 600)
        opened = time.perf_counter() - start
        done = c.expect(uri, 2)
        start = time.perf_counter()
        c.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangePartial(types.Range(at["edit"], at["edit_end"]),
                                                    "%nope")]))
        diagnostics = await asyncio.wait_for(done, 600)
        edited = time.perf_counter() - start
        assert any("%nope" in d.message for d in diagnostics), diagnostics
        start = time.perf_counter()
        items = await c.client.text_document_completion_async(types.CompletionParams(
            types.TextDocumentIdentifier(uri), at["complete"]))
        completed = time.perf_counter() - start
        assert items and len(items.items) > 100
        start = time.perf_counter()
        shown = await c.client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), at["hover"]))
        hovered = time.perf_counter() - start
        assert shown is not None and ": f32" in shown.contents.value, shown
        c.client.text_document_did_close(types.DidCloseTextDocumentParams(
            types.TextDocumentIdentifier(uri)))
        if n:
            for key, value in zip(times, (opened, edited, completed, hovered)):
                times[key].append(value)
    await c.client.shutdown_async(None)
    c.client.exit(None)
    await c.client.stop()
    return {key: statistics.median(values) for key, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="500,5000,40000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "lsp_latency.md")
    parser.add_argument("--before", type=Path, default=None,
                        help="a checkout whose server to measure too (e.g. main before this work)")
    parser.add_argument("--before-sizes", default="500,5000")
    args = parser.parse_args()
    servers = [("this", REPO)]
    before_sizes = {int(s) for s in args.before_sizes.split(",")}
    if args.before is not None:
        servers.insert(0, ("before", args.before.resolve()))
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        for shape, make in (("one function", one_function), ("functions of 50", many_functions)):
            text = make(size)
            count = sum(1 for line in text.split("\n") if line.startswith("  "))
            for server, checkout in servers:
                if server == "before" and size not in before_sizes:
                    continue
                found = asyncio.run(measure(text, args.rounds, checkout))
                rows.append((count, shape, server, found))
                print(f"{count:>6} {shape:<16} {server:<7}" + "  ".join(
                    f"{k} {v * 1e3:8.1f} ms" for k, v in found.items()), flush=True)
    table = ["| instructions | file | server | open → diagnostics | edit → diagnostics | "
             "completion | hover |", "|---:|---|---|---:|---:|---:|---:|"]
    table += [f"| {n:,} | {shape} | {server} | {r['open']:.3f} s | {r['edit']:.3f} s | "
              f"{r['completion'] * 1e3:.0f} ms | {r['hover'] * 1e3:.0f} ms |"
              for n, shape, server, r in rows]
    args.out.write_text("# Language server latencies\n\n"
                        f"`python -m benchmarks.lsp_latency --rounds {args.rounds}"
                        + (" --before CHECKOUT" if args.before else "") + "` (medians, wall "
                        "clock, a pygls client over stdio; see the script's docstring). "
                        "`before`: the server before the incremental work (main at 19b5d6f), "
                        "measured just before `this` on the same files.\n\n"
                        + "\n".join(table) + "\n")


if __name__ == "__main__":
    main()
