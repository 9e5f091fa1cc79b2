"""`FunctionBuilder`: one kernel built from Python, an instruction per method call.

A thin layer over the instruction classes of `tinyc.ir.instructions` and the
internal `tinyc.ir.insertion.Builder`: each method creates one instruction at
the insertion point and returns its result value(s). What the layer adds:

  * every instruction carries the span of the Python call that built it, so
    verifier errors point at the user's line (`location.py`);
  * result types are inferred where the spec fixes them (load, subview,
    fuse, expand, arithmetic, builtins), so the user writes them only where
    the language asks for a choice (constant, cast, alloca, coopmatrix);
  * Python numbers are accepted where a scalar value is expected and become
    `constant` instructions of the type the position requires;
  * instructions without a method of their own (new ones) are reachable as
    `fn.<keyword>(...)` with the arguments of their class, or `fn.emit(cls, ...)`.

The SPMD methods (coopmatrix, atomics, subgroups) are mixed in from
spmd_methods.py, the regions' (`for_`, `if_`, `foreach`, ...) from regions.py,
the collectives' are made from their classes (collectives.py).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from tinyc.builder import location
from tinyc.builder.arguments import enum_of, memref_of, results_of, store_flag, transposed
from tinyc.builder.collectives import collective_method
from tinyc.builder.regions import RegionMethods
from tinyc.builder.spmd_methods import SpmdMethods
from tinyc.builder.types import scalar
from tinyc.builder.views import expand_type, fuse_type, slice_entries, subview_type
from tinyc.diagnostics import Span
from tinyc.ir import instructions as I
from tinyc.ir.insertion import Builder
from tinyc.ir.core import Function, Instruction, Value
from tinyc.ir.types import (
    DYNAMIC, BoolType, CoopMatrixType, GroupType, MemrefType, ScalarType, Type, index, promote,
)

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*|[0-9]+")


class _SpannedBuilder(Builder):
    """The internal builder, stamping each new instruction with the Python caller's span."""

    def insert(self, inst: Instruction) -> Instruction:
        if inst.span is None:
            inst.span = location.caller_span()
            for value in inst.results:
                value.span = inst.span
        return super().insert(inst)


class FunctionBuilder(SpmdMethods, RegionMethods):
    """Builds one function: parameters first, then instructions in program order."""

    def __init__(self, function: Function, names: set[str]):
        self.function = function
        self._b = _SpannedBuilder.at_end(function.body)
        self._names = names  # every SSA name given in this function

    # -- parameters and attributes --------------------------------------------
    def param(self, name: str, type: Type, **attrs: Any) -> Value:
        """Add a parameter (before any instruction); attrs: alignment, shape_gcd, stride_gcd."""
        if not isinstance(type, Type):
            raise TypeError(f"parameter '{name}' needs a tinyc type (e.g. memref(f32, 8, 8)), "
                            f"got {type!r}")
        value = Value(type, self._name(name, required=True), location.caller_span(), self.function)
        value.type_span = value.span
        value.attrs = dict(attrs)
        self.function.args.append(value)
        return value

    @property
    def params(self) -> list[Value]:
        return list(self.function.args)

    def __getitem__(self, name: str) -> Value:
        for value in self.function.args:
            if value.name == name:
                return value
        raise KeyError(f"no parameter '{name}'; there are: "
                       f"{', '.join(v.name or '?' for v in self.function.args)}")

    def set_attribute(self, name: str, value: Any) -> None:
        """A function attribute: `work_group_size` [x, y] or `subgroup_size` n."""
        self.function.attrs[name] = list(value) if isinstance(value, tuple) else value

    # -- plumbing ---------------------------------------------------------------
    def _name(self, name: str | None, required: bool = False) -> str | None:
        if name is None:
            if required:
                raise ValueError("parameters need a name")
            return None
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(f"invalid value name {name!r}: use a letter followed by letters, "
                             f"digits or '_' (or a number)")
        if name in self._names:
            raise ValueError(f"the name '%{name}' is already used in function "
                             f"'@{self.function.name}'")
        self._names.add(name)
        return name

    def _add(self, inst: Instruction, name: str | None = None) -> Instruction:
        if name is not None and inst.results:
            inst.results[0].name = self._name(name)
        return self._b.insert(inst)

    def _value(self, x: Any, t: Type, what: str) -> Value:
        """A Value as is; a Python number becomes a constant of type `t`."""
        if isinstance(x, Value):
            return x
        if isinstance(x, (bool, int, float, complex)) or hasattr(x, "dtype"):
            return self.constant(x, t)
        raise TypeError(f"{what} must be a value or a number, got {x!r}")

    def _index(self, x: Any, what: str = "index") -> Value:
        return self._value(x, index, what)

    def _indices(self, xs: Sequence[Any]) -> list[Value]:
        return [self._index(x) for x in xs]

    def emit(self, cls: type, *args: Any, name: str | None = None, **kwargs: Any):
        """Any instruction class with its constructor's arguments; returns its result(s)."""
        inst = self._add(cls(*args, **kwargs), name)
        return results_of(inst)

    def __getattr__(self, keyword: str):
        """`fn.<keyword>(...)` for an instruction without a method of its own: the class's
        constructor arguments (after those the keyword fixes), e.g. a new instruction."""
        if keyword.startswith("_"):
            raise AttributeError(keyword)
        found = instruction_classes().get(keyword)
        if found is None:
            raise AttributeError(f"the builder has no instruction '{keyword}'")
        cls, preset = found

        def build(*args: Any, name: str | None = None, **kwargs: Any):
            return self.emit(cls, *preset, *args, name=name, **kwargs)

        return build

    # -- scalars ----------------------------------------------------------------
    def constant(self, value: Any, type: Any, name: str | None = None) -> Value:
        """`constant value : type`; a NumPy scalar is taken as its Python value."""
        t = type if isinstance(type, (CoopMatrixType, BoolType)) else scalar(type)
        if hasattr(value, "item"):
            value = value.item()
        element = t.component if isinstance(t, CoopMatrixType) else t
        if isinstance(element, ScalarType):
            if element.is_float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            elif element.is_complex and not isinstance(value, complex):
                value = complex(value)
        return self._add(I.Constant(value, t), name).result

    def arith(self, op: Any, a: Any, b: Any, name: str | None = None) -> Value:
        """`arith.<op> a, b` (op: add, sub, mul, div, rem, min, max, shl, shr, and, or, xor)."""
        op = enum_of(I.ArithBinaryOp, op, "arith operation")
        a, b = self._pair(a, b, f"arith.{op.value}")
        return self._add(I.ArithBinary(op, a, b, a.type), name).result

    def _pair(self, a: Any, b: Any, what: str) -> tuple[Value, Value]:
        if not isinstance(a, Value) and not isinstance(b, Value):
            raise TypeError(f"{what}: at least one operand must be a value")
        if not isinstance(a, Value):
            a = self._value(a, b.type, f"{what} operand 1")
        if not isinstance(b, Value):
            b = self._value(b, a.type, f"{what} operand 2")
        return a, b

    def add(self, a, b, name=None): return self.arith("add", a, b, name)
    def sub(self, a, b, name=None): return self.arith("sub", a, b, name)
    def mul(self, a, b, name=None): return self.arith("mul", a, b, name)
    def div(self, a, b, name=None): return self.arith("div", a, b, name)
    def rem(self, a, b, name=None): return self.arith("rem", a, b, name)
    def min(self, a, b, name=None): return self.arith("min", a, b, name)
    def max(self, a, b, name=None): return self.arith("max", a, b, name)
    def shl(self, a, b, name=None): return self.arith("shl", a, b, name)
    def shr(self, a, b, name=None): return self.arith("shr", a, b, name)
    def and_(self, a, b, name=None): return self.arith("and", a, b, name)
    def or_(self, a, b, name=None): return self.arith("or", a, b, name)
    def xor(self, a, b, name=None): return self.arith("xor", a, b, name)

    def unary(self, op: Any, a: Value, name: str | None = None) -> Value:
        """`arith.<op> a` (abs, neg, not, conj, im, re); abs/im/re of a complex are real."""
        op = enum_of(I.ArithUnaryOp, op, "unary operation")
        t = a.type
        if isinstance(t, ScalarType) and t.is_complex and op in (
                I.ArithUnaryOp.ABS, I.ArithUnaryOp.IM, I.ArithUnaryOp.RE):
            t = t.component
        return self._add(I.ArithUnary(op, a, t), name).result

    def abs(self, a, name=None): return self.unary("abs", a, name)
    def neg(self, a, name=None): return self.unary("neg", a, name)
    def not_(self, a, name=None): return self.unary("not", a, name)
    def conj(self, a, name=None): return self.unary("conj", a, name)
    def im(self, a, name=None): return self.unary("im", a, name)
    def re(self, a, name=None): return self.unary("re", a, name)

    def math(self, op: Any, a: Value, name: str | None = None) -> Value:
        """`math.<op> a` (exp, native_exp)."""
        op = enum_of(I.MathUnaryOp, op, "math operation")
        return self._add(I.MathUnary(op, a, a.type), name).result

    def exp(self, a, name=None): return self.math("exp", a, name)
    def native_exp(self, a, name=None): return self.math("native_exp", a, name)

    def cast(self, a: Value, type: Any, name: str | None = None) -> Value:
        t = type if isinstance(type, CoopMatrixType) else scalar(type)
        return self._add(I.Cast(a, t), name).result

    def cmp(self, cond: Any, a: Any, b: Any, name: str | None = None) -> Value:
        """`cmp.<cond> a, b : bool` (eq, ne, gt, ge, lt, le)."""
        cond = enum_of(I.CmpCond, cond, "comparison")
        a, b = self._pair(a, b, f"cmp.{cond.value}")
        return self._add(I.Cmp(cond, a, b), name).result

    def eq(self, a, b, name=None): return self.cmp("eq", a, b, name)
    def ne(self, a, b, name=None): return self.cmp("ne", a, b, name)
    def gt(self, a, b, name=None): return self.cmp("gt", a, b, name)
    def ge(self, a, b, name=None): return self.cmp("ge", a, b, name)
    def lt(self, a, b, name=None): return self.cmp("lt", a, b, name)
    def le(self, a, b, name=None): return self.cmp("le", a, b, name)

    def builtin(self, which: Any, name: str | None = None) -> Value:
        """`builtin.<which>` with the type the spec gives it."""
        which = enum_of(I.BuiltinName, which, "builtin")
        cls = I.SpmdBuiltin if which in I.SPMD_BUILTINS else I.Builtin
        from tinyc.ir.instructions.scalar import BUILTIN_TYPES

        return self._add(cls(which, BUILTIN_TYPES[which]), name).result

    def group_id(self, name=None): return self.builtin("group_id", name)
    def group_size(self, name=None): return self.builtin("group_size", name)
    def num_subgroups(self, name=None): return self.builtin("num_subgroups", name)
    def subgroup_size(self, name=None): return self.builtin("subgroup_size", name)
    def subgroup_id(self, name=None): return self.builtin("subgroup_id", name)
    def subgroup_local_id(self, name=None): return self.builtin("subgroup_local_id", name)

    def barrier(self, global_fence: bool = False, local_fence: bool = False) -> None:
        self._add(I.Barrier(global_fence, local_fence))

    # -- memory -----------------------------------------------------------------
    def alloca(self, type: MemrefType, alignment: int | None = None, name: str | None = None) -> Value:
        """Local scratch memory: `type` is a local memref, e.g. memref(f32, 16, 8, local=True)."""
        attrs = {} if alignment is None else {"alignment": alignment}
        return self._add(I.Alloca(type, attrs), name).result

    def load(self, tensor: Value, indices: Sequence[Any] = (), name: str | None = None) -> Value:
        """An element of a memref, or the memref of a group member."""
        t = tensor.type
        if isinstance(t, MemrefType):
            result: Type = t.element
        elif isinstance(t, GroupType):
            result = t.memref
        else:
            raise TypeError(f"load needs a memref or a group, got {t}")
        return self._add(I.Load(tensor, self._indices(indices), result), name).result

    def store(self, value: Any, tensor: Value, indices: Sequence[Any] = (),
              flag: str | None = None) -> None:
        """`store[.atomic|.atomic_add] value, tensor[indices]`."""
        t = tensor.type
        if not isinstance(value, Value) and isinstance(t, MemrefType):
            value = self._value(value, t.element, "stored value")
        self._add(I.Store(value, tensor, self._indices(indices), store_flag(flag)))

    def size(self, tensor: Value, mode: int = 0, name: str | None = None) -> Value:
        return self._add(I.Size(tensor, mode), name).result

    def subview(self, tensor: Value, slices: Sequence[Any], name: str | None = None) -> Value:
        """A view: per mode an index (drops it), `slice(None)`/`...` (all of it), `slice(a, b)`
        or `(offset, size)`, ints or index values."""
        t = memref_of(tensor, "subview")
        entries = [(self._index(o) if not isinstance(o, int) else o,
                    self._index(s) if not isinstance(s, int) else s, single)
                   for o, s, single in slice_entries(t, list(slices))]
        offsets = [o for o, _, _ in entries if isinstance(o, Value)]
        sizes = [s for _, s, _ in entries if isinstance(s, Value)]
        inst = I.Subview(tensor, [DYNAMIC if isinstance(o, Value) else o for o, _, _ in entries],
                         [DYNAMIC if isinstance(s, Value) else s for _, s, _ in entries],
                         offsets, sizes, subview_type(t, entries),
                         single_index=[single for _, _, single in entries])
        return self._add(inst, name).result

    def fuse(self, tensor: Value, first: int, last: int, name: str | None = None) -> Value:
        """Modes first..last (inclusive) of a memref viewed as one."""
        return self._add(I.Fuse(tensor, first, last, fuse_type(memref_of(tensor, "fuse"), first, last)),
                         name).result

    def expand(self, tensor: Value, mode: int, shape: Sequence[Any], name: str | None = None) -> Value:
        """Mode `mode` viewed as several: shape entries are ints or index values."""
        entries = [s if isinstance(s, int) else self._index(s) for s in shape]
        result = expand_type(memref_of(tensor, "expand"), mode, entries)
        static = [DYNAMIC if isinstance(s, Value) else s for s in entries]
        dynamic = [s for s in entries if isinstance(s, Value)]
        return self._add(I.Expand(tensor, mode, static, dynamic, result), name).result

    def lifetime_stop(self, value: Value) -> None:
        self._add(I.LifetimeStop(value))

    def associated(self, tensor: Value, name: str | None = None) -> Value:
        """True if a memref's or group's base address is not null (newest language)."""
        return self._add(I.Associated(tensor), name).result

    # -- collectives (their methods are made from the classes: collectives.py) -------
    def _scalars(self, alpha: Any, beta: Any, inputs: Sequence[Value], out: Value) -> tuple[Value, Value]:
        """alpha typed as promote(inputs), beta as the output's element type, when numbers."""
        elements = [memref_of(v, "operand").element for v in inputs]
        alpha_t = elements[0]
        for e in elements[1:]:
            alpha_t = promote(alpha_t, e) or alpha_t
        return (self._value(alpha, alpha_t, "alpha"),
                self._value(beta, memref_of(out, "output").element, "beta"))


_CLASSES: dict[str, tuple[type, tuple]] = {}


def instruction_classes() -> dict[str, tuple[type, tuple]]:
    """Every instruction by its keyword ('.' as '_'): its class and the leading constructor
    arguments the keyword fixes (the operation of `arith.add`, the builtin of `builtin.group_id`)."""
    if not _CLASSES:
        from tinyc.ir.instructions import instruction_classes as all_classes

        for cls in all_classes():
            keywords = vars(cls).get("keywords") or getattr(cls, "keywords", ())
            if isinstance(keywords, dict):
                for keyword, value in keywords.items():
                    preset = value if isinstance(value, tuple) else (value,)
                    _CLASSES.setdefault(keyword.replace(".", "_"), (cls, preset))
            else:
                for keyword in keywords:
                    _CLASSES.setdefault(keyword.replace(".", "_"), (cls, ()))
    return _CLASSES


def span_of(value: Value) -> Span | None:
    """Where a built value was made (its instruction's Python line)."""
    return value.span


for _cls in I.instruction_classes():  # gemm, gemv, ger, axpby, sum, cumsum, hadamard_product
    if issubclass(_cls, I.BlasInstruction):
        setattr(FunctionBuilder, _cls.opname, collective_method(_cls, transposed))
del _cls
