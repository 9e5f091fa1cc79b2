"""Statements checked against the shapes: tensors, temporaries, label sizes, the batch.

    shapes={"K": (3, 56, 56), "Q": (56, 9, None), ...}     None: the batch mode

Names in `shapes` are the kernel's tensor arguments; a name a statement
assigns that is not in `shapes` is a *temporary* (it lives in the kernel,
per work-group; its shape comes from its statement's labels); any other
name without brackets is a scalar argument. The batch mode of every
statement is one label (the one at the None modes); it runs over
work-groups, so no statement may sum over it, and a tensor without a batch
mode may not be written while the kernel runs a batch (every work-group
would write it).

Every error names the statement and points at the label or tensor at fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from tinyc.contractions.statements import Access, Statement, StatementError, StatementTypeError

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
BATCH = None
"""The size of a batch mode in a shape (the number of work-groups, known at the call)."""


@dataclass
class TensorInfo:
    """A tensor of the kernel: an argument (its shape from `shapes`) or a temporary."""

    name: str
    shape: tuple[int | None, ...]
    argument: bool
    read: bool = False
    written: bool = False
    assigned_in: int = 0  # a temporary: the statement that first assigns it

    @property
    def batch_mode(self) -> int | None:
        return self.shape.index(BATCH) if BATCH in self.shape else None


@dataclass
class StatementInfo:
    """A checked statement: the size of each label and its batch label (if any)."""

    statement: Statement
    sizes: dict[str, int]
    batch: str | None
    reads_target: bool = False   # the target appears on the right-hand side
    live: bool = True            # false: it assigns a temporary no later statement reads


@dataclass
class Checked:
    """All statements checked together (what the kernel is made from)."""

    statements: list[StatementInfo]
    tensors: dict[str, TensorInfo]
    scalars: list[str]
    arguments: list[str] = field(default_factory=list)   # tensor arguments, in `shapes` order

    @property
    def batched(self) -> bool:
        """Does the kernel run over a batch (some argument has a None mode)?"""
        return any(t.batch_mode is not None for t in self.tensors.values() if t.argument)

    @property
    def temporaries(self) -> list[str]:
        return [name for name, t in self.tensors.items() if not t.argument]

    @property
    def outputs(self) -> list[str]:
        return [name for name in self.arguments if self.tensors[name].written]


def check_shapes(shapes: Any) -> dict[str, tuple[int | None, ...]]:
    """`shapes=` as a dict of name -> tuple of positive sizes, None at most once (the batch)."""
    if not isinstance(shapes, dict):
        raise TypeError(f"shapes= must be a dict of tensor name -> shape, got {type(shapes).__name__}")
    out = {}
    for name, shape in shapes.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"shapes=: {name!r} is not a tensor name (a letter, then letters, digits or _)")
        if not isinstance(shape, (tuple, list)):
            raise TypeError(f"shapes=: the shape of {name} must be a tuple of sizes (None for the batch "
                            f"mode), got {type(shape).__name__}")
        sizes = []
        for n in shape:
            if n is None:
                sizes.append(BATCH)
                continue
            if isinstance(n, bool) or not isinstance(n, int) and not hasattr(n, "__index__"):
                raise TypeError(f"shapes=: the shape of {name} holds {n!r}; sizes are ints (None: the batch)")
            if int(n) < 1:
                raise ValueError(f"shapes=: the shape of {name} holds {int(n)}; sizes must be at least 1")
            sizes.append(int(n))
        if sizes.count(BATCH) > 1:
            raise ValueError(f"shapes=: {name} has {sizes.count(BATCH)} None modes; a tensor has at most one "
                             f"batch mode")
        out[name] = tuple(sizes)
    return out


def check(statements: Sequence[Statement], shapes: dict[str, tuple[int | None, ...]]) -> Checked:
    """Check every statement in order against the shapes and the temporaries before it."""
    assigned_later = {s.target.name: s.number for s in statements}
    tensors = {name: TensorInfo(name, shape, True) for name, shape in shapes.items()}
    scalars: list[str] = []
    infos = []
    for s in statements:
        _check_names(s, tensors, scalars, assigned_later)
        info = _check_statement(s, tensors)
        target = tensors.get(s.target.name)
        if target is None:  # a new temporary: its shape from the labels
            target = TensorInfo(s.target.name, tuple(BATCH if label == info.batch else info.sizes[label]
                                                     for label in s.target.labels), False, assigned_in=s.number)
            tensors[s.target.name] = target
        target.written = True
        for term in s.terms:
            for access in term.tensors:
                tensors[access.name].read = True
        infos.append(info)
    for name, t in tensors.items():
        if t.argument and not (t.read or t.written):
            raise ValueError(f"shapes=: no statement uses {name}")
    _mark_dead(infos, tensors)
    if infos and not any(info.live for info in infos):
        s = infos[-1].statement
        names = sorted({i.statement.target.name for i in infos})
        kind = "is a temporary" if len(names) == 1 else "are temporaries"
        raise s.error(f"no statement writes an argument: {', '.join(names)} {kind} (not in shapes=), so "
                      f"the kernel would compute nothing; give {s.target.name}'s shape in shapes= to make "
                      f"it an output", s.target.span)
    checked = Checked(infos, tensors, scalars, list(shapes))
    if checked.batched:
        for info in infos:
            target = tensors[info.statement.target.name]
            if target.argument and target.batch_mode is None:
                s = info.statement
                raise s.error(f"{target.name} has no batch mode (None in shapes=), so every work-group of "
                              f"the batch would write it; only batched tensors and temporaries are written",
                              s.target.span)
    return checked


def _mark_dead(infos: list[StatementInfo], tensors: dict[str, TensorInfo]) -> None:
    """Statements whose temporary no later live statement reads have no effect: not live
    (the kernel leaves them out). Backwards: a read makes the temporary needed up to the
    statement that assigns it with `=`."""
    needed: set[str] = set()
    for info in reversed(infos):
        s = info.statement
        target = s.target.name
        info.live = tensors[target].argument or target in needed
        if not info.live:
            continue
        if not s.accumulate:
            needed.discard(target)
        needed.update(a.name for term in s.terms for a in term.tensors)
        if s.accumulate:
            needed.add(target)


def _check_names(s: Statement, tensors: dict[str, TensorInfo], scalars: list[str],
                 assigned_later: dict[str, int]) -> None:
    """Tensors known, temporaries assigned before they are read, scalars not tensors."""
    for term in s.terms:
        for access in term.tensors:
            if access.name in tensors:
                continue
            if access.name in scalars:
                raise s.error(f"{access.name} is a scalar (used without brackets elsewhere), not a tensor",
                              access.span, StatementTypeError)
            later = assigned_later.get(access.name)
            if later is not None and later >= s.number:
                raise s.error(f"{access.name} is read before statement {later} assigns it (a temporary "
                              f"must be assigned first)", access.span)
            raise s.error(f"{access.name} has no shape: give it in shapes= (or assign it in an earlier "
                          f"statement)", access.span)
        for scalar in term.scalars:
            if scalar.name in tensors or scalar.name in assigned_later:
                raise s.error(f"{scalar.name} is a tensor; write it with its labels, {scalar.name}[...]",
                              scalar.span, StatementTypeError)
            if scalar.name not in scalars:
                scalars.append(scalar.name)
    name = s.target.name   # (a scalar of that name was refused above: every target is a tensor)
    if name not in tensors and s.accumulate:
        raise s.error(f"{name} is accumulated into before any statement assigns it (a temporary starts "
                      f"with '='; an argument needs a shape in shapes=)", s.target.span)


def _check_statement(s: Statement, tensors: dict[str, TensorInfo]) -> StatementInfo:
    sizes: dict[str, int] = {}
    where: dict[str, tuple[Access, int]] = {}     # the first access that sized a label
    batch: list[tuple[str, Access, int]] = []     # labels at batch modes

    def bind(access: Access, shape: tuple[int | None, ...]) -> None:
        if len(access.labels) != len(shape):
            raise s.error(f"{access.name} has {len(shape)} modes (shape {_shape_text(shape)}) but "
                          f"{access} names {len(access.labels)}", access.span)
        for mode, (label, n) in enumerate(zip(access.labels, shape)):
            if n is BATCH:
                batch.append((label, access, mode))
                continue
            if label in sizes and sizes[label] != n:
                first, first_mode = where[label]
                raise s.error(f"label '{label}' is {sizes[label]} in {first.name} (mode {first_mode}) but {n} "
                              f"in {access.name} (mode {mode})", access.label_spans[mode])
            sizes.setdefault(label, n)
            where.setdefault(label, (access, mode))

    for term in s.terms:
        for access in term.tensors:
            bind(access, tensors[access.name].shape)
    target = tensors.get(s.target.name)
    if target is not None:
        bind(s.target, target.shape)
    batch_label = _batch_label(s, batch, sizes, where)
    for mode, label in enumerate(s.target.labels):
        if label not in sizes and label != batch_label:
            raise s.error(f"label '{label}' of {s.target.name} appears in no term, so its size is unknown",
                          s.target.label_spans[mode])
    if batch_label is not None and batch_label not in s.target.labels:
        raise s.error(f"label '{batch_label}' is the batch mode (None in shapes=) and would be summed; the "
                      f"batch runs over work-groups, so the target must keep it",
                      s.target.span)
    reads = any(a.name == s.target.name for term in s.terms for a in term.tensors)
    return StatementInfo(s, sizes, batch_label, reads)


def _batch_label(s: Statement, batch: list[tuple[str, Access, int]], sizes: dict[str, int],
                 where: dict[str, tuple[Access, int]]) -> str | None:
    """The one label at the batch modes of this statement (None if no tensor has one)."""
    if not batch:
        return None
    label, first, first_mode = batch[0]
    for other, access, mode in batch[1:]:
        if other != label:
            raise s.error(f"the batch modes (None in shapes=) of {first.name} and {access.name} have the "
                          f"labels '{label}' and '{other}'; a statement has one batch label",
                          access.label_spans[mode])
    if label in sizes:
        access, mode = where[label]
        raise s.error(f"label '{label}' is the batch mode of {first.name} but mode {mode} of {access.name} "
                      f"(size {sizes[label]})", access.label_spans[mode])
    return label


def _shape_text(shape: tuple[int | None, ...]) -> str:
    inner = ", ".join("None" if n is BATCH else str(n) for n in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"
