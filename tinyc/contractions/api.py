"""`tinyc.einsum` and `tinyc.contract`: NumPy's einsum as one tinyc kernel.

    C = tinyc.einsum("bij,bjk->bik", A, B)            # = np.einsum, as a NumPy array
    tinyc.einsum("bij,bjk->bik", A, B, out=C, alpha=2, beta=1)   # C := 2 A·B + C in place
    c = tinyc.contract("bij,bjk->bik", (1000, 8, 8), (1000, 8, 8), dtype="f32")
    print(c.source); c(A, B)

Two caches: kernels by what they depend on (`Analysis.key`: subscripts'
layouts with the batch labels as `?` modes, dtypes, device, epilogue), so
one compile serves every batch size; and calls by their exact signatures
(shapes and strides too), so a repeated call pays a dictionary lookup,
the new output and one launch (running.py). A single-operand permutation or
diagonal returns a view of the operand, as np.einsum does.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from tinyc.contractions import subscripts as subs
from tinyc.contractions.compiled import (
    REPRESENTATIVE_BATCH, Analysis, Compiled, Signature, analyse, compile_contraction, compute_dtype,
    checked_casting, checked_order, dtype_alias, hashable_device, materialize,
)
from tinyc.contractions.chunked import ChunkedCall, clear_chunk_sums, long_label, plan_chunks, run_chunked
from tinyc.contractions.layout import c_order_strides
from tinyc.contractions.split import launch_split
from tinyc.contractions.running import (
    Call, check_scalar, kernel_arguments, queue_of as _queue_of, run, run_plain, signature as _signature,
    usm_interface as _usm_interface,
)
from tinyc.runtime.devices import compile_target, is_split

CACHE_SIZE = 512
_kernels: "OrderedDict[tuple, Compiled]" = OrderedDict()
_calls: "OrderedDict[tuple, Call]" = OrderedDict()
_transposes: dict[tuple, tuple[int, ...]] = {}   # (subscripts, ndim, dtype) -> axes of a view result
_diagonals: dict[tuple, tuple] = {}   # (subscripts, shape, strides, dtype) -> (shape, strides) of a diagonal
_plain: "OrderedDict[tuple, Call]" = OrderedDict()   # plain NumPy calls by (subscripts, dtype, shape, strides...)
_chunkings: "OrderedDict[tuple, Any]" = OrderedDict()   # calls cut into chunks (chunked.py), or None
_UNSEEN = object()
_cache_lock = threading.Lock()
_ONE = 1
CONTRACTION_CASTING = "same_kind"
"""A contraction made with dtype= converts its calls' operands into it within a kind (f64
arrays into an f32 contraction), never complex into real: its dtype is the one it was
declared with. Without dtype= its calls are einsum's ('safe')."""


def cache_info() -> dict[str, int]:
    """How many contraction kernels are compiled and cached in this process."""
    return {"entries": len(_kernels), "calls": len(_calls), "capacity": CACHE_SIZE}


def clear_cache() -> None:
    with _cache_lock:
        _kernels.clear()
        _calls.clear()
        _transposes.clear()
        _diagonals.clear()
        _plain.clear()
        _chunkings.clear()
        clear_chunk_sums()


# -- operands -------------------------------------------------------------------
def _as_operand(x: Any, k: int) -> Any:
    """NumPy and USM arrays as they are; anything else through np.asarray."""
    if isinstance(x, np.ndarray) or _usm_interface(x) is not None:
        return x
    try:
        return np.asarray(x)
    except Exception as exc:
        raise TypeError(f"operand {k}: cannot use {type(x).__name__} as an array ({exc})") from None


# -- the caches -------------------------------------------------------------------
def _remember(cache: OrderedDict, key: tuple, value: Any) -> Any:
    with _cache_lock:
        cache[key] = value
        while len(cache) > CACHE_SIZE:
            cache.popitem(last=False)
    return value


def _kernel(a: Analysis, device: Any, epilogue: Any, plain: bool, tune: bool = False) -> Compiled:
    """The compiled kernel of an analysis: one per key, whatever the batch size, with the
    knobs tuned for it on this device (tuning.py; `tune` tunes on a miss)."""
    from tinyc.contractions.tuning import knobs_for

    key = (a.key(epilogue, plain), hashable_device(device))
    found = _kernels.get(key)
    if found is not None and (not tune or found.knobs is not None):
        return found
    knobs = knobs_for(a, epilogue, device, tune)
    return _remember(_kernels, key, compile_contraction(a, epilogue, device, plain, knobs))


def _call(text: str, sigs: tuple, out_sig: Any, dtype: Any, device: Any, epilogue: Any, plain: bool,
          viewable: bool = False, tune: bool = False, order: str = "K", casting: str = "safe") -> Call:
    """The cached call; `plain` (alpha = 1, beta = 0) compiles those as constants: no
    scaling, and the output is never read — the kernel of a plain einsum call."""
    key = (text, sigs, out_sig, str(dtype) if dtype is not None else None, hashable_device(device), epilogue,
           plain, viewable, order, casting)
    found = _calls.get(key)
    if found is not None and (not tune or found.compiled is None or found.compiled.knobs is not None):
        return found
    view = _view_of(subs.parse(text, [sigs[0].shape]), sigs[0]) \
        if viewable and len(sigs) == 1 and sigs[0].kind == "numpy" else None
    if view is not None:
        # np.einsum returns a permutation or diagonal of one array as a view of it before it
        # looks at dtype= and casting= (the view keeps the array's own dtype, byte order too)
        a = analyse(text, sigs, None, None, None)
        checked_order(order)
        checked_casting(casting)
        if dtype is not None:
            compute_dtype([], dtype)
        return _remember(_calls, key, Call(a, None, view=view))
    a = analyse(text, sigs, out_sig, dtype, epilogue, order, casting)
    if a.empty:
        return _remember(_calls, key, Call(a, None))
    compiled = _kernel(a, device, epilogue, plain and a.scale == 1, tune)
    call = _remember(_calls, key, Call(a, compiled, compiled.groups(a)))
    if (viewable and dtype is None and casting == "safe" and device is None and not tune and order == "K"
            and compiled.spec.inputs and a.scale == 1 and not compiled.scratch_per_group and not any(a.convert)
            and all(sig.kind == "numpy" for sig in sigs)):
        _remember(_plain, (text, *[(sig.dtype, sig.shape, sig.strides) for sig in sigs]), call)
    return call


def _view_of(sub: subs.Subscripts, sig: Signature) -> tuple | None:
    """(shape, byte strides, transpose axes or None) when the result is a view of the operand:
    every label kept (a permutation, or a diagonal); in the operand's own dtype, as np.einsum
    returns it. From the subscripts alone: the call's analysis runs only for a view."""
    labels, output = sub.inputs[0], sub.output
    if set(labels) != set(output):
        return None
    if len(set(labels)) == len(labels):
        return None, None, tuple(labels.index(label) for label in output)
    strides = tuple(sum(s for l2, s in zip(labels, sig.strides) if l2 == label) for label in output)
    return tuple(sub.sizes[label] for label in output), strides, None


# -- running ----------------------------------------------------------------------
def _make_view(x: np.ndarray, view: tuple, text: str) -> np.ndarray:
    shape, strides, axes = view
    if x.ndim == 0:
        return x[()]   # a NumPy scalar, as np.einsum returns a 0-d result
    if axes is not None:
        if len(_transposes) < CACHE_SIZE:
            _transposes[(text, x.ndim, x.dtype)] = axes
        return x.transpose(axes)
    if type(x) is np.ndarray and len(_diagonals) < CACHE_SIZE:
        _diagonals[(text, x.shape, x.strides, x.dtype)] = (shape, strides)
    return _diagonal(x, shape, strides)


def _diagonal(x: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """The view of a diagonal: from x's own buffer when x is C-contiguous (1 µs; its base
    is x, as np.einsum's), else through as_strided (7 µs)."""
    if x.flags.c_contiguous:
        return np.ndarray(shape, x.dtype, x, 0, strides)
    return np.lib.stride_tricks.as_strided(x, shape, strides)


def _run(call: Call, arrays: list, out: Any, alpha: Any, beta: Any, check_bounds: bool = False,
         devices: Any = None, options: tuple = ()) -> Any:
    """A call's view, or its launch (split over `devices`, several, if given: split.py)."""
    if call.view is not None:
        return _make_view(arrays[0], call.view, call.analysis.subscripts.text)
    def split(inputs: list, target: Any, checked_alpha: Any, beta_used: Any) -> None:
        launch_split(call.analysis, inputs, target, checked_alpha, beta_used, devices,
                     lambda ins, part: _slice_call(call, ins, part, alpha, beta_used, options))

    return run(call, arrays, out, alpha, beta, check_bounds, split if devices is not None else None)


def _slice_call(whole: Call, inputs: list, target: Any, alpha: Any, beta: Any, options: tuple) -> Call:
    """The cached call of one device's slice: the whole call's contraction on views (an
    output given, so alpha = 1 and beta = 0 still compile as constants)."""
    dtype, device, epilogue, tune, casting = options
    plain = _is_one(alpha) and _is_zero(beta)
    return _call(whole.analysis.subscripts.text, tuple(_signature(x) for x in inputs), _signature(target),
                 dtype, device, epilogue, plain, False, tune, "K", casting)


def _prepare(subscripts: Any, operands: Sequence[Any]) -> tuple[str, list]:
    if isinstance(subscripts, str):
        return subscripts, [_as_operand(x, k) for k, x in enumerate(operands)]
    text, ops = subs.from_sublists([subscripts, *operands])
    return text, [_as_operand(x, k) for k, x in enumerate(ops)]


def einsum(subscripts: Any, *operands: Any, out: Any = None, alpha: Any = 1, beta: Any = 0,
           device: Any = None, tune: bool = False, check_bounds: bool = False, epilogue: str | None = None,
           dtype: Any = None, optimize: Any = True, order: str = "K", casting: str = "safe") -> Any:
    """np.einsum on a tinyc kernel: `out = alpha·einsum(...) + beta·out` (with `out=`).

    `epilogue="relu"` applies max(·, 0) to the result inside the kernel; `dtype=`,
    `order=` and `casting=` are NumPy's (the computation's type; the layout of a new
    result; which conversions of the operands and into `out` are allowed: a narrower
    `out` takes the result converted once at the end); `optimize` is accepted for NumPy
    compatibility (tinyc always chooses the order by flop count); `tune=True`
    tunes the kernel on first use (cached per device, like `tinyc.compile`).
    `device=` is a filter string, a device or queue, or several (a list, a
    `tinyc.Devices`, sub-devices): the batch is then split over them (split.py).
    `check_bounds=True` runs the bounds-checked kernel (tinyc.BoundsError
    instead of an access out of bounds; on one device). A permutation or
    diagonal of one NumPy operand is returned as a view, as np.einsum returns it (whatever
    `dtype=`, `order=` and `casting=` say, as in NumPy)."""
    if (out is None and alpha is _ONE and epilogue is None and dtype is None and device is None and not tune
            and not check_bounds and type(subscripts) is str and order == "K" and casting == "safe"):
        if len(operands) == 1:
            x = operands[0]   # a permutation seen before: the view straight away (np.einsum's speed)
            if type(x) is np.ndarray:
                axes = _transposes.get((subscripts, x.ndim, x.dtype))
                if axes is not None:
                    return x.transpose(axes)
                diagonal = _diagonals.get((subscripts, x.shape, x.strides, x.dtype))
                if diagonal is not None:
                    return _diagonal(x, *diagonal)
        found = _plain_call(subscripts, operands)
        if found is not None:
            return found
    return _einsum(subscripts, operands, out, alpha, beta, device, tune, check_bounds, epilogue, dtype,
                   order, casting, True)


def _einsum(subscripts: Any, operands: tuple, out: Any, alpha: Any, beta: Any, device: Any, tune: bool,
            check_bounds: bool, epilogue: str | None, dtype: Any, order: str, casting: str,
            views_of_any_dtype: bool) -> Any:
    """einsum's checked path; `views_of_any_dtype` False (a contraction's calls with its
    `dtype=`): a permutation is converted into that dtype rather than viewed."""
    text, arrays = _prepare(subscripts, operands)
    if out is not None:
        out = _as_out(out)
    if device is None:
        device = next((_queue_of(x) for x in arrays + ([out] if out is not None else [])
                       if _usm_interface(x) is not None), None)
    sigs = tuple(_signature(x) for x in arrays)
    plain = _is_one(alpha) and (out is None or _is_zero(beta))
    viewable = plain and out is None and epilogue is None and (dtype is None or views_of_any_dtype)
    target = compile_target(device)
    if not is_split(device):
        cut = _chunking(text, sigs, out, dtype, target, epilogue, order, casting)
        if cut is not None:
            def partial_call(part_text: str, parts: list, into: Any) -> Call:
                return _call(part_text, tuple(_signature(x) for x in parts), _signature(into), dtype, target,
                             None, True, False, tune, "K", casting)
            return run_chunked(cut, arrays, out, alpha, beta, target, check_bounds, partial_call)
    call = _call(text, sigs, _signature(out) if out is not None else None, dtype, target, epilogue, plain,
                 viewable, tune, order, casting)
    devices = device if is_split(device) else None
    return _run(call, arrays, out, alpha, beta, check_bounds, devices, (dtype, target, epilogue, tune, casting))


def _chunking(text: str, sigs: tuple, out: Any, dtype: Any, target: Any, epilogue: Any, order: str,
              casting: str) -> ChunkedCall | None:
    """The cached state of a call whose long summed label runs as chunks (chunked.py), or
    None; decided once per signature."""
    out_sig = _signature(out) if out is not None else None
    key = (text, sigs, out_sig, str(dtype) if dtype is not None else None, hashable_device(target), epilogue,
           order, casting)
    found = _chunkings.get(key, _UNSEEN)
    if found is _UNSEEN:
        found = None
        if long_label(subs.parse(text, [sig.shape for sig in sigs]), [sig.shape for sig in sigs]) is not None:
            a = analyse(text, sigs, out_sig, dtype, epilogue, order, casting)   # (never a view's call)
            cut = plan_chunks(a, sigs, out, epilogue)
            found = ChunkedCall(a, cut) if cut is not None else None
        _remember(_chunkings, key, found)
    return found


def _plain_call(subscripts: Any, operands: tuple) -> Any:
    """A plain call (NumPy arrays in, a new array out) seen before, by its exact signature:
    the output, the addresses and the launch (running.run_plain); None if not seen."""
    try:
        key = (subscripts, *[(x.dtype, x.shape, x.strides) for x in operands if type(x) is np.ndarray])
    except TypeError:
        return None
    call = _plain.get(key)
    if call is None or len(key) != len(operands) + 1:
        return None
    return run_plain(call, operands)


def _is_one(x: Any) -> bool:
    return type(x) in (int, float) and x == 1 and not isinstance(x, bool)


def _is_zero(x: Any) -> bool:
    return type(x) in (int, float) and x == 0 and not isinstance(x, bool)


def _as_out(out: Any) -> Any:
    if isinstance(out, np.ndarray) or _usm_interface(out) is not None:
        return out
    raise TypeError(f"out must be a NumPy or USM array, got {type(out).__name__}")


class Contraction:
    """A contraction compiled for given subscripts and operand shapes (and dtype, device).

    `source` is the generated tensor-language program, `program` the compiled
    `tinyc.Program`, `path` the steps it takes; calling it runs the kernel like
    `tinyc.einsum`. The batch labels are `?` modes of the kernel: operands of
    another batch size run on the same kernel (a size given as None in the
    shapes is such a batch mode). Operands of another dtype or layout get their
    own cached kernel, and so does a call with alpha = 1 and beta = 0, which has
    them as constants. `device=` as for `tinyc.einsum` (several devices split
    the batch); `check_bounds=True` runs every call bounds-checked."""

    def __init__(self, subscripts: Any, shapes_or_arrays: Sequence[Any], dtype: Any = None,
                 device: Any = None, epilogue: str | None = None, tune: bool = False,
                 check_bounds: bool = False):
        if not isinstance(subscripts, str):
            raise TypeError(f"subscripts must be a string, got {type(subscripts).__name__}")
        self.subscripts = subscripts
        self.device = device
        self.epilogue = epilogue
        self.dtype = dtype
        self.tune = tune
        self.check_bounds = check_bounds
        sigs = []
        for k, x in enumerate(shapes_or_arrays):
            if isinstance(x, (tuple, list)) and all(n is None or isinstance(n, (int, np.integer)) for n in x):
                d = compute_dtype([], dtype if dtype is not None else np.float32)
                shape = tuple(REPRESENTATIVE_BATCH if n is None else int(n) for n in x)
                if any(n < 0 for n in shape):
                    raise ValueError(f"operand {k}: negative size in shape {shape}")
                sigs.append(Signature("numpy", d, shape, tuple(d.itemsize * s for s in c_order_strides(shape))))
            elif isinstance(x, (int, np.integer)) and not isinstance(x, bool):
                d = compute_dtype([], dtype if dtype is not None else np.float32)
                sigs.append(Signature("numpy", d, (int(x),), (d.itemsize,)))
            else:
                x = _as_operand(x, k)
                sigs.append(_signature(x))
                if device is None and _usm_interface(x) is not None:
                    self.device = device = _queue_of(x)
        self.shapes = [s.shape for s in sigs]
        self._casting = "safe" if dtype is None else CONTRACTION_CASTING   # (safe: einsum's fast path)
        self._main = _call(subscripts, tuple(sigs), None, dtype, compile_target(device), epilogue, False, False,
                           tune, "K", self._casting)
        self._batch = frozenset(self._main.analysis.batch_labels())

    @property
    def source(self) -> str:
        """The generated tensor-language program (`tinyc check` accepts it)."""
        c = self._main.compiled
        return c.source if c is not None else "; the result has no elements: no kernel\n"

    @property
    def program(self) -> Any:
        """The compiled `tinyc.Program` (its kernel is `program["einsum"]`)."""
        c = self._main.compiled
        return c.program if c is not None else None

    @property
    def path(self) -> list[str]:
        """The steps of the kernel, as subscripts in the user's labels (batch labels included)."""
        c = self._main.compiled
        return describe_plan(c.spec.plan, self._main.analysis) if c is not None else []

    @property
    def batch_labels(self) -> str:
        """The labels whose size is a `?` of the kernel (any batch size runs on it)."""
        return "".join(label for label in self._main.analysis.subscripts.output if label in self._batch)

    @property
    def flops(self) -> int:
        """Floating-point operations of one call at the shapes it was made for (2 per multiply-add)."""
        c = self._main.compiled
        return 2 * c.spec.plan.flops_for(self._main.analysis.sizes) if c is not None else 0

    def __call__(self, *operands: Any, out: Any = None, alpha: Any = 1, beta: Any = 0,
                 check_bounds: bool | None = None) -> Any:
        """Run it like `tinyc.einsum` (`check_bounds` defaults to the contraction's)."""
        arrays = self._operands(operands)
        checked = self.check_bounds if check_bounds is None else check_bounds
        if self.dtype is None:   # (einsum's own call: its by-signature fast path)
            return einsum(self.subscripts, *arrays, out=out, alpha=alpha, beta=beta, device=self.device,
                          epilogue=self.epilogue, tune=self.tune, check_bounds=checked, casting=self._casting)
        return _einsum(self.subscripts, arrays, out, alpha, beta, self.device, self.tune, checked,
                       self.epilogue, self.dtype, "K", self._casting, False)

    def bind(self, *operands: Any, out: Any = None, alpha: Any = 1, beta: Any = 0) -> Any:
        """Everything a call checks and prepares, without launching: the kernel for these
        operands, its positional arguments, the work-groups and the output (a new C-order
        array unless `out=`), for launching elsewhere, e.g. over MPI ranks:
        `b = c.bind(A, B); tinyc.distributed.run(b.kernel, *b.args, batch=b.groups, comm=comm)`
        leaves the result in `b.written["out"]`."""
        from tinyc.contractions.statement_kernel import Bound

        arrays = self._operands(operands)
        sigs = tuple(_signature(x) for x in arrays)
        a = analyse(self.subscripts, sigs, None, self.dtype, self.epilogue, "K", self._casting)
        target = _as_out(out) if out is not None else np.zeros(a.out_shape, a.result)
        plain = _is_one(alpha) and _is_zero(beta)
        call = _call(self.subscripts, sigs, _signature(target), self.dtype, compile_target(self.device),
                     self.epilogue, plain, False, self.tune, "K", self._casting)
        if call.compiled is None or not call.analysis.out_direct or call.analysis.boolean:
            raise ValueError("this call has no kernel to bind (the result is empty or bool), or out has a "
                             "layout the kernel cannot write; call the contraction instead")
        a = call.analysis
        inputs = [materialize(x, labels, a.compute) if conv else x
                  for x, conv, labels in zip(arrays, a.convert, a.subscripts.inputs)]
        args = kernel_arguments(call, inputs, target, check_scalar(alpha, "alpha", a.compute),
                                check_scalar(beta, "beta", a.result))
        return Bound(call.compiled.kernel, args, call.groups, {"out": target})

    def _operands(self, operands: Sequence[Any]) -> list:
        """The operands as arrays, checked against the shapes the contraction was made for."""
        arrays = [x if type(x) is np.ndarray else _as_operand(x, k) for k, x in enumerate(operands)]
        if len(arrays) != len(self.shapes):
            raise ValueError(f"the contraction '{self.subscripts}' takes {len(self.shapes)} operands, "
                             f"got {len(arrays)}")
        terms = self._main.analysis.subscripts.inputs
        for k, (x, shape, labels) in enumerate(zip(arrays, self.shapes, terms)):
            got = x.shape if type(x) is np.ndarray else _signature(x).shape
            if got != shape and (len(got) != len(shape) or any(g != n and label not in self._batch
                                                               for g, n, label in zip(got, shape, labels))):
                batch = f" (any size along the batch label{'s' if len(self._batch) > 1 else ''} " \
                        f"{', '.join(sorted(self._batch))})" if self._batch else ""
                raise ValueError(f"operand {k} has shape {got} but the contraction was made for {shape}{batch}")
        return arrays

    def __repr__(self) -> str:
        return f"<tinyc.Contraction '{self.subscripts}' {' '.join(map(str, self.shapes))}>"


def contract(subscripts: Any, *shapes_or_arrays: Any, dtype: Any = None, device: Any = None,
             epilogue: str | None = None, shapes: Any = None, tune: bool = False,
             check_bounds: bool = False) -> Any:
    """Compile a contraction for operands of these shapes (C order; dtype default f32) or
    like these arrays; see `Contraction`. A list of statements with `shapes=` compiles
    them into one kernel (statement_kernel.py)."""
    if isinstance(subscripts, (list, tuple)):
        from tinyc.contractions.statement_kernel import Statements

        if shapes_or_arrays or epilogue is not None:
            raise TypeError("statements take their shapes as shapes={name: shape}, and no epilogue")
        return Statements(subscripts, shapes if shapes is not None else {}, dtype, device, tune, check_bounds)
    if shapes is not None:
        raise TypeError("shapes= goes with a list of statements; an einsum takes its shapes as arguments")
    return Contraction(subscripts, shapes_or_arrays, dtype=dtype_alias(dtype) if dtype is not None
                       else None, device=device, epilogue=epilogue, tune=tune, check_bounds=check_bounds)


def describe_plan(plan: Any, a: Analysis | None = None) -> list[str]:
    """The steps of a plan as subscripts in the user's labels and order (`...` dimensions as
    the user wrote them); batch labels included; `(shared)` marks products of operands the
    batch shares, made once per work-group."""
    order: list[str] = []
    if a is not None:
        for term in (*a.subscripts.inputs, a.subscripts.output):
            order += [label for label in term if label not in order]
    batch = [g for g in plan.groups if not plan.tile or g != plan.groups[0]]
    names = {label: label for label in order}
    spare = (c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in order)
    for label in order:
        if not subs.is_letter(label):
            names[label] = next(spare, label)

    terms = {}
    if a is not None:   # operands and the output as the user wrote them (diagonals once)
        terms = {k: tuple(dict.fromkeys(t)) for k, t in enumerate(a.subscripts.inputs)}
        terms[plan.output_id] = a.subscripts.output

    def show(tensor: int, labels: Any, with_batch: bool) -> str:
        shown = set(labels) | (set(batch) if with_batch else set())
        if a is not None:   # (a joined label as the user's labels it stands for)
            shown = {part for label in shown for part in a.user_labels(label)}
        ordered = [label for label in terms.get(tensor, order) if label in shown]
        ordered += [label for label in order if label in shown and label not in ordered]
        ordered += sorted(label for label in shown if label not in ordered)
        return "".join(names.get(label, label) for label in ordered)

    steps = []
    for step in plan.steps:
        variant = not step.invariant
        ins = ",".join(show(t, plan.tensors[t], variant and not _shared(plan, t)) for t in step.inputs)
        steps.append(f"{ins}->{show(step.output, step.labels, variant)}" + (" (shared)" if step.invariant else ""))
    return steps


def _shared(plan: Any, tensor: int) -> bool:
    """A tensor the batch does not index: an operand without the batch labels, or a shared product."""
    made = next((s for s in plan.steps if s.output == tensor), None)
    return made.invariant if made is not None else tensor in plan.shared
