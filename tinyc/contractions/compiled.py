"""One contraction for fixed subscripts, shapes, strides, dtypes and device, compiled.

`analyse` turns operand signatures (kind, dtype, shape, strides) into the
kernel spec (layouts, plan, element types), checking the input with
ValueError/TypeError that name the subscript or operand. `Compiled` owns
the built program, its kernel and launcher, and runs calls: it knows which
operands need a conversion (an integer array, an unsupported layout), how
to allocate the output, and the corner cases that need no kernel (an
empty output).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tinyc.contractions import subscripts as subs
from tinyc.contractions.emit import KernelSpec, build_kernel, scratch_layout
from tinyc.contractions.layout import (
    Layout, byte_strides_to_elements, c_order_strides, f_order_strides, layout,
)
from tinyc.contractions.plan import Plan, Step, make_plan
from tinyc.ir.types import SCALAR_TYPES, ScalarType, promotable

DTYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
          np.dtype(np.complex64): "c32", np.dtype(np.complex128): "c64"}
"""NumPy dtypes of the language's floating and complex types."""
SUPPORTED = "float32, float64, complex64 or complex128"
EPILOGUES = (None, "relu")


@dataclass(frozen=True)
class Signature:
    """What a kernel depends on about one array: where it lives, dtype, shape, byte strides."""

    kind: str  # "numpy" or "usm"
    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    aligned: bool = True  # element 0 sits at a multiple of the element size


def dtype_name(dtype: Any) -> str:
    return str(np.dtype(dtype)) if dtype is not None else "?"


def compute_dtype(dtypes: Sequence[np.dtype], forced: Any) -> np.dtype:
    """The dtype the contraction computes in: NumPy's result type, or `dtype=`."""
    if forced is not None:
        try:
            chosen = np.dtype(_dtype_alias(forced))
        except TypeError:
            raise TypeError(f"unknown dtype {forced!r}; use {SUPPORTED}") from None
    else:
        for k, d in enumerate(dtypes):
            if d.kind not in "biufc":
                raise TypeError(f"operand {k} has dtype {d}, which einsum cannot compute with; "
                                f"use {SUPPORTED}")
        chosen = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    if chosen not in DTYPES:
        raise TypeError(f"tinyc.einsum computes in {SUPPORTED}, not {chosen}"
                        + (" (convert integer operands to a floating type)" if chosen.kind in "biu" else ""))
    return chosen


def _dtype_alias(d: Any) -> Any:
    """The language's spellings (f32, c32 = complex64, ...) as NumPy dtypes."""
    if isinstance(d, str) and d in SCALAR_TYPES:
        return {"f32": np.float32, "f64": np.float64, "c32": np.complex64, "c64": np.complex128}.get(d, d)
    return d


def scalar_type(dtype: np.dtype) -> ScalarType:
    return SCALAR_TYPES[DTYPES[dtype]]


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
    sizes: dict[str, int]
    scale: int                   # product of summed labels no operand holds
    empty: bool                  # the output has no elements
    zero: bool                   # a summed label has size 0: the sum is 0


def analyse(text: str, operands: Sequence[Signature], out: Signature | None, forced: Any,
            epilogue: Any) -> Analysis:
    """Check everything about a call that does not need the data; build the layouts."""
    if epilogue not in EPILOGUES:
        raise ValueError(f"unknown epilogue {epilogue!r}; use None or 'relu'")
    sub = subs.parse(text, [o.shape for o in operands])
    compute = compute_dtype([o.dtype for o in operands], forced)
    if epilogue == "relu" and compute.kind == "c":
        raise ValueError("epilogue 'relu' needs real numbers; the result is complex")
    out_shape = tuple(sub.sizes[label] for label in sub.output)
    result = compute
    if out is not None:
        if out.shape != out_shape:
            raise ValueError(f"out has shape {out.shape} but the result of '{text}' has shape {out_shape}")
        if out.dtype not in DTYPES:
            raise TypeError(f"out has dtype {out.dtype}; use {SUPPORTED}")
        if not promotable(scalar_type(compute), scalar_type(out.dtype)):
            raise TypeError(f"cannot write the {compute} result into out of dtype {out.dtype} "
                            f"(casting rule 'safe')")
        if epilogue == "relu" and out.dtype.kind == "c":
            raise ValueError("epilogue 'relu' needs real numbers; out is complex")
        result = out.dtype
    sizes = dict(sub.sizes)
    inputs, convert = [], []
    for k, (labels, o) in enumerate(zip(sub.inputs, operands)):
        needs_copy = o.dtype != compute or not o.aligned
        strides = byte_strides_to_elements(o.strides, o.dtype.itemsize) if not needs_copy else None
        found = layout(labels, o.shape, strides) if strides is not None else None
        if found is None:
            if o.kind != "numpy":
                raise ValueError(
                    f"operand {k} ({dtype_name(o.dtype)}, strides {o.strides}) cannot be read in "
                    f"place; pass a {compute} array with non-negative strides")
            needs_copy = True  # copied as a C-order array of its distinct labels (the diagonal)
            distinct = list(dict.fromkeys(labels))
            shape = [o.shape[labels.index(label)] for label in distinct]
            found = layout(distinct, shape, c_order_strides(shape))
            assert found is not None
        inputs.append(found)
        convert.append(needs_copy)
    all_f = bool(operands) and all(_is_f_only(o) for o in operands)
    out_order = "F" if all_f else "C"
    output_layout, direct = None, False
    if out is not None:
        strides = byte_strides_to_elements(out.strides, out.dtype.itemsize) if out.aligned else None
        output_layout = layout(sub.output, out.shape, strides, write=True) if strides is not None else None
        direct = output_layout is not None
    if output_layout is None:
        new_strides = (f_order_strides if out_order == "F" else c_order_strides)(out_shape)
        output_layout = layout(sub.output, out_shape, new_strides, write=True)
        assert output_layout is not None
    held = set().union(*[set(t.labels) for t in inputs]) if inputs else set()
    summed = {label for labels in sub.inputs for label in labels} - set(sub.output)
    scale = math.prod(sizes[label] for label in summed if label not in held and sizes[label] > 1)
    empty = math.prod(out_shape) == 0
    zero = not empty and any(sizes[label] == 0 for label in summed)
    return Analysis(sub, compute, result, inputs, convert, output_layout, out_shape, out_order,
                    direct, sizes, scale, empty, zero)


def materialize(x: np.ndarray, labels: Sequence[str], dtype: np.dtype) -> np.ndarray:
    """A C-order copy of `x` in `dtype` with one dimension per distinct label (the diagonal
    of repeated labels): the operand as analyse() laid it out for a copied operand."""
    distinct = list(dict.fromkeys(labels))
    if len(distinct) < len(labels):
        strides = [sum(s for l2, s in zip(labels, x.strides) if l2 == label) for label in distinct]
        shape = [x.shape[labels.index(label)] for label in distinct]
        x = np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)
    return np.array(x, dtype=dtype, order="C", copy=True)


def _is_f_only(o: Signature) -> bool:
    """Fortran-contiguous and not C-contiguous (an array of order >= 2 stored column-major)."""
    if len([n for n in o.shape if n > 1]) < 2:
        return False
    strides = byte_strides_to_elements(o.strides, o.dtype.itemsize)
    return strides is not None and _same_live(strides, f_order_strides(o.shape), o.shape)


def _same_live(a: Sequence[int], b: Sequence[int], shape: Sequence[int]) -> bool:
    return all(x == y for x, y, n in zip(a, b, shape) if n > 1)


def kernel_spec(a: Analysis, epilogue: Any, plain: bool = False) -> KernelSpec:
    """The kernel to build for an analysed contraction."""
    compute, result = scalar_type(a.compute), scalar_type(a.result)
    sizes = {label: n for label, n in a.sizes.items() if n > 1}
    if a.zero:  # nothing to sum: out := beta out, one output element per work-group
        groups = sorted(a.output.labels, key=a.output.stride_of)
        plan = Plan(groups, [Step((), 0, frozenset())], [frozenset()], 0, sizes)
        return KernelSpec([], a.output, plan, compute, result, epilogue == "relu", plain=plain)
    plan = make_plan(a.inputs, a.output, sizes, a.scale)
    return KernelSpec(a.inputs, a.output, plan, compute, result, epilogue == "relu", plain=plain)


@dataclass
class Compiled:
    """A built and loaded contraction kernel and what a call needs around it."""

    analysis: Analysis
    spec: KernelSpec
    source: str
    program: Any
    launcher: Any
    scratch_elements: int = 0  # global scratch of the whole batch, allocated per call

    @property
    def batch(self) -> int:
        """Work-groups per launch."""
        return self.spec.plan.n_groups


def compile_contraction(a: Analysis, epilogue: Any, device: Any, plain: bool = False) -> Compiled:
    """Build the kernel of an analysis with tinyc.builder and load it on the device."""
    import tinyc
    from tinyc.contractions.launch import Launcher

    if a.empty:  # nothing to compute: no kernel
        return Compiled(a, None, "; the result has no elements: no kernel\n", None, None)  # type: ignore[arg-type]
    spec = kernel_spec(a, epilogue, plain)
    prog = build_kernel(spec)
    source = prog.checked_source()
    program = tinyc.compile(source, name="<einsum>", device=device)
    kernel = program[spec.name]
    scratch = scratch_layout(spec)[0]
    launcher = Launcher(kernel, spec.compute, spec.result, len(spec.inputs) + 1 + bool(scratch))
    return Compiled(a, spec, source, program, launcher, scratch * spec.plan.n_groups)
