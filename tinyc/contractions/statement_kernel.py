"""`tinyc.contract([...statements...], shapes=...)`: several statements, one kernel.

    c = tinyc.contract(["T[k,q,e] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e]",
                        "Q2[k,q,e] = Q[k,q,e] + dt * T[k,q,e]"],
                       shapes={"K": (3, 56, 56), "Q": (56, 9, None),
                               "A": (3, 9, 9, None), "Q2": (56, 9, None)}, dtype="f64")
    c(K=K, Q=Q, A=A, Q2=Q2, dt=0.01)     # arrays and scalars by name; None: the batch

The batch (the None modes) runs over work-groups, one entry each (or a
block of small entries each), and is a `?` in the kernel, so one compile
serves every batch size. A kernel is
compiled for one layout of the arrays (statement_layout.py); arrays of
another layout or dtype (with `dtype=None`) compile a variant of their own
on first use, kept with the object. Arrays are passed as they are (a
transposed view where memory order differs from the declared one), NumPy
or USM (dpnp); outputs not passed are allocated and returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tinyc.contractions.compiled import DTYPES, dtype_alias
from tinyc.contractions.statement_arrays import ArrayInfo, check_overlaps, describe, scalar_value, usm_queue
from tinyc.contractions.statement_check import BATCH, Checked, check, check_shapes
from tinyc.contractions.statement_emit import KERNEL_NAME, build_statements, choose_block, scratch_elements
from tinyc.contractions.statement_layout import ArgLayout, default_layout, derive
from tinyc.contractions.statements import parse
from tinyc.runtime import results
from tinyc.runtime.devices import compile_target, is_split

def statement_dtype(dtype: Any) -> np.dtype | None:
    """`dtype=` as a NumPy dtype of the language's types (None stays None): einsum's, but
    for unsigned ones (statements read their arrays as given)."""
    if dtype is None:
        return None
    try:
        found = np.dtype(dtype_alias(dtype))
    except TypeError:
        found = None
    if found not in DTYPES:
        raise TypeError(f"dtype={dtype!r}: statements compute in f32, f64, c32, c64, f16 or i8-i64 "
                        f"(float32, float64, complex64, complex128, float16, int8-int64)")
    return found


@dataclass
class Variant:
    """The kernel compiled for one dtype and one layout of every tensor argument."""

    dtype: np.dtype
    layouts: dict[str, ArgLayout]
    source: str
    program: Any
    kernel: Any
    scratch: int = 0   # elements of global scratch per work-group


def generate(statements: Sequence[str], shapes: Any, dtype: Any = "f64") -> str:
    """The program `contract(statements, shapes=shapes, dtype=dtype).source` shows, made
    without a device (for documentation and printing)."""
    parsed, checked_shapes = parse(statements), check_shapes(shapes)
    checked = check(parsed, checked_shapes)
    layouts = {name: default_layout(checked_shapes[name]) for name in checked.arguments}
    return _source(checked, checked_shapes, layouts, statement_dtype(dtype) or np.dtype(np.float64))[0]


def _source(checked: Checked, shapes: dict, layouts: dict[str, ArgLayout], dtype: np.dtype,
            block: int | None = None) -> tuple[str, int]:
    """The kernel's text after a header (the statements, the shapes, where the temporaries
    live) and its elements of global scratch per work-group (0: none)."""
    from tinyc.builder import scalar

    block = choose_block(checked) if block is None else block
    element = scalar(dtype)
    if element.is_int:
        _check_integral(checked, dtype)
    scratch = scratch_elements(checked, layouts, element, block)
    lines = [f"; {info.statement.text}" for info in checked.statements]
    shown = ", ".join(f"{name}=({', '.join('None' if n is BATCH else str(n) for n in shape)})"
                      for name, shape in shapes.items())
    each = "one entry" if block == 1 else f"{block} entries"
    lines.append(f"; shapes: {shown} ({dtype}); None: the batch, {each} per work-group")
    if checked.temporaries:
        where = "local memory" if not scratch else f"global scratch ({scratch} elements per work-group)"
        lines.append(f"; temporaries in {where}: {', '.join(checked.temporaries)}")
    program = build_statements(checked, layouts, element, block=block, scratch=scratch)
    return "\n".join(lines) + "\n" + program.checked_source(), scratch


def _check_integral(checked: Checked, dtype: np.dtype) -> None:
    """Integer kernels multiply by integers only: no fractional number, no division."""
    for info in checked.statements:
        for term in info.statement.terms:
            if not float(term.number).is_integer():
                raise TypeError(f"statement {info.statement.number}: the factor {term.number:g} is not an "
                                f"integer, but the kernel computes in {dtype}")
            divided = next((x.name for x in term.scalars if x.inverse), None)
            if divided is not None:
                raise TypeError(f"statement {info.statement.number}: divides by {divided}, but the kernel "
                                f"computes in {dtype} (integers); use a floating dtype")


@dataclass
class Bound:
    """A checked call: the kernel, its positional arguments (tensors in memory order, then
    scalars), the work-groups to launch, and the written arrays by name."""

    kernel: Any
    args: list
    groups: int
    written: dict[str, Any]


class Statements:
    """Statements compiled into one kernel; call it with arrays and scalars by name."""

    def __init__(self, statements: Sequence[str], shapes: Any, dtype: Any = None, device: Any = None,
                 tune: bool = False, check_bounds: bool = False):
        self.statements = parse(statements)
        self.shapes = check_shapes(shapes)
        self.checked: Checked = check(self.statements, self.shapes)
        self.dtype = statement_dtype(dtype)
        self.device, self.tune, self.check_bounds = device, tune, check_bounds
        self._variants: dict[tuple, Variant] = {}
        self._seen: dict[tuple, _Seen] = {}   # call signatures checked before (NumPy arrays)
        # batch entries per work-group; one when the batch is split over devices (a slice of
        # the batch is then a slice of the work-groups)
        self.block = 1 if is_split(device) else choose_block(self.checked)
        first = {name: default_layout(self.shapes[name]) for name in self.checked.arguments}
        self._main = self._variant(self.dtype or np.dtype(np.float64), first)

    # -- what was made ---------------------------------------------------------------------------
    @property
    def source(self) -> str:
        """The generated tensor-language program (for the default layout and dtype)."""
        return self._main.source

    @property
    def program(self) -> Any:
        """The compiled `tinyc.Program`; its kernel is `program["contract"]`."""
        return self._main.program

    @property
    def kernel(self) -> Any:
        """The compiled `tinyc.Kernel` (for the default layout and dtype)."""
        return self._main.kernel

    @property
    def arguments(self) -> list[str]:
        """The kernel's parameters in order: tensors (as in shapes=), then scalars."""
        return self.checked.arguments + self.checked.scalars

    @property
    def compiled_variants(self) -> int:
        """Kernels compiled so far (one per dtype and layout of the arrays seen)."""
        return len(self._variants)

    @property
    def temporaries(self) -> list[str]:
        return self.checked.temporaries

    @property
    def outputs(self) -> list[str]:
        return self.checked.outputs

    def __repr__(self) -> str:
        return f"<tinyc.contractions.Statements {len(self.statements)} statements ({', '.join(self.arguments)})>"

    # -- compiling -------------------------------------------------------------------------------
    def _variant(self, dtype: np.dtype, layouts: dict[str, ArgLayout]) -> Variant:
        key = (dtype.str, tuple(layouts[name] for name in self.checked.arguments))
        found = self._variants.get(key)
        if found is not None:
            return found
        from tinyc.compiler import compile as compile_program

        source, scratch = _source(self.checked, self.shapes, layouts, dtype, self.block)
        program = compile_program(source, name="<contract>", device=compile_target(self.device), tune=self.tune)
        found = Variant(dtype, dict(layouts), source, program, program[KERNEL_NAME], scratch)
        self._variants[key] = found
        return found

    # -- calling ---------------------------------------------------------------------------------
    def __call__(self, **arguments: Any) -> dict[str, Any]:
        """Run the kernel over the batch; returns the written tensor arguments by name
        (those not passed are allocated: each assigned with `=` before it is read)."""
        bound = self.bind(**arguments)
        if bound.groups:
            options = {"check_bounds": True} if self.check_bounds else {}
            if is_split(self.device):
                options["device"] = self.device
            bound.kernel(*bound.args, batch=bound.groups, **options)
        return bound.written

    def bind(self, **arguments: Any) -> "Bound":
        """Everything a call checks and prepares, without launching: the kernel for these
        arrays' layouts and dtype, its positional arguments and the number of work-groups.
        For launching it elsewhere, e.g. over MPI ranks (docs/contractions.md):
        `b = c.bind(...); tinyc.distributed.run(b.kernel, *b.args, batch=b.groups, comm=comm)`."""
        key = self._signature(arguments)
        seen = self._seen.get(key) if key is not None else None
        if seen is not None:    # NumPy arrays as in an earlier call: only the addresses are new
            return seen.bind(arguments, self.checked)
        checked = self.checked
        self._check_names(arguments)
        tensors = {name: describe(arguments[name], name) for name in checked.arguments if name in arguments}
        dtype = self._call_dtype(tensors)
        batch = self._batch_size(tensors)
        queue = next((usm_queue(x.array) for x in tensors.values() if x.usm), None)
        for name in checked.arguments:
            if name not in tensors:
                tensors[name] = describe(self._new_output(name, dtype, batch, queue), name)
        scalars = [scalar_value(arguments[name], name, dtype) for name in checked.scalars]
        check_overlaps(tensors, checked.outputs)
        written = {name: tensors[name].array for name in checked.outputs}
        if batch == 0:
            return Bound(self._main.kernel, [], 0, written)
        layouts, passed, copied = {}, {}, False
        for name in checked.arguments:
            layouts[name], passed[name], copy = self._layout(name, tensors[name], dtype)
            copied = copied or copy
        variant = self._variant(dtype, layouts)
        groups = -(-batch // self.block)
        args = [passed[name] for name in checked.arguments] + scalars
        if variant.scratch:
            args.append(results.empty((variant.scratch, groups), dtype, "F"))
        if key is not None and len(tensors) == len(arguments) - len(scalars) and not copied:
            if len(self._seen) >= SEEN:
                self._seen.pop(next(iter(self._seen)))
            self._seen[key] = _Seen(variant, [layouts[n].order for n in checked.arguments], dtype, groups)
        return Bound(variant.kernel, args, groups, written)

    def _signature(self, arguments: dict[str, Any]) -> tuple | None:
        """The call's names, and dtype, shape and strides of each array when all are NumPy
        arrays (None otherwise): what decides the kernel and the checks of shapes and layouts."""
        try:
            arrays = tuple((x.dtype, x.shape, x.strides) if type(x) is np.ndarray else None
                           for x in (arguments[name] for name in self.checked.arguments))
        except KeyError:
            return None
        return None if None in arrays else (arrays, tuple(arguments))

    def _check_names(self, arguments: dict[str, Any]) -> None:
        checked = self.checked
        for name in arguments:
            if name in checked.tensors and not checked.tensors[name].argument:
                raise TypeError(f"{name} is a temporary of the kernel (statement "
                                f"{checked.tensors[name].assigned_in} assigns it and it is not in shapes=); "
                                f"it is not an argument")
            if name not in checked.tensors and name not in checked.scalars:
                raise TypeError(f"unexpected argument {name}; the kernel takes {', '.join(self.arguments)}")
        missing = [n for n in checked.scalars if n not in arguments]
        missing += [n for n in checked.arguments if n not in arguments and checked.tensors[n].read]
        missing += [n for n in checked.arguments if n not in arguments and not self._assigned_first(n)]
        missing = list(dict.fromkeys(missing))
        if missing:
            raise TypeError(f"missing argument{'s' * (len(missing) > 1)} {', '.join(missing)}")

    def _assigned_first(self, name: str) -> bool:
        """Is the first statement writing `name` an `=` (so it need not be passed)?"""
        first = next((i.statement for i in self.checked.statements if i.statement.target.name == name), None)
        return first is not None and not first.accumulate and not any(a.name == name for t in first.terms for a in t.tensors)

    def _call_dtype(self, tensors: dict[str, ArrayInfo]) -> np.dtype:
        dtypes = {name: x.dtype for name, x in tensors.items()}
        if self.dtype is not None:
            for name, d in dtypes.items():
                if d != self.dtype:
                    if d.newbyteorder("=") == self.dtype:   # (the arrays are read in place)
                        raise TypeError(f"{name} is {self.dtype} in the other byte order ({d.str}); pass it "
                                        f"in the machine's order ({name}.astype('={d.kind}{d.itemsize}'))")
                    raise TypeError(f"{name} has dtype {d}, but the kernel is made for {self.dtype}; "
                                    f"pass {self.dtype} arrays")
            return self.dtype
        if len(set(dtypes.values())) > 1:
            shown = ", ".join(f"{name} is {d}" for name, d in dtypes.items())
            raise TypeError(f"the arrays' dtypes differ ({shown}); pass arrays of one dtype")
        found = next(iter(dtypes.values()), np.dtype(np.float64))
        try:
            return statement_dtype(found)  # type: ignore[return-value]
        except TypeError:
            raise TypeError(f"the arrays have dtype {found}; statements compute in float32, float64, "
                            f"complex64, complex128, float16 or int8-int64") from None

    def _batch_size(self, tensors: dict[str, ArrayInfo]) -> int:
        found: tuple[str, int] | None = None
        for name, x in tensors.items():
            declared = self.shapes[name]
            shape = x.shape
            if len(shape) != len(declared) or any(n is not BATCH and n != m for n, m in zip(declared, shape)):
                text = ", ".join("None" if n is BATCH else str(n) for n in declared)
                raise ValueError(f"{name} has shape {shape}, but shapes= gives ({text})"
                                 + (" (None: any batch size)" if BATCH in declared else ""))
            mode = self.checked.tensors[name].batch_mode
            if mode is None:
                continue
            if found is not None and shape[mode] != found[1]:
                raise ValueError(f"batch sizes differ: {found[0]} has {found[1]} entries along its None mode, "
                                 f"{name} has {shape[mode]}")
            found = found or (name, shape[mode])
        if found is None:
            return 1 if not self.checked.batched else _missing_batch(self.checked)
        return found[1]

    def _new_output(self, name: str, dtype: np.dtype, batch: int, queue: Any) -> Any:
        """An output the call did not pass: NumPy, or dpnp on the queue of USM arguments."""
        declared = self.shapes[name]
        shape = tuple(batch if n is BATCH else n for n in declared)
        order = "F" if declared and declared[-1] is BATCH else "C"
        if queue is None:
            return results.empty(shape, dtype, order)
        import dpnp

        return dpnp.empty(shape, dtype=dtype, order=order, sycl_queue=queue)

    def _layout(self, name: str, x: ArrayInfo, dtype: np.dtype) -> tuple[ArgLayout, Any, bool]:
        """The layout an array is passed in (one already compiled if it fits), the array as
        the kernel takes it (its modes in memory order), and whether that is a copy."""
        declared = self.shapes[name]
        strides = x.strides
        layout = None
        if strides is not None:
            known = [v.layouts[name] for v in self._variants.values() if v.dtype == dtype]
            layout = next((k for k in known if k.fits(x.shape, strides)), None) or derive(declared, x.shape, strides)
        if layout is not None:
            return layout, x.permuted(layout.order), False
        if name in self.checked.outputs or x.usm:   # negative or misaligned strides: an input is copied
            raise ValueError(f"{name} has strides {x.byte_strides} (bytes) that no memref can take "
                             f"(negative, overlapping or misaligned); pass a contiguous array")
        layout = default_layout(declared)
        copy = np.array(x.array, order="F" if declared and declared[-1] is BATCH else "C")
        return layout, describe(copy, name).permuted(layout.order), True


SEEN = 64
"""Call signatures remembered per Statements object (oldest dropped first)."""


@dataclass
class _Seen:
    """A call signature checked before: its kernel, each array's mode order, dtype, work-groups."""

    variant: Variant
    orders: list[tuple[int, ...]]
    dtype: np.dtype
    groups: int

    def bind(self, arguments: dict[str, Any], checked: Checked) -> Bound:
        """The call's arrays as the kernel takes them; the shapes and layouts are as before,
        the memory may not be: outputs may still overlap other arguments."""
        arrays = [arguments[name] for name in checked.arguments]
        for name in checked.outputs:
            out = arguments[name]
            if any(other != name and np.may_share_memory(out, x) for other, x in zip(checked.arguments, arrays)):
                check_overlaps({n: describe(arguments[n], n) for n in checked.arguments}, checked.outputs)
        args = [x if order == tuple(range(x.ndim)) else x.transpose(order) for x, order in zip(arrays, self.orders)]
        args += [scalar_value(arguments[name], name, self.dtype) for name in checked.scalars]
        if self.variant.scratch:
            args.append(np.empty((self.variant.scratch, self.groups), self.dtype, order="F"))
        return Bound(self.variant.kernel, args, self.groups, {name: arguments[name] for name in checked.outputs})


def _missing_batch(checked: Checked) -> int:
    batched = [n for n in checked.arguments if checked.tensors[n].batch_mode is not None]
    raise TypeError(f"missing argument {batched[0]} (it sets the batch size)")
