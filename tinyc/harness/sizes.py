"""Sizes for `tinyc run` and `tinyc bench`: every `?` of a kernel's arguments, made to agree.

The program's relations between sizes come from tinyc/analysis/sizes.py. A
class takes the value given with `--size`, else a static size in the class,
else the batch (a mode indexed by the work-group id), else 16; an integer
scalar that nothing relates gets a small random value. Two `--size` values
(or a `--size` and a static size) that disagree within a class are a usage
error that names both arguments and the instruction relating them.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinyc.analysis.sizes import Classes, Fixed, Relations, Var, describe
from tinyc.diagnostics import UsageError
from tinyc.ir.core import Function
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType, ScalarType

DEFAULT_DYNAMIC_SIZE = 16


@dataclass
class Chosen:
    """The sizes and scalar values `tinyc run` uses."""

    shapes: dict[str, tuple[int, ...]]  # memref/group argument -> (member) shape
    scalars: dict[str, int]  # integer scalar arguments that a class fixed or relates


def _parse_dims(name: str, text: str, order: int) -> list[str]:
    dims = text.split("x")
    if len(dims) != order:
        raise UsageError(f"--size {name}={text}: %{name} has {order} mode{'s' if order != 1 else ''}, "
                         f"got {len(dims)}")
    return dims


def _positive(name: str, text: str, piece: str) -> int:
    if not piece.isdigit() or int(piece) < 1:
        raise UsageError(f"--size {name}={text}: '{piece}' is not a positive size")
    return int(piece)


def choose_sizes(fn: Function, batch: int, sizes: dict[str, str], batch_modes: dict[str, int],
                 extents: dict[tuple[str, int], int] | None = None) -> Chosen:
    """Every `?` size (and related integer scalar) of `fn`'s arguments; UsageError for a bad --size.

    `extents`: sizes the batch makes modes reach ((argument, mode) -> size, from the launch
    conditions: a mode indexed by 4 * group_id + i needs 4 * batch), unless --size says otherwise."""
    rel = Relations(fn)
    classes = rel.classes
    by_name = {a.name: a for a in fn.args}
    for name, text in sizes.items():
        arg = by_name[name]
        t = arg.type
        if isinstance(t, ScalarType):
            if t.is_int:
                _fix(classes, (name, -1), _scalar_int(name, text, t), f"--size {name}={text}")
            continue
        if not isinstance(t, (MemrefType, GroupType)):
            continue  # a bool: make_arguments reads it
        memref = t.memref if isinstance(t, GroupType) else t
        for k, (static, piece) in enumerate(zip(memref.shape, _parse_dims(name, text, memref.order))):
            if piece in ("?", ""):
                continue
            value = _positive(name, text, piece)
            if static != DYNAMIC:
                if value != static:
                    raise UsageError(f"--size {name}={text}: mode {k} of %{name} is static ({static} in "
                                     f"{memref}); write {static} or '?' there")
                continue
            _fix(classes, (name, k), value, f"--size {name}={text}")
    for name, mode in batch_modes.items():
        var = (name, mode)
        if var in classes.parent:
            root = classes.find(var)
            known = classes.fixed.get(root)
            if known is None or (not known.user and known.var is not None):
                classes.fixed[root] = Fixed(batch, var, f"the batch ({describe(var)} is indexed "
                                                        f"by the work-group id)", False)
    for var, size in (extents or {}).items():
        if var in classes.parent:
            root = classes.find(var)
            known = classes.fixed.get(root)
            if known is None or (not known.user and known.var is not None and known.value < size):
                classes.fixed[root] = Fixed(size, var, f"the entries the batch reaches in {describe(var)}", False)
    shapes: dict[str, tuple[int, ...]] = {}
    scalars: dict[str, int] = {}
    for var in rel.vars:
        root = classes.find(var)
        known = classes.fixed.get(root)
        related = any(classes.find(v) == root and v[1] >= 0 for v in rel.vars)
        if var[1] < 0:
            if known is not None:
                scalars[var[0]] = known.value
            elif related:
                scalars[var[0]] = DEFAULT_DYNAMIC_SIZE
    for arg in fn.args:
        t = arg.type
        memref = t.memref if isinstance(t, GroupType) else t
        if not isinstance(memref, MemrefType):
            continue
        shape = []
        for k, s in enumerate(memref.shape):
            if s != DYNAMIC:
                shape.append(s)
                continue
            known = classes.fixed.get(classes.find((arg.name, k)))
            shape.append(known.value if known is not None else DEFAULT_DYNAMIC_SIZE)
        shapes[arg.name] = tuple(shape)
    return Chosen(shapes, scalars)


def _scalar_int(name: str, text: str, t: ScalarType) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--size {name}={text}: %{name} is {t}, so the value must be an integer") from None
    bits = 64 if t.name == "index" else t.bits
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not low <= value <= high:
        raise UsageError(f"--size {name}={text}: {value} is out of range for {t} ({low}..{high})")
    return value


def _fix(classes: Classes, var: Var, value: int, origin: str) -> None:
    """A --size value for a variable; a usage error if its class already holds another."""
    root = classes.find(var)
    known = classes.fixed.get(root)
    if known is not None and known.value != value and known.var is None:
        raise UsageError(f"{origin}: {describe(var)} must be {known.value}, a static size the "
                         f"program relates it to ({known.origin})")
    if known is not None and known.value != value and known.user:
        raise UsageError(f"{origin}: {describe(var)} must equal {describe(known.var)}, which "
                         f"{known.origin} makes {known.value} (related by: "
                         f"{classes.why(var, known.var)})")
    classes.fixed[root] = Fixed(value, var, origin, True)

