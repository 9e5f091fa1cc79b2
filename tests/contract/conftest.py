"""Generated kernels must check clean: a warning the compiler gives on a kernel that
einsum, contract or a recipe wrote is the generator's defect, shown to a user who wrote
none of it. Every test here turns such a warning into a failure."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.resolve().parents:  # (the hook sees every test of the session)
            item.add_marker(pytest.mark.filterwarnings("error::tinyc.compiler.CompilationWarning"))
