"""One contraction kernel for given subscripts, layouts, dtypes and device, compiled.

`analyse` turns operand signatures (kind, dtype, shape, strides) into the
layouts of a call, checking the input with ValueError/TypeError that name
the subscript or operand. It also picks the dynamic (batch) labels: their
sizes are `?` modes of the kernel, so `Analysis.key()` — what the kernel
depends on — is the same for every batch size, and one compile serves them
all. `Compiled` owns the built program and its kernel (launched by running.py).

The dynamic labels: output labels (no diagonal) held by every operand —
the largest, and any other of at least SECOND_BATCH; when no label is held
by every operand (a shared matrix, a single operand), the largest output
label an operand holds, if it is larger than every other label and has at
least FALLBACK_BATCH entries (else the call has no batch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Sequence

import numpy as np

from tinyc.contractions import subscripts as subs
from tinyc.contractions.emit import KernelSpec, build_kernel, scratch_layout
from tinyc.contractions.joins import join_batch
from tinyc.contractions.layout import (
    Layout, byte_strides_to_elements, c_order_strides, f_order_strides, layout,
)
from tinyc.contractions.knobs import Knobs
from tinyc.contractions.lanes import lane_plan
from tinyc.contractions.plan import Plan, Step, make_plan
from tinyc.ir.types import SCALAR_TYPES, ScalarType, promotable
from tinyc.runtime import results
from tinyc.runtime.arrays import dtypes_for

EINSUM_TYPES = ("i8", "i16", "i32", "i64", "f16", "f32", "f64", "c32", "c64")
"""The language's types a contraction computes in: each has a NumPy dtype of its own (bf16's
arrays are bit patterns, and `index` is i64)."""
DTYPES = {dtypes_for(SCALAR_TYPES[name])[0]: name for name in EINSUM_TYPES}
"""NumPy dtypes of those types."""
UNSIGNED = {np.dtype(f"uint{bits}"): np.dtype(f"int{bits}") for bits in (8, 16, 32, 64)}
"""Unsigned dtypes, computed in the signed type of their width: the language's integers
are signless, and products and sums modulo 2^bits are the same bits either way."""
SUPPORTED = ("float32, float64, complex64, complex128, float16, an integer dtype "
             "(the language's f32, f64, c32, c64, f16, i8-i64) or bool")
BOOL = np.dtype(np.bool_)
ACCEPTED = frozenset([*DTYPES, *UNSIGNED, BOOL])
"""The dtypes a contraction takes as its computation's or its out's."""
COUNTS = np.dtype(np.int32)
"""A bool contraction (NumPy: the OR of ANDs) counts the true products in int32, then
compares with 0 (exact below 2^31 products per result)."""
EPILOGUES = (None, "relu")
ORDERS = ("C", "F", "A", "K")
"""np.einsum's `order=` of a new result: C, Fortran, Fortran if every operand is (A), or
the layout that suits the operands (K, NumPy's default; new_output_order)."""
CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
"""np.einsum's `casting=` rules (np.can_cast's), for the operands into the computation's
type and the result into `out`; "safe" by default, as in NumPy."""
REPRESENTATIVE_BATCH = 1 << 14
"""The size the planner assumes for a dynamic label (plans depend on the key alone)."""
SECOND_BATCH = 64
"""A second label held by every operand is dynamic too from this size on (two batch modes)."""
FALLBACK_BATCH = 16
"""Without a label held by every operand, the largest label is the batch from this size on."""


class Signature(NamedTuple):
    """What a call depends on about one array: where it lives, dtype, shape, byte strides."""

    kind: str  # "numpy" or "usm"
    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    aligned: bool = True  # element 0 sits at a multiple of the element size


def hashable_device(device: Any) -> Any:
    """A device (a filter, a SyclDevice or queue, a list) as part of a cache key."""
    try:
        hash(device)
        return device
    except TypeError:
        return id(device)


def dtype_name(dtype: Any) -> str:
    return str(np.dtype(dtype)) if dtype is not None else "?"


def compute_dtype(dtypes: Sequence[np.dtype], forced: Any) -> np.dtype:
    """The dtype the contraction computes in: NumPy's result type, or `dtype=`."""
    if forced is not None:
        alias = dtype_alias(forced)
        try:
            chosen = np.dtype(alias)
        except TypeError:
            raise TypeError(f"unknown dtype {forced!r}; use {SUPPORTED}") from None
    else:
        for k, d in enumerate(dtypes):
            if d.kind not in "biufc":
                raise TypeError(f"operand {k} has dtype {d}, which einsum cannot compute with; "
                                f"use {SUPPORTED}")
        chosen = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    if chosen not in ACCEPTED:
        raise TypeError(f"tinyc.einsum computes in {SUPPORTED}, not {chosen}")
    return chosen


def dtype_alias(d: Any) -> Any:
    """The language's spellings (i8 = int8, f16 = float16, c32 = complex64, ...) as NumPy
    dtypes: NumPy reads "i8" as int64 and "f16" as a 16-byte float."""
    if isinstance(d, str) and d in SCALAR_TYPES:
        if d not in EINSUM_TYPES:
            raise TypeError(f"dtype {d!r}: a contraction computes in {SUPPORTED}")
        return dtypes_for(SCALAR_TYPES[d])[0]
    return d


def signed(dtype: np.dtype) -> np.dtype:
    """The dtype the kernel sees: an unsigned one as the signed type of its width."""
    return UNSIGNED.get(dtype, dtype)


def scalar_type(dtype: np.dtype) -> ScalarType:
    return SCALAR_TYPES[DTYPES[signed(dtype)]]


@dataclass
class Analysis:
    """The checked contraction: labels, layouts, conversions, element types."""

    subscripts: subs.Subscripts
    compute: np.dtype
    result: np.dtype
    inputs: list[Layout]
    convert: list[bool]          # operand k is copied before the call (materialize())
    output: Layout
    out_shape: tuple[int, ...]
    out_order: str               # "C" or "F" for a new output or a temporary one
    out_direct: bool             # the kernel writes the given `out` itself
    sizes: dict[str, int]        # of the layouts' labels (a joined label, not its parts: subscripts.sizes)
    scale: int                   # product of summed labels no operand holds
    empty: bool                  # the output has no elements
    zero: bool                   # a summed label has size 0: the sum is 0
    dynamic: frozenset[str] = frozenset()   # the batch labels: `?` modes of the kernel
    boolean: bool = False                   # bool operands: counts in COUNTS, then != 0
    joined: dict[str, tuple[str, ...]] = field(default_factory=dict)   # joins.py: label -> the user's

    def user_labels(self, label: str) -> tuple[str, ...]:
        """The user's labels a label of the layouts stands for (a joined one: several)."""
        return self.joined.get(label, (label,))

    def batch_labels(self) -> list[str]:
        """The user's labels whose size varies from call to call (a joined label's last part;
        its others are static), largest first."""
        found = [self.user_labels(label)[-1] for label in self.dynamic]
        return sorted(found, key=lambda label: (-self.subscripts.sizes[label], label))

    def key(self, epilogue: Any, plain: bool) -> tuple:
        """What the kernel depends on: the same for every size of the dynamic labels."""
        return (str(self.compute), str(self.result), tuple(t.key() for t in self.inputs),
                self.output.key(), self.scale, self.zero, epilogue, plain)

    def dynamic_sizes(self) -> dict[str, int]:
        """This call's sizes of the dynamic labels."""
        return {label: self.sizes[label] for label in self.dynamic}


def analyse(text: str, operands: Sequence[Signature], out: Signature | None, forced: Any,
            epilogue: Any, order: str = "K", casting: str = "safe") -> Analysis:
    """Check everything about a call that does not need the data; build the layouts."""
    if epilogue not in EPILOGUES:
        raise ValueError(f"unknown epilogue {epilogue!r}; use None or 'relu'")
    order, casting = checked_order(order), checked_casting(casting)
    sub = subs.parse(text, [o.shape for o in operands])
    compute = compute_dtype([o.dtype for o in operands], forced)
    out_shape = tuple(sub.sizes[label] for label in sub.output)
    result, narrowing = compute, False
    if out is not None:
        if out.shape != out_shape:
            raise ValueError(f"out has shape {out.shape} but the result of '{text}' has shape {out_shape}")
        compute, result, narrowing = _types_with_out(out, compute, operands, forced, casting)
        if epilogue == "relu" and out.dtype.kind == "c":
            raise ValueError("epilogue 'relu' needs real numbers; out is complex")
    for k, o in enumerate(operands):
        if not np.can_cast(o.dtype, compute, casting):
            raise TypeError(f"operand {k} of dtype {o.dtype} cannot be cast to {compute} (casting rule "
                            f"'{casting}'; np.einsum's casting= relaxes it)")
    if epilogue == "relu" and compute.kind == "c":
        raise ValueError("epilogue 'relu' needs real numbers; the result is complex")
    boolean = compute == BOOL
    if boolean:
        if epilogue is not None:
            raise ValueError("an epilogue needs numbers; the result is bool")
        compute = result = COUNTS
    sizes = dict(sub.sizes)
    zero_sum = any(sizes[label] == 0 for labels in sub.inputs for label in labels if label not in sub.output)
    empty_out = math.prod(out_shape) == 0
    dynamic = frozenset() if empty_out or zero_sum else dynamic_labels(sub, operands)
    keep = frozenset(label for label in dynamic if sizes[label] == 1)   # a batch of one, not broadcasting
    inputs, convert = [], []
    for k, (labels, o) in enumerate(zip(sub.inputs, operands)):
        needs_copy = o.dtype != compute or not o.aligned
        strides = byte_strides_to_elements(o.strides, o.dtype.itemsize) if not needs_copy else None
        found = layout(labels, o.shape, strides, keep=keep) if strides is not None else None
        if found is None:
            if o.kind != "numpy":
                raise ValueError(
                    f"operand {k} ({dtype_name(o.dtype)}, strides {o.strides}) cannot be read in "
                    f"place; pass a {compute} array with non-negative strides")
            needs_copy = True  # copied as a C-order array of its distinct labels (the diagonal)
            distinct = list(dict.fromkeys(labels))
            shape = [o.shape[labels.index(label)] for label in distinct]
            found = layout(distinct, shape, c_order_strides(shape), keep=keep)
            assert found is not None
        inputs.append(found)
        convert.append(needs_copy)
    out_order = _requested_order(order, operands) or new_output_order(sub, operands, dynamic)
    output_layout, direct = None, False
    if out is not None and not boolean and not narrowing:   # (a bool out is written from the counts)
        strides = byte_strides_to_elements(out.strides, out.dtype.itemsize) if out.aligned else None
        output_layout = layout(sub.output, out.shape, strides, write=True, keep=keep) \
            if strides is not None else None
        direct = output_layout is not None
    if output_layout is None:
        new_strides = (f_order_strides if out_order == "F" else c_order_strides)(out_shape)
        output_layout = layout(sub.output, out_shape, new_strides, write=True, keep=keep)
        assert output_layout is not None
    held = set().union(*[set(t.labels) for t in inputs]) if inputs else set()
    summed = {label for labels in sub.inputs for label in labels} - set(sub.output)
    scale = math.prod(sizes[label] for label in summed if label not in held and sizes[label] > 1)
    empty = empty_out
    zero = not empty and zero_sum
    joined = join_batch(inputs, output_layout, dynamic, sizes)
    dynamic = joined.dynamic
    inputs = [t.with_dynamic(dynamic) for t in joined.inputs]
    return Analysis(sub, compute, result, inputs, convert, joined.output.with_dynamic(dynamic), out_shape,
                    out_order, direct, joined.sizes, scale, empty, zero, dynamic, boolean, joined.parts)


def _types_with_out(out: Signature, compute: np.dtype, operands: Sequence[Signature], forced: Any,
                    casting: str) -> tuple[np.dtype, np.dtype, bool]:
    """(computation, result, narrowing) of a call with `out=`, NumPy's way: out's dtype takes
    part in the computation's type (int8 operands into an int32 out sum in int32), which must
    cast into out under `casting`; a narrower out ('same_kind', 'unsafe') gets the result
    computed wide and converted once at the end. USM operands are read in place, so there the
    kernel widens its result instead (never unsigned or bool ones). An out in the other
    byte order gets the result in its native twin, written into it at the end (NumPy swaps)."""
    if not out.dtype.isnative and out.kind == "numpy":
        native = out._replace(dtype=out.dtype.newbyteorder("="))
        compute = _types_with_out(native, compute, operands, forced, casting)[0]
        return compute, compute, True
    if out.dtype not in ACCEPTED:
        raise TypeError(f"out has dtype {out.dtype}; use {SUPPORTED}")
    convertible = all(o.kind == "numpy" for o in operands)
    if forced is None and convertible:
        compute = compute_dtype([np.result_type(*[o.dtype for o in operands], out.dtype)], None)
    if not np.can_cast(compute, out.dtype, casting):
        raise TypeError(f"cannot write the {compute} result into out of dtype {out.dtype} "
                        f"(casting rule '{casting}')")
    if not np.can_cast(compute, out.dtype, "safe"):
        if out.kind != "numpy":
            raise TypeError(f"cannot convert the {compute} result into the USM out of dtype "
                            f"{out.dtype}; pass out of dtype {compute}")
        return compute, compute, True
    if out.dtype != compute and (compute in UNSIGNED or out.dtype in UNSIGNED or compute == BOOL
                                 or not promotable(scalar_type(compute), scalar_type(out.dtype))):
        why = "dtype=" if forced is not None else "USM operands (read in place)"
        raise TypeError(f"cannot write the {compute} result into out of dtype {out.dtype} in the "
                        f"kernel ({why}); pass out of dtype {compute}")
    return compute, out.dtype, False


def dynamic_labels(sub: subs.Subscripts, operands: Sequence[Signature]) -> frozenset[str]:
    """The batch labels of a call (module docstring): `?` modes of its kernel. An operand
    holds a label when its dimension has the label's full size (no broadcasting); a label
    of size 1 held by every operand stays a batch label (a batch of one)."""
    repeated = {label for t in sub.inputs for label in t if t.count(label) > 1}
    held = [{label for label, n, s in zip(labels, o.shape, o.strides)
             if n == sub.sizes[label] and (s != 0 or n == 1)} for labels, o in zip(sub.inputs, operands)]
    candidates = [label for label in sub.output if label not in repeated and any(label in h for h in held)]
    everywhere = [label for label in candidates if all(label in h for h in held)]
    if len(operands) > 1 and everywhere:
        first = max(everywhere, key=lambda label: sub.sizes[label])
        return frozenset([first] + [label for label in everywhere if sub.sizes[label] >= SECOND_BATCH])
    sized = [label for label in candidates if sub.sizes[label] > 1]
    if not sized:
        return frozenset()
    largest = max(sized, key=lambda label: sub.sizes[label])
    if sub.sizes[largest] < FALLBACK_BATCH or any(n >= sub.sizes[largest] for label, n in sub.sizes.items()
                                                  if label != largest):
        return frozenset()   # no label stands out as the batch
    return frozenset([largest])


def materialize(x: np.ndarray, labels: Sequence[str], dtype: np.dtype) -> np.ndarray:
    """A C-order copy of `x` in `dtype` with one dimension per distinct label (the diagonal
    of repeated labels): the operand as analyse() laid it out for a copied operand."""
    distinct = list(dict.fromkeys(labels))
    if len(distinct) < len(labels):
        strides = [sum(s for l2, s in zip(labels, x.strides) if l2 == label) for label in distinct]
        shape = [x.shape[labels.index(label)] for label in distinct]
        x = np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)
    copy = results.empty(x.shape, dtype, "C")
    np.copyto(copy, x, casting="unsafe")
    return copy


def new_output_order(sub: subs.Subscripts, operands: Sequence[Signature], dynamic: frozenset[str]) -> str:
    """The order of a new result ("C" or "F"): the layout that holds more of the batched data.

    Each operand holding a batch label counts its elements per batch entry for its order
    (Fortran-ordered or C-ordered; other layouts and operands without the batch count for
    neither), twice when its batch modes are its slowest (each entry's data in one piece);
    Fortran order when that side is larger, so the kernel writes each entry's result the
    way it reads most of its inputs (NumPy's `order='K'` in spirit). Measured (tinyc.einsum,
    a C-order `out=` against an F-order one, batches 2,000 and 20,000): `ik,kjb->ijb` with B
    in Fortran order, F 1.4-2.8x faster; `ikb,kjb->ijb` with A in Fortran order, F 2.0-4.6x,
    and with B alone in Fortran order, F 1.2-1.5x (the double count: B's entries are in one
    piece, A's batch is its fastest mode); `bik,bkj->bij` with A alone in Fortran order, C
    1.7-2.3x; `ijb,jb->ib` with a C-order A, C 1.9-2.8x (A holds 16 times B's elements).
    Without batch labels: Fortran when every operand is Fortran-ordered."""
    if not dynamic:
        return "F" if operands and all(_is_f_only(o) for o in operands) else "C"
    held = {"C": 0, "F": 0}
    for labels, o in zip(sub.inputs, operands):
        distinct = set(labels)
        if not distinct & dynamic:
            continue
        per_entry = math.prod(sub.sizes[label] for label in distinct - dynamic)
        order = "F" if _is_f_only(o) else "C" if _is_c_only(o) else None
        if order is not None:
            held[order] += per_entry * (2 if _batch_slowest(labels, o, dynamic) else 1)
    return "F" if held["F"] > held["C"] else "C"


def _batch_slowest(labels: str, o: Signature, dynamic: frozenset[str]) -> bool:
    """Whether every batch mode of the operand has a larger stride than every other mode
    (modes of size 1 aside): each batch entry's elements lie together."""
    strides = [abs(s) for s, n in zip(o.strides, o.shape) if n > 1]
    live = [label for label, n in zip(labels, o.shape) if n > 1]
    batch = [s for s, label in zip(strides, live) if label in dynamic]
    other = [s for s, label in zip(strides, live) if label not in dynamic]
    return bool(batch) and (not other or min(batch) > max(other))


def checked_order(order: Any) -> str:
    """`order=` as np.einsum takes it (either case; None is 'K')."""
    found = "K" if order is None else order.upper() if isinstance(order, str) else None
    if found not in ORDERS:
        raise ValueError(f"order must be one of 'C', 'F', 'A' or 'K', got {order!r}")
    return found


def checked_casting(casting: Any) -> str:
    if not isinstance(casting, str):
        raise TypeError(f"casting must be a string, got {type(casting).__name__}")
    if casting not in CASTINGS:
        raise ValueError(f"casting must be one of {', '.join(map(repr, CASTINGS))}, got {casting!r}")
    return casting


def _requested_order(order: str, operands: Sequence[Signature]) -> str | None:
    """The order `order=` asks of a new result; None for 'K' (new_output_order decides)."""
    if order == "A":
        return "F" if all(map(_f_contiguous, operands)) else "C"
    return None if order == "K" else order


def _f_contiguous(o: Signature) -> bool:
    """Stored in Fortran order (NumPy's F_CONTIGUOUS: one-dimensional contiguous arrays too)."""
    return _has_strides(o, f_order_strides)


def _is_c_only(o: Signature) -> bool:
    """C-contiguous and not Fortran-contiguous (an array of order >= 2 stored row-major)."""
    return _stored_as(o, c_order_strides)


def _is_f_only(o: Signature) -> bool:
    """Fortran-contiguous and not C-contiguous (an array of order >= 2 stored column-major)."""
    return _stored_as(o, f_order_strides)


def _stored_as(o: Signature, strides_of: Any) -> bool:
    """Whether `o` has the strides `strides_of(shape)` on its live modes, two or more of them
    (so it is not also stored the other way)."""
    return len([n for n in o.shape if n > 1]) >= 2 and _has_strides(o, strides_of)


def _has_strides(o: Signature, strides_of: Any) -> bool:
    """Whether `o`'s live modes have the strides `strides_of(shape)`."""
    strides = byte_strides_to_elements(o.strides, o.dtype.itemsize)
    return strides is not None and _same_live(strides, strides_of(o.shape), o.shape)


def _same_live(a: Sequence[int], b: Sequence[int], shape: Sequence[int]) -> bool:
    return all(x == y for x, y, n in zip(a, b, shape) if n > 1)


def kernel_spec(a: Analysis, epilogue: Any, plain: bool = False, names: list[str] | None = None,
                knobs: Knobs | None = None) -> KernelSpec:
    """The kernel to build for an analysed contraction: planned on the representative
    layouts (the dynamic labels at REPRESENTATIVE_BATCH), so it depends on the key alone
    (and on the tuner's `knobs`, knobs.py)."""
    knobs = knobs or Knobs()
    compute, result = scalar_type(a.compute), scalar_type(a.result)
    rep = {label: REPRESENTATIVE_BATCH for label in a.dynamic}
    sizes = {label: rep.get(label, n) for label, n in a.sizes.items() if n > 1 or label in rep}
    output = a.output.representative(rep)
    if a.zero:  # nothing to sum: out := beta out, one output element per work-group
        groups = sorted(output.labels, key=output.stride_of)
        plan = Plan(groups, [Step((), 0, frozenset())], [frozenset()], 0, sizes)
        return KernelSpec([], output, plan, compute, result, epilogue == "relu", plain=plain, names=names)
    inputs = [t.representative(rep) for t in a.inputs]
    plan = None
    if a.dynamic and knobs.mapping != "groups":
        plan = lane_plan(inputs, output, sizes, a.scale, a.dynamic, a.compute.itemsize, knobs.chunk, knobs.budget,
                         knobs.ksplit)
    if plan is None:
        plan = make_plan(inputs, output, sizes, a.scale, a.dynamic, knobs.block, knobs.tile, knobs.cut,
                         knobs.kchunk)
    return KernelSpec(inputs, output, plan, compute, result, epilogue == "relu", plain=plain, names=names)


@dataclass
class Compiled:
    """A built and loaded contraction kernel: one per key (every batch size)."""

    spec: KernelSpec
    source: str
    program: Any
    kernel: Any                 # the program's kernel (tinyc.runtime.Kernel)
    scratch_per_group: int = 0  # elements of global scratch per work-group (0: none)
    knobs: Knobs | None = None  # the tuner's, if any (tuning.py)

    def groups(self, a: Analysis) -> int:
        """Work-groups a call of this analysis launches."""
        return self.spec.plan.groups_for(a.sizes)


def compile_contraction(a: Analysis, epilogue: Any, device: Any, plain: bool = False,
                        knobs: Knobs | None = None) -> Compiled:
    """Build the kernel of an analysis with tinyc.builder and load it on the device."""
    from tinyc.compiler import compile as compile_program

    spec = kernel_spec(a, epilogue, plain, knobs=knobs)
    prog = build_kernel(spec)
    source = prog.checked_source()
    schedule = {spec.name: knobs.schedule} if knobs is not None and knobs.schedule else None
    program = compile_program(source, name="<einsum>", device=device, schedule=schedule, fp_contract=True)
    return Compiled(spec, source, program, program[spec.name], scratch_layout(spec)[0], knobs)
