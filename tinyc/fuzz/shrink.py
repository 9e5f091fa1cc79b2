"""Shrink a failing kernel: delete instructions (and whole regions) while it still fails.

The generator writes one instruction per line and opens a region at the end
of a line (`... {`) that a line `}` (or `} else {`) at the same indentation
closes, so deleting a line, or a region from its opening line to its
closing `}`, keeps the text well nested. Every deletion is kept if the
kernel still fails the same way (the predicate), else undone; passes repeat
until nothing more can go (C-Reduce's greedy loop, on lines).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from tinyc.fuzz.program import Kernel


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line ranges to try deleting: single lines and whole regions."""
    spans: list[tuple[int, int]] = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.endswith("{") and not stripped.startswith("}"):
            indent = len(line) - len(line.lstrip())
            for j in range(i + 1, len(lines)):
                other = lines[j]
                if len(other) - len(other.lstrip()) == indent and other.strip().startswith("}") \
                        and not other.strip().startswith("} else"):
                    spans.append((i, j))
                    break
        elif "{" not in stripped and "}" not in stripped:
            spans.append((i, i))
    return spans


def shrink(kernel: Kernel, still_fails: Callable[[Kernel], bool], max_tries: int = 400) -> Kernel:
    """The smallest kernel found by deleting lines of `kernel` while `still_fails` holds."""
    lines = kernel.text.rstrip("\n").split("\n")
    head, body, tail = lines[:1], lines[1:-1], lines[-1:]
    tries = 0
    changed = True
    while changed and tries < max_tries:
        changed = False
        for first, last in sorted(_blocks(body), key=lambda s: (s[1] - s[0], s[0]), reverse=True):
            if last >= len(body):
                continue
            candidate = body[:first] + body[last + 1:]
            tries += 1
            trial = replace(kernel, text="\n".join(head + candidate + tail) + "\n")
            if still_fails(trial):
                body = candidate
                changed = True
                break
            if tries >= max_tries:
                break
    return replace(kernel, text="\n".join(head + body + tail) + "\n")
