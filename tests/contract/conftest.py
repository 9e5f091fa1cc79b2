"""Generated kernels must check clean: a warning the compiler gives on a kernel that
einsum, contract or a recipe wrote is the generator's defect, shown to a user who wrote
none of it. Every test here turns such a warning into a failure."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/contract/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.filterwarnings("error::tinyc.compiler.CompilationWarning"))
