"""A one-line progress bar on stderr for tuning (redrawn in place on a terminal)."""

from __future__ import annotations

import sys
from typing import TextIO

WIDTH = 24


class ProgressBar:
    """`tuning gemm_nn [#########---------------]  38% candidate 9/40, best 1.31x`.

    On a terminal the line is redrawn in place; otherwise only the final state
    of each kernel is written, so logs stay readable.
    """

    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool | None = None):
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = self.tty if enabled is None else enabled
        self._last = ""

    def __call__(self, fraction: float, status: str) -> None:
        if not self.enabled:
            return
        fraction = min(max(fraction, 0.0), 1.0)
        filled = int(round(fraction * WIDTH))
        line = f"{self.label} [{'#' * filled}{'-' * (WIDTH - filled)}] {fraction * 100:3.0f}% {status}"
        if self.tty:
            pad = " " * max(0, len(self._last) - len(line))
            self.stream.write("\r" + line + pad)
            if fraction >= 1.0:
                self.stream.write("\n")
        elif fraction >= 1.0:
            self.stream.write(line + "\n")
        self.stream.flush()
        self._last = line
