"""Which `?` sizes of a kernel's arguments the program relates: classes of equal sizes.

Each `?` mode of a memref or group argument and each integer scalar argument
is a variable. The program relates variables:
  * a collective's shape rule (the columns of op(A) are the rows of op(B),
    ...) equates modes of its operands, traced back through views (whole-mode
    slices, expand and subview sizes, group members) to the arguments;
  * a loop whose upper bound is such a variable (`%n = size %A[0]`, or an
    integer argument) ties the modes its loop variable indexes (as the index
    of one element) to the bound;
  * a subview or expand size that is such a variable ties the view's mode.
Related variables form one class (union-find), with the relations that
joined them kept for messages. `tinyc run` and `tinyc bench` choose a value
per class (tinyc/harness/sizes.py).

A walk over the instructions' interfaces (tinyc/ir/addressing.py): views,
element footprints, size rules, integer values and loop ranges; no
instruction class is named.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from tinyc.ir.addressing import LoopRange, MemberView, MergeView, SliceView, SplitView
from tinyc.ir.core import Function, Instruction, Value
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType, ScalarType

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

    def _instruction(self, inst: Instruction) -> None:
        where = _where(inst)
        value = inst.integer_facts().value
        if value is not None and inst.results:
            self.scalar[inst.result] = self._integer(value.op, value.args)
        addressing = inst.addressing()
        if addressing.view is not None and inst.results:
            self.dims[inst.result] = self._view(inst, addressing.view)
        for footprint in addressing.footprints:  # an element indexed by a loop variable
            modes = self._modes(footprint.operand)
            for k, span in enumerate(footprint.modes or ()):
                if k < len(modes) and span.count == 1 and span.start in self.bound:
                    self.equate(modes[k], self.bound[span.start], f"a loop up to it indexes mode {k} "
                                                                  f"of %{footprint.operand.name} in {where}")
        for loop in inst.integer_facts().ranges:
            if isinstance(loop, LoopRange):
                self.bound[loop.var] = self.scalar.get(loop.upper)
        for rule in addressing.rules or ():
            (i, m), (j, n) = rule.left, rule.right
            left, right = self._modes(inst.operands[i]), self._modes(inst.operands[j])
            if m < len(left) and n < len(right):
                self.equate(left[m], right[n], f"{rule.what} in {where}")

    def _integer(self, op: str, args: tuple) -> Dim:
        """The size an integer result equals: a constant, a cast of one, a mode's size."""
        if op == "constant" and isinstance(args[0], int) and not isinstance(args[0], bool):
            return args[0]
        if op == "cast":
            return self.scalar.get(args[0])
        if op == "size" and isinstance(args[0].type, MemrefType):
            modes = self._modes(args[0])
            return modes[args[1]] if args[1] < len(modes) else None
        return None

    def _size(self, x: Any) -> Dim:
        return x if isinstance(x, int) else self.scalar.get(x)

    def _view(self, inst: Instruction, view: Any) -> list[Dim]:
        """The modes of a view, from its source's (the result type's static sizes where the
        view does not say)."""
        if isinstance(view, MemberView):
            out = list(self.dims.get(view.source) or [None] * view.source.type.memref.order)
        elif isinstance(view, SliceView):
            modes = self._modes(view.source)
            out = []
            for k, span in enumerate(view.modes):
                if span.count is None:  # the whole mode
                    out.append(modes[k] if k < len(modes) else None)
                elif not (isinstance(span.count, int) and span.count == 0):  # 0: dropped
                    out.append(self._size(span.count))
            out += [None] * view.extra_modes
        elif isinstance(view, SplitView):
            modes = self._modes(view.source)
            out = modes[:view.mode] + [self._size(s) for s in view.shape] + modes[view.mode + 1:]
        elif isinstance(view, MergeView):
            modes = self._modes(view.source)
            out = modes[:view.first] + [None] + modes[view.last + 1:]
        else:
            out = []
        declared = getattr(inst.result.type, "shape", ())
        if len(out) != len(declared):
            return [s if s != DYNAMIC else None for s in declared]
        return [d if d is not None or s == DYNAMIC else s for d, s in zip(out, declared)]
