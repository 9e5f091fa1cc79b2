"""Ctrl-C during `tinyc run` and `tinyc bench`: stop within a fraction of a second.

A launch blocks in the runtime's wait (a C call that holds on until the
kernel is done), so Python would only see the interrupt after the kernel
ends, and the JIT build blocks the same way. The command's work therefore
runs in a worker thread while the main thread, which receives SIGINT, waits
for it in short, interruptible joins. On Ctrl-C the process exits at once
with status 130 (128 + SIGINT, as shells report it) and one line on stderr:
no traceback, and no waiting for the kernel or for the device queue's
destructor at interpreter shutdown.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Callable

EXIT_INTERRUPTED = 130
POLL_SECONDS = 0.1


def interruptible(action: Callable[[], None]) -> None:
    """Run `action` in a worker thread; re-raise what it raised; exit 130 on Ctrl-C."""
    failure: list[BaseException] = []

    def work() -> None:
        try:
            action()
        except BaseException as exc:  # handed to the main thread
            failure.append(exc)

    worker = threading.Thread(target=work, name="tinyc-launch", daemon=True)
    try:
        worker.start()
        while worker.is_alive():
            worker.join(POLL_SECONDS)
    except KeyboardInterrupt:
        _exit_interrupted()
    if failure:
        raise failure[0].with_traceback(None)


def _exit_interrupted() -> None:
    try:
        sys.stdout.flush()
    except Exception:
        pass
    try:
        sys.stderr.write("tinyc: interrupted\n")
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(EXIT_INTERRUPTED)
