"""What the language server's tests share: `client`, a real LSP client talking to `tinyc lsp`
over stdio (a fixture: one server per test module that imports it), and the CLI's diagnostics
as the reference. (No conftest.py here: tests/verifier imports its own as `conftest`.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

REPO = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO))
SERVER = [sys.executable, "-m", "tinyc.cli", "lsp"]


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER,
                                                             server_env=ENV))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=pytest_lsp.client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()


def cli_json(text: str) -> list[dict]:
    """`tinyc check --format json -` in its own process: the reference for diagnostics."""
    proc = subprocess.run([sys.executable, "-m", "tinyc.cli", "check", "--format", "json", "-"],
                          input=text.encode(), capture_output=True, env=ENV, cwd=REPO)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def as_dict(r: types.Range) -> dict:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


async def next_diagnostics(client, uri: str, seconds: float = 30.0) -> list[types.Diagnostic]:
    """The next diagnostics published for `uri` (the caller removed the last ones first)."""
    import asyncio

    for _ in range(int(seconds / 0.005)):
        if uri in client.diagnostics:
            return list(client.diagnostics.pop(uri))
        await asyncio.sleep(0.005)
    raise AssertionError(f"no diagnostics published for {uri}")
