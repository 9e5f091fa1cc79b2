"""Sizes for `tinyc run` and `tinyc bench`: every `?` of a kernel's arguments, made to agree.

Each `?` mode of a memref or group argument and each integer scalar argument
is a variable. The program relates variables:
  * a collective's shape rule (`size_rules()`: the columns of op(A) are the
    rows of op(B), ...) equates modes of its operands, traced back through
    views (whole-mode slices, expand and subview sizes, group loads) to the
    arguments;
  * a loop whose upper bound is such a variable (`%n = size %A[0]`, or an
    integer argument) ties the modes its loop variable indexes to the bound;
  * a subview or expand size that is such a variable ties the view's mode.
Related variables form one class (union-find). A class takes the value given
with `--size`, else a static size in the class, else the batch (a mode
indexed by the work-group id), else 16; an integer scalar that nothing
relates gets a small random value. Two `--size` values (or a `--size` and a
static size) that disagree within a class are a usage error that names both
arguments and the instruction relating them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from tinyc.cli.errors import UsageError
from tinyc.ir.core import Function, Value
from tinyc.ir.instructions import (
    WHOLE_MODE, BlasInstruction, Cast, Constant, Expand, For, Foreach, Fuse, Load, Size, Store,
    Subview,
)
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType, ScalarType

DEFAULT_DYNAMIC_SIZE = 16

Var = tuple[str, int]
"""(argument name, mode); mode -1 for an integer scalar argument."""
Dim = Var | int | None
"""A mode's size: a variable, a static size, or unknown."""


def describe(var: Var) -> str:
    name, mode = var
    return f"%{name}" if mode < 0 else f"mode {mode} of %{name}"


@dataclass
class Fixed:
    """A value a class must take, and where it comes from."""

    value: int
    var: Var | None  # the argument that fixes it (None: a static size in the program)
    origin: str  # "--size A=8x?", "static size 8 (gemm at 5.3)", ...
    user: bool


@dataclass
class Classes:
    """Union-find over variables, with the relations that joined them."""

    parent: dict[Var, Var] = field(default_factory=dict)
    fixed: dict[Var, Fixed] = field(default_factory=dict)  # root -> value
    edges: dict[Var, list[tuple[Var, str]]] = field(default_factory=dict)

    def find(self, v: Var) -> Var:
        self.parent.setdefault(v, v)
        while self.parent[v] != v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def union(self, a: Var, b: Var, reason: str) -> None:
        self.edges.setdefault(a, []).append((b, reason))
        self.edges.setdefault(b, []).append((a, reason))
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        self.parent[rb] = ra
        fa, fb = self.fixed.pop(ra, None), self.fixed.pop(rb, None)
        if fa is None or fb is None:
            chosen = fa or fb
        else:  # two static sizes (the program is valid; a loop may not reach the larger)
            chosen = fa if fa.value >= fb.value else fb
        if chosen is not None:
            self.fixed[ra] = chosen

    def why(self, a: Var, b: Var) -> str:
        """The relations on a path from a to b, for messages."""
        seen = {a: None}
        todo = deque([a])
        while todo:
            v = todo.popleft()
            if v == b:
                break
            for w, reason in self.edges.get(v, ()):
                if w not in seen:
                    seen[w] = (v, reason)
                    todo.append(w)
        reasons: list[str] = []
        v = b
        while seen.get(v) is not None:
            v, reason = seen[v]
            if reason not in reasons:
                reasons.append(reason)
        return "; ".join(reversed(reasons))


def _where(inst: Any) -> str:
    span = getattr(inst, "span", None)
    return f"{inst.opname} at {span.line}.{span.column}" if span is not None else inst.opname


class Relations:
    """The classes of one function's size variables (module docs)."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.classes = Classes()
        self.dims: dict[Value, list[Dim]] = {}  # memref values -> their modes
        self.scalar: dict[Value, Dim] = {}  # index-like values -> a size they equal
        self.bound: dict[Value, Dim] = {}  # loop variables -> their upper bound
        self.vars: list[Var] = []
        for arg in fn.args:
            self._argument(arg)
        for inst in fn.walk():
            self._instruction(inst)

    # -- building ----------------------------------------------------------------
    def _argument(self, arg: Value) -> None:
        t = arg.type
        memref = t.memref if isinstance(t, GroupType) else t
        if isinstance(memref, MemrefType):
            dims: list[Dim] = []
            for k, s in enumerate(memref.shape):
                if s == DYNAMIC:
                    var = (arg.name, k)
                    self.classes.find(var)
                    self.vars.append(var)
                    dims.append(var)
                else:
                    dims.append(s)
            self.dims[arg] = dims
        elif isinstance(t, ScalarType) and t.is_int:
            var = (arg.name, -1)
            self.classes.find(var)
            self.vars.append(var)
            self.scalar[arg] = var

    def equate(self, a: Dim, b: Dim, reason: str) -> None:
        """Two sizes the program says are equal."""
        if a is None or b is None or (isinstance(a, int) and isinstance(b, int)):
            return
        if isinstance(a, int):
            a, b = b, a
        if isinstance(b, int):
            root = self.classes.find(a)
            known = self.classes.fixed.get(root)
            if known is None or (not known.user and b > known.value):
                self.classes.fixed[root] = Fixed(b, None, reason, False)
            return
        self.classes.union(a, b, reason)

    def _modes(self, v: Value) -> list[Dim]:
        return self.dims.get(v) or [None] * getattr(v.type, "order", 0)

    def _instruction(self, inst: Any) -> None:
        where = _where(inst)
        if isinstance(inst, Constant) and isinstance(inst.value, int) and not isinstance(inst.value, bool):
            self.scalar[inst.result] = inst.value
        elif isinstance(inst, Cast):
            self.scalar[inst.result] = self.scalar.get(inst.operands[0])
        elif isinstance(inst, Size) and isinstance(inst.operands[0].type, MemrefType):
            modes = self._modes(inst.operands[0])
            self.scalar[inst.result] = modes[inst.mode] if inst.mode < len(modes) else None
        elif isinstance(inst, Subview):
            self._subview(inst)
        elif isinstance(inst, Expand):
            modes = self._modes(inst.tensor)
            dynamic = iter(inst.operands[1:])
            parts = [self.scalar.get(next(dynamic)) if s == DYNAMIC else s for s in inst.static_shape]
            self.dims[inst.result] = modes[:inst.mode] + parts + modes[inst.mode + 1:]
        elif isinstance(inst, Fuse):
            modes = self._modes(inst.operands[0])
            self.dims[inst.result] = modes[:inst.first] + [None] + modes[inst.last + 1:]
        elif isinstance(inst, Load) and isinstance(inst.tensor.type, GroupType):
            self.dims[inst.result] = list(self._modes_of_group(inst.tensor))
        elif isinstance(inst, (Load, Store)) and isinstance(inst.tensor.type, MemrefType):
            modes = self._modes(inst.tensor)
            for k, index in enumerate(inst.indices):
                if k < len(modes) and index in self.bound:
                    self.equate(modes[k], self.bound[index], f"a loop up to it indexes mode {k} "
                                                            f"of %{inst.tensor.name} in {where}")
        elif isinstance(inst, For):
            self.bound[inst.loop_var] = self.scalar.get(inst.upper)
        elif isinstance(inst, Foreach):
            for var, upper in zip(inst.body.args, inst.upper):
                self.bound[var] = self.scalar.get(upper)
        if isinstance(inst, BlasInstruction):
            for rule in inst.size_rules() or ():
                (i, m), (j, n) = rule.left, rule.right
                left, right = self._modes(inst.operands[i]), self._modes(inst.operands[j])
                if m < len(left) and n < len(right):
                    self.equate(left[m], right[n], f"{rule.what} in {where}")

    def _modes_of_group(self, group: Value) -> list[Dim]:
        return self.dims.get(group) or [None] * group.type.memref.order

    def _subview(self, inst: Subview) -> None:
        modes = self._modes(inst.tensor)
        out: list[Dim] = []
        for k, (_, size) in enumerate(inst.mode_slices()):
            if isinstance(size, int) and size == WHOLE_MODE:
                out.append(modes[k] if k < len(modes) else None)
            elif isinstance(size, int):
                if size != 0:  # 0: the mode is dropped
                    out.append(size)
            else:
                out.append(self.scalar.get(size))
        out += inst.extra_shape()[0]  # the newest language's extra trailing modes
        self.dims[inst.result] = out


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

