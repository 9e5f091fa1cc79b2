"""The language server's tests: `client`, a real LSP client talking to `tinyc lsp` over stdio
(one server per test module)."""

from __future__ import annotations

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_testlib import ENV, SERVER


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=SERVER,
                                                             server_env=ENV))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=pytest_lsp.client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()
