"""The test suite itself: it runs the same on any machine, without configuration warnings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_collecting_the_async_tests_warns_nothing():
    """pytest-asyncio warns (PytestDeprecationWarning) when its fixture loop scope is not
    configured; pyproject.toml sets it. Warnings are errors here, so any configuration
    warning of pytest or a plugin fails the collection."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-W", "error", "tests/editor/test_lsp.py"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Warning" not in done.stdout + done.stderr
