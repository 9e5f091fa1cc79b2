"""The garbage collector paused while a large program is parsed and checked, for code that
owns its process: the command line (`tinyc check`, `compile`, `fmt`) and the language server
(tinyc/editor/checking.py, documents.py). The library (the parser, `check_source`,
`tinyc.compile`) never changes process-wide collector state (issue 21).

Parsing allocates hundreds of thousands of small objects (tokens, tree nodes,
spans, the IR); each young-generation collection would walk them, and a large
IR that survives would be walked three more times after the pause (as
generation 0, then 1, then in a full collection): with the collector running,
checking 40,000 instructions takes about twice as long. So when many objects
are left after a pause, they move straight to the oldest generation
(`gc.freeze()` then `gc.unfreeze()`, two list splices), where the next full
collection finds them. Python's accounting does not see objects moved that
way, so after `PROMOTED_LIMIT` of them a full collection runs instead: in a
long-running server, discarded programs (their IR has cycles) cannot pile up.
Skipped when the host keeps objects frozen itself (gc.freeze before a fork).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

PROMOTE_ABOVE = 100_000
"""Young objects left after a pause above which they skip the young generations."""
PROMOTED_LIMIT = 4_000_000
"""Objects promoted unscanned before a full collection is run instead (a bound on cyclic garbage)."""
_promoted = [0]
_watching = [False]


def _full_collection_seen(phase: str, info: dict) -> None:
    """A full collection (anyone's) has scanned what was promoted: the count starts again."""
    if phase == "stop" and info.get("generation") == 2:
        _promoted[0] = 0


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic garbage collection inside; the survivors then skip the young generations."""
    if not _watching[0]:  # (registered by the first pause: only a process owner pauses)
        gc.callbacks.append(_full_collection_seen)
        _watching[0] = True
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            young = gc.get_count()[0]
            if young > PROMOTE_ABOVE and gc.get_freeze_count() == 0:
                _promoted[0] += young
                if _promoted[0] > PROMOTED_LIMIT:
                    _promoted[0] = 0
                    gc.collect()
                else:
                    gc.freeze()
                    gc.unfreeze()
            gc.enable()
