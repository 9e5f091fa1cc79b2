"""Every sample lowers, re-verifies and prints back to text that parses to the same IR."""

from __future__ import annotations

from pathlib import Path

import pytest
from lowering_testlib import lower

SAMPLES = sorted((Path(__file__).resolve().parents[3] / "samples").glob("*.ir"))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_lowers_verifies_and_reprints(path: Path) -> None:
    lower(path.read_text())


def test_there_are_samples() -> None:
    assert len(SAMPLES) >= 10
