"""An open document of the language server: its text, its check, its names.

Edits arrive as ranges (incremental sync) and are applied to the text; each
is also logged, so that the names found in an earlier text (the last one
that parsed: "the last good analysis") still answer hover, definition,
references and completion while the text does not parse, or before the
names of the new text are found: offsets are mapped through the edits
made since, both ways. Checking (`FunctionChecker`) re-parses only the
functions that changed; names are found again whenever a check gives a
program, which costs a walk of its IR and no parse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

from tinyc.editor.analysis import Analysis
from tinyc.editor.checking import Checked, FunctionChecker
from tinyc.editor.lookup import PointNames
from tinyc.positions import LineIndex

Edit = tuple[int, int, int]
"""(start, end) replaced in the text before the edit, and the length of what replaced it."""


def to_earlier(edits: list[Edit], offset: int, clamp: bool = False) -> int | None:
    """The offset in the text before `edits` of `offset` after them; None inside new text
    (its start with `clamp`)."""
    for start, end, length in reversed(edits):
        if offset < start:
            continue
        if offset >= start + length:
            offset += (end - start) - length
        elif clamp:
            offset = start
        else:
            return None
    return offset


def to_later(edits: list[Edit], offset: int, clamp: bool = False) -> int | None:
    """The offset after `edits` of `offset` before them; None inside replaced text (the end
    of its replacement with `clamp`)."""
    for start, end, length in edits:
        if offset < start:
            continue
        if offset >= end:  # (text inserted at `offset` moves it too)
            offset += length - (end - start)
        elif clamp:
            offset = start + length
        else:
            return None
    return offset


@dataclass
class Document:
    """One open document (see the module docstring)."""

    uri: str
    text: str
    version: int | None
    name: str = "<string>"
    checked: Checked | None = None
    checked_text: str | None = None
    names: Analysis | None = None          # the last complete names (maybe of an older text)
    edits: list[Edit] = field(default_factory=list)  # every edit since the document opened
    _names_at: int = 0                     # len(edits) when the text of `names` was current
    _checked_at: int = 0                   # ... when `checked_text` was
    _building: Analysis | None = None      # names being found, a slice at a time
    _building_at: int = 0
    _steps: Iterator[None] | None = None
    _checker: FunctionChecker | None = None
    _index: LineIndex | None = None
    _point: PointNames | None = None

    @property
    def index(self) -> LineIndex:
        """Positions in the current text."""
        if self._index is None or self._index.text is not self.text:
            self._index = LineIndex(self.text)
        return self._index

    # ------------------------------------------------------------ changes

    def replace(self, start: int, end: int, new: str) -> None:
        """Replace text[start:end] (offsets into the current text) by `new`."""
        start, end = sorted((min(max(start, 0), len(self.text)), min(max(end, 0), len(self.text))))
        self.text = self.text[:start] + new + self.text[end:]
        self.edits.append((start, end, len(new)))

    def set_text(self, text: str) -> None:
        self.replace(0, len(self.text), text)

    @property
    def stale(self) -> bool:
        """The current text has not been checked."""
        return self.checked_text is not self.text

    def check(self) -> Checked:
        """Check the current text (`start_names` then finds its names)."""
        if self._checker is None:
            self._checker = FunctionChecker(self.name)
        text = self.text
        checked = self._checker.check(text)
        self.checked, self.checked_text, self._checked_at = checked, text, len(self.edits)
        return checked

    # ------------------------------------------------------------ names

    def start_names(self) -> bool:
        """Begin finding the names of the last checked text, if it parsed (else the last ones
        stay); True if there is work for `step_names`. Names half found are finished first
        when there are none to answer with yet (the newest text's follow)."""
        checked, text = self.checked, self.checked_text
        if checked is None or checked.program is None or text is None \
                or (self.names is not None and self.names.text is text) \
                or (self._building is not None and self._building.text is text) \
                or (self._building is not None and self.names is None):
            return self._building is not None
        self._building = Analysis(text, self.name, checked=checked, lazy=True)
        self._building_at, self._steps = self._checked_at, self._building.build()
        return True

    def step_names(self) -> bool:
        """Find some more names; False once they are all found (or nothing is being done)."""
        from tinyc.collector import paused as gc_paused  # the server owns its process

        if self._building is None or self._steps is None:
            return False
        try:
            with gc_paused():  # (thousands of small objects: no collection while making them)
                next(self._steps)
            return True
        except StopIteration:
            self.names, self._names_at = self._building, self._building_at
            self._building = self._steps = None
            return self.start_names()  # a newer text parsed meanwhile: its names next
        except Exception:  # a bug in tinyc: keep the names there were
            self._building = self._steps = None
            raise

    def current_names(self) -> tuple[Analysis | PointNames, Callable, Callable]:
        """The names to answer with, and the maps of offsets to their text and back."""
        if self.names is None:
            if self._building is None and (self.stale or self.checked is None):
                self.check()
                self.start_names()
            looked_up = self._look_up()
            if looked_up is not None:  # the names are still being found: look them up
                return looked_up
        if self.names is None:  # never parsed: recover what parses, or the functions' names
            self.names = Analysis(self.checked_text or "", self.name, checked=self.checked)
            self._names_at = self._checked_at
        return self.names, *self._maps(self._names_at)

    def _look_up(self) -> tuple[PointNames, Callable, Callable] | None:
        """The newest text that parsed, with the names looked up in its IR (lookup.py)."""
        if self.checked is not None and self.checked.program is not None:
            checked, text, at = self.checked, self.checked_text, self._checked_at
        elif self._building is not None:
            checked, text, at = self._building.checked, self._building.text, self._building_at
        else:
            return None
        if self._point is None or self._point.text is not text:
            self._point = PointNames(text, checked.program)
        return self._point, *self._maps(at)

    def _maps(self, at: int) -> tuple[Callable, Callable]:
        """Offsets from the text of `at` edits ago to the current one and back."""
        edits = self.edits[at:]
        if not edits:
            return _same, _same
        return (lambda offset, clamp=False: to_earlier(edits, offset, clamp),
                lambda offset, clamp=False: to_later(edits, offset, clamp))


def _same(offset: int, clamp: bool = False) -> int:
    return offset
