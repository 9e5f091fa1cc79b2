"""Mixed view instructions: subview, expand and fuse (memrefs that view another one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.checks import check_view_result, expect_indices, expect_memref, inst_error, shape_text
from tinyc.ir.addressing import WHOLE_SPAN, Addressing, MergeView, ModeSpan, SliceView, SplitView
from tinyc.ir.core import Instruction, Value, no_integer_facts, no_memory_access
from tinyc.ir.types import DYNAMIC, MemrefType, Type
from tinyc.lint.rules import subview_bounds

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.lint import LintContext
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


WHOLE_MODE: int = -2
"""Subview size marker for a bare `:` slice: offset 0, the full mode."""


class Expand(Instruction):
    """A view with one mode split into several.

    `static_shape` holds the expand shape with DYNAMIC where a value is given;
    those values are operands 1.. in order.
    """

    opname = "expand"
    keywords = ("expand",)
    syntax = 'LOCAL_ID "[" INTEGER "->" expand_shape "]" ":" memref_type'
    memory_accesses = no_memory_access

    def __init__(self, tensor: Value, mode: int, static_shape: Sequence[int],
                 dynamic_shape: Sequence[Value], type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([tensor, *dynamic_shape], [type], span=span, result_names=[name])
        self.mode = mode
        self.static_shape = list(static_shape)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Expand":
        shape = s.parts[0]
        static = [DYNAMIC if isinstance(x, Value) else shape.nonnegative(k, "expand shape entry")
                  for k, x in enumerate(shape.items)]
        return cls(s.values[0], s.literals[0], static, shape.values, s.type)

    @property
    def tensor(self) -> Value:
        return self.operands[0]

    def addressing(self) -> Addressing:
        """A view: the mode split into the expand shape."""
        dynamic = iter(self.operands[1:])
        shape = tuple(next(dynamic) if s == DYNAMIC else s for s in self.static_shape)
        return Addressing(view=SplitView(self.tensor, self.mode, shape))

    integer_facts = no_integer_facts

    def format(self, p: "Printer") -> str:
        dynamic = iter(self.operands[1:])
        # Spaced: `%ix2` would read back as one name.
        shape = " x ".join(p.v(next(dynamic)) if s == DYNAMIC else str(s) for s in self.static_shape)
        return f"expand {p.v(self.tensor)}[{self.mode} -> {shape}] : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Mode in range, shape product = mode size, result memref per the spec's rules."""
        src = expect_memref(ctx, self, 0, "operand")
        if src is None:
            return
        shape, mode, n_dynamic = self.static_shape, self.mode, self.static_shape.count(DYNAMIC)
        if n_dynamic != len(self.operands) - 1:
            inst_error(ctx, self, f"the expand shape has {n_dynamic} dynamic entries but "
                                  f"{len(self.operands) - 1} values")
            return
        if not 0 <= mode < src.order:
            inst_error(ctx, self, f"mode {mode} is out of range for {src} of order {src.order} "
                                  f"(modes count from 0)", self.operands[:1])
            return
        if len(shape) < 2:
            inst_error(ctx, self, f"the expand shape must have at least 2 entries, got {len(shape)}")
        bad = [s for s in shape if s != DYNAMIC and s < 1]
        if bad:
            inst_error(ctx, self, f"expand shape entries must be positive, got {bad[0]}")
            return
        expect_indices(ctx, self, 1, n_dynamic, "expand shape value")
        size, product = src.shape[mode], 1
        for s in shape:
            product *= s if s != DYNAMIC else 1
        if size != DYNAMIC and n_dynamic == 0 and product != size:
            inst_error(ctx, self, f"the product of the expand shape {shape_text(shape)} is {product}, "
                                  f"but mode {mode} has size {size}", self.operands[:1])
            return
        if size != DYNAMIC and size % product:
            inst_error(ctx, self, f"the constant entries of the expand shape {shape_text(shape)} "
                                  f"multiply to {product}, which does not divide the size {size} "
                                  f"of mode {mode}", self.operands[:1])
            return
        if len(src.stride) != src.order:
            return
        strides, current = [], src.stride[mode]
        for s in shape:
            strides.append(current)
            current = DYNAMIC if DYNAMIC in (current, s) else current * s
        check_view_result(ctx, self, src, src.shape[:mode] + tuple(shape) + src.shape[mode + 1:],
                          src.stride[:mode] + tuple(strides) + src.stride[mode + 1:])


class Fuse(Instruction):
    """A view with modes from..to (inclusive) merged into one."""

    opname = "fuse"
    keywords = ("fuse",)
    syntax = 'LOCAL_ID "[" INTEGER "," INTEGER "]" ":" memref_type'
    memory_accesses = no_memory_access

    def __init__(self, tensor: Value, first: int, last: int, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([tensor], [type], span=span, result_names=[name])
        self.first = first
        self.last = last

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Fuse":
        first, last = s.literals
        return cls(s.values[0], first, last, s.type)

    def addressing(self) -> Addressing:
        """A view: the modes merged."""
        return Addressing(view=MergeView(self.operands[0], self.first, self.last))

    integer_facts = no_integer_facts

    def format(self, p: "Printer") -> str:
        return f"fuse {p.v(self.operands[0])}[{self.first}, {self.last}] : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """0 <= from < to < order, fusable strides where known, result memref per the spec."""
        src = expect_memref(ctx, self, 0, "operand")
        if src is None:
            return
        first, last = self.first, self.last
        if not 0 <= first < last < src.order:
            inst_error(ctx, self, f"cannot fuse modes {first} to {last} of {src}: need "
                                  f"0 <= from < to < order ({src.order})", self.operands[:1])
            return
        if len(src.stride) != src.order:
            return
        shape, stride = src.shape, src.stride
        for k in range(first, last):
            if DYNAMIC not in (stride[k], shape[k], stride[k + 1]) and \
                    stride[k] * shape[k] != stride[k + 1]:
                inst_error(ctx, self, f"modes {k} and {k + 1} of {src} cannot be fused: the stride "
                                      f"{stride[k + 1]} of mode {k + 1} is not stride times size of "
                                      f"mode {k} ({stride[k]}*{shape[k]} = {stride[k] * shape[k]})",
                           self.operands[:1])
        size = 1
        for s in shape[first:last + 1]:
            size = DYNAMIC if DYNAMIC in (size, s) else size * s
        check_view_result(ctx, self, src, shape[:first] + (size,) + shape[last + 1:],
                          stride[:first + 1] + stride[last + 1:])


class Subview(Instruction):
    """A view on a block of a memref, possibly dropping modes.

    Per mode: `static_offsets[i]` and `static_sizes[i]` hold constants, or
    DYNAMIC when the value is an operand (offsets first, then sizes, in mode
    order, after the tensor). Size 0 drops the mode (a single index); size
    WHOLE_MODE is the bare `:` slice.
    """

    opname = "subview"
    keywords = ("subview",)
    syntax = 'LOCAL_ID "[" (slice ("," slice)*)? "]" ":" memref_type'
    memory_accesses = no_memory_access

    def __init__(self, tensor: Value, static_offsets: Sequence[int], static_sizes: Sequence[int],
                 offsets: Sequence[Value], sizes: Sequence[Value], type: Type,
                 span: Span | None = None, name: str | None = None,
                 single_index: Sequence[bool] | None = None):
        super().__init__([tensor, *offsets, *sizes], [type], span=span, result_names=[name])
        self.static_offsets = list(static_offsets)
        self.static_sizes = list(static_sizes)
        self.n_dynamic_offsets = len(offsets)
        # Whether a mode was written as a bare index (`%i`) rather than `%i:0`.
        self.single_index = list(single_index) if single_index is not None else [
            s == 0 for s in static_sizes]

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Subview":
        """Per slice `offset`, `offset:size` or `:`; literals must not be negative."""
        static_offsets: list[int] = []
        static_sizes: list[int] = []
        single: list[bool] = []
        for part in s.parts:
            if part.rule == "whole_mode":
                static_offsets.append(0)
                static_sizes.append(WHOLE_MODE)
                single.append(False)
                continue
            offset, *size = part.items
            static_offsets.append(DYNAMIC if isinstance(offset, Value)
                                  else part.nonnegative(0, "subview offset"))
            if size:
                static_sizes.append(DYNAMIC if isinstance(size[0], Value)
                                    else part.nonnegative(1, "subview size"))
            else:
                static_sizes.append(0)  # a single index drops the mode
            single.append(not size)
        offsets = [p.items[0] for p in s.parts if p.items and isinstance(p.items[0], Value)]
        sizes = [p.items[1] for p in s.parts if len(p.items) > 1 and isinstance(p.items[1], Value)]
        return cls(s.values[0], static_offsets, static_sizes, offsets, sizes, s.type,
                   single_index=single)

    @property
    def tensor(self) -> Value:
        return self.operands[0]

    def addressing(self) -> Addressing:
        """A view: per mode the entries kept (a single index: one entry, the mode dropped)."""
        modes = tuple([WHOLE_SPAN if isinstance(size, int) and size == WHOLE_MODE else ModeSpan(off, size)
                       for off, size in self.mode_slices()])
        t = self.result.type
        extra = t.order - self.kept_order if isinstance(t, MemrefType) else 0
        return Addressing(view=SliceView(self.tensor, modes, max(extra, 0)))

    integer_facts = no_integer_facts

    @property
    def offsets(self) -> list[Value]:
        return self.operands[1: 1 + self.n_dynamic_offsets]

    @property
    def sizes(self) -> list[Value]:
        return self.operands[1 + self.n_dynamic_offsets:]

    def mode_slices(self) -> list[tuple[int | Value, int | Value]]:
        """(offset, size) per mode, a Value where dynamic."""
        offs, sizes = iter(self.offsets), iter(self.sizes)
        return [(next(offs) if o == DYNAMIC else o, next(sizes) if s == DYNAMIC else s)
                for o, s in zip(self.static_offsets, self.static_sizes)]

    def format(self, p: "Printer") -> str:
        parts = []
        for i, (off, size) in enumerate(self.mode_slices()):
            if isinstance(size, int) and size == WHOLE_MODE:
                parts.append(":")
                continue
            o = p.v(off) if isinstance(off, Value) else str(off)
            if isinstance(size, int) and size == 0 and self.single_index[i]:
                parts.append(o)
            else:
                parts.append(f"{o}:{p.v(size) if isinstance(size, Value) else size}")
        return f"subview {p.v(self.tensor)}[{', '.join(parts)}] : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """One entry per mode, index-typed values, static bounds, result memref per the spec."""
        src = expect_memref(ctx, self, 0, "operand")
        if src is None:
            return
        offsets, sizes = self.static_offsets, self.static_sizes
        if len(offsets) != src.order or len(sizes) != src.order:
            inst_error(ctx, self, f"{src} needs {src.order} entries (one per mode), got "
                                  f"{len(offsets)}", self.operands[:1])
            return
        n_off, n_size = offsets.count(DYNAMIC), sizes.count(DYNAMIC)
        if n_off != self.n_dynamic_offsets or n_off + n_size != len(self.operands) - 1:
            inst_error(ctx, self, f"the subview has {n_off + n_size} dynamic entries but "
                                  f"{len(self.operands) - 1} values")
            return
        expect_indices(ctx, self, 1, n_off, "dynamic offset")
        expect_indices(ctx, self, 1 + n_off, n_size, "dynamic size")
        shape, stride = [], []
        for mode, (off, size) in enumerate(zip(offsets, sizes)):
            problem = _subview_bounds(off, size, src.shape[mode])
            if problem:
                inst_error(ctx, self, f"mode {mode}: {problem}", self.operands[:1])
            if size == WHOLE_MODE:
                shape.append(src.shape[mode])
            elif size != 0:
                shape.append(size)
            else:
                continue
            if len(src.stride) == src.order:
                stride.append(src.stride[mode])
        if len(src.stride) == src.order:
            extra = self._extra_modes(ctx, len(shape))
            if extra is not None:
                check_view_result(ctx, self, src, tuple(shape) + extra[0], tuple(stride) + extra[1])

    def lint(self, ctx: "LintContext") -> None:
        subview_bounds(ctx, self, self.static_offsets, self.static_sizes, WHOLE_MODE)

    @property
    def kept_order(self) -> int:
        """How many of the operand's modes the slices keep (size 0 drops a mode)."""
        return sum(size != 0 for size in self.static_sizes)

    def extra_shape(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Shape and stride of the result's modes after the kept ones (newest language)."""
        t = self.result.type
        if not isinstance(t, MemrefType) or t.order <= self.kept_order:
            return (), ()
        return tuple(t.shape[self.kept_order:]), tuple(t.stride[self.kept_order:])

    def _extra_modes(self, ctx: "VerifyContext",
                     kept: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """The newest language (as the reference compiler) takes a result with more modes
        than the slices keep: the extra trailing modes have the shape and stride their type
        declares, which must then be static (docs/newest.md). The seed spec has none.
        None: an error is reported."""
        shape, stride = self.extra_shape()
        if not shape:
            return (), ()
        if not ctx.version.newest_extensions:
            return (), ()  # the spec's rank reduction: the result shape is wrong
        if DYNAMIC in shape or DYNAMIC in stride or 0 in shape:
            inst_error(ctx, self, f"the result has {len(shape)} mode(s) after the {kept} the slices "
                                  f"keep; their sizes and strides must be static and positive, got "
                                  f"{self.result.type}", self.operands[:1])
            return None
        return shape, stride


def _subview_bounds(offset: int, size: int, extent: int) -> str | None:
    """Static problems of one subview entry: negative offsets and sizes.

    Slices beyond the mode are not errors: the spec does not check bounds
    ("there is no run-time check whether the indices are within bounds"),
    the reference accepts such views (its memref-info test takes `4:8` of a
    mode of 8), and only an access through them is undefined behaviour
    (`--check-bounds` catches that at run time).
    """
    if offset != DYNAMIC and offset < 0:
        return f"the offset {offset} is negative"
    if size not in (DYNAMIC, WHOLE_MODE) and size < 0:
        return f"the size {size} is negative"
    return None
