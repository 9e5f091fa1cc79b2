"""`tinyc.einsum` and `tinyc.contract`: NumPy's einsum as one tinyc kernel.

    C = tinyc.einsum("bij,bjk->bik", A, B)            # = np.einsum, as a NumPy array
    tinyc.einsum("bij,bjk->bik", A, B, out=C, alpha=2, beta=1)   # C := 2 A·B + C in place
    c = tinyc.contract("bij,bjk->bik", (1000, 8, 8), (1000, 8, 8), dtype="f32")
    print(c.source); c(A, B)

Compiled kernels are cached by subscripts, operand dtypes, shapes and
strides, the output's, the device and the epilogue: a repeated call pays
no compile and no JIT, only a dictionary lookup, writing the array
addresses and one launch (launch.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from tinyc.contractions import subscripts as subs
from tinyc.contractions.compiled import (
    Compiled, Signature, analyse, compile_contraction, compute_dtype, materialize, _dtype_alias,
)

CACHE_SIZE = 512
_cache: "OrderedDict[tuple, Compiled]" = OrderedDict()
_cache_lock = threading.Lock()


def cache_info() -> dict[str, int]:
    """How many contractions are compiled and cached in this process."""
    return {"entries": len(_cache), "capacity": CACHE_SIZE}


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


# -- operands -------------------------------------------------------------------
def _usm_interface(x: Any) -> dict | None:
    return getattr(x, "__sycl_usm_array_interface__", None) if not isinstance(x, np.ndarray) else None


def _as_operand(x: Any, k: int) -> Any:
    """NumPy and USM arrays as they are; anything else through np.asarray."""
    if isinstance(x, np.ndarray) or _usm_interface(x) is not None:
        return x
    try:
        return np.asarray(x)
    except Exception as exc:
        raise TypeError(f"operand {k}: cannot use {type(x).__name__} as an array ({exc})") from None


def _signature(x: Any) -> Signature:
    if isinstance(x, np.ndarray):
        return Signature("numpy", x.dtype, x.shape, x.strides, x.flags.aligned)
    iface = x.__sycl_usm_array_interface__
    dtype = np.dtype(iface["typestr"])
    shape = tuple(int(n) for n in iface["shape"])
    strides = iface.get("strides")
    if strides is None:
        strides = [1] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * max(shape[d + 1], 1)
    return Signature("usm", dtype, shape, tuple(int(s) * dtype.itemsize for s in strides))


def _address(x: Any) -> int:
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0]
    iface = x.__sycl_usm_array_interface__
    return int(iface["data"][0]) + int(iface.get("offset") or 0) * np.dtype(iface["typestr"]).itemsize


def _queue_of(x: Any) -> Any:
    owner = x.__sycl_usm_array_interface__.get("syclobj")
    return getattr(owner, "sycl_queue", owner)


def _device_key(device: Any) -> Any:
    try:
        hash(device)
        return device
    except TypeError:
        return id(device)


# -- the cache ------------------------------------------------------------------
def _compiled(text: str, sigs: Sequence[Signature], out_sig: Signature | None, dtype: Any,
              device: Any, epilogue: Any, plain: bool = False) -> Compiled:
    """The cached contraction; `plain` (alpha = 1, beta = 0) compiles those as constants:
    no scaling, and the output is never read — the kernel of a plain einsum call."""
    key = (text, tuple(sigs), out_sig, str(dtype) if dtype is not None else None,
           _device_key(device), epilogue, plain)
    found = _cache.get(key)
    if found is not None:
        return found
    analysis = analyse(text, sigs, out_sig, dtype, epilogue)
    if plain and analysis.scale != 1:
        return _compiled(text, sigs, out_sig, dtype, device, epilogue, False)
    compiled = compile_contraction(analysis, epilogue, device, plain)
    with _cache_lock:
        _cache[key] = compiled
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return compiled


# -- running ----------------------------------------------------------------------
def _check_scalar(value: Any, name: str, complex_ok: bool) -> Any:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, complex, np.number)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if not complex_ok and isinstance(value, (complex, np.complexfloating)) and value.imag != 0:
        raise TypeError(f"{name} is complex ({value}) but the contraction computes in real numbers")
    return value.real if not complex_ok and isinstance(value, (complex, np.complexfloating)) else value


def _run(c: Compiled, arrays: list, out: Any, alpha: Any, beta: Any) -> Any:
    a = c.analysis
    alpha = _check_scalar(alpha, "alpha", a.compute.kind == "c")
    beta = _check_scalar(beta, "beta", a.result.kind == "c")
    usm_queue = next((_queue_of(x) for x in arrays if _usm_interface(x) is not None), None)
    target, result = out, out
    if out is None:
        result = _new_output(a.out_shape, a.result, a.out_order, usm_queue)
        target, beta = result, 0
    if a.empty:
        return _finish(result, out)
    staged = None
    launcher = c.launcher
    inputs = [materialize(x, labels, a.compute) if conv else x
              for x, conv, labels in zip(arrays, a.convert, a.subscripts.inputs)]
    temp = None
    if out is not None and (not a.out_direct or _overlaps(out, inputs)):
        if _usm_interface(out) is not None:
            raise ValueError("out overlaps an operand (or has a layout the kernel cannot write); "
                             "pass a separate output array")
        temp = np.empty(a.out_shape, a.result, order=a.out_order)
        if beta != 0:
            temp[...] = out
        target = temp
    if isinstance(target, np.ndarray) and not target.flags.writeable:
        raise ValueError("out is read-only")
    arrays_used = inputs if c.spec.inputs else []   # a zero-size sum reads no operand
    scratch = np.empty(c.scratch_elements, a.compute) if c.scratch_elements else None
    everything = arrays_used + [target] + ([scratch] if scratch is not None else [])
    if not launcher.host_pointers and any(isinstance(x, np.ndarray) for x in everything):
        from tinyc.contractions.launch import Staged

        staged = Staged(launcher.queue, launcher._memory)
        addresses = [_staged_address(staged, x, x is target or x is scratch) for x in everything]
    else:
        addresses = [_address(x) for x in everything]
    launcher(alpha * a.scale if a.scale != 1 else alpha, beta, addresses, c.batch, staged)
    if temp is not None:
        out[...] = temp
    return _finish(result, out)


def _staged_address(staged: Any, x: Any, written: bool) -> int:
    if not isinstance(x, np.ndarray):
        return _address(x)
    span = _span_bytes(x)
    return staged.address(x, _address(x), span, written)


def _span_bytes(x: np.ndarray) -> int:
    """Bytes from the first to one past the last element (strides are non-negative here)."""
    if x.size == 0:
        return 0
    return sum((n - 1) * s for n, s in zip(x.shape, x.strides)) + x.itemsize


def _overlaps(out: Any, inputs: Sequence[Any]) -> bool:
    if not isinstance(out, np.ndarray):
        lo = _address(out)
        hi = lo + _span_usm(out)
        return any(_usm_interface(x) is not None and _address(x) < hi and lo < _address(x) + _span_usm(x)
                   for x in inputs)
    return any(isinstance(x, np.ndarray) and np.may_share_memory(out, x) for x in inputs)


def _span_usm(x: Any) -> int:
    s = _signature(x)
    if 0 in s.shape:
        return 0
    return sum((n - 1) * st for n, st in zip(s.shape, s.strides)) + s.dtype.itemsize


def _new_output(shape: tuple[int, ...], dtype: np.dtype, order: str, queue: Any) -> Any:
    if queue is None:
        return np.empty(shape, dtype, order=order)
    try:
        import dpnp
    except ImportError:  # pragma: no cover - dpnp is how tinyc returns USM results
        raise TypeError("USM operands need out= (a USM array) when dpnp is not installed") from None
    return dpnp.empty(shape, dtype=dtype, order=order, sycl_queue=queue)


def _finish(result: Any, out: Any) -> Any:
    if out is None and isinstance(result, np.ndarray) and result.ndim == 0:
        return result[()]
    return result


def _prepare(subscripts: Any, operands: Sequence[Any]) -> tuple[str, list]:
    if isinstance(subscripts, str):
        return subscripts, [_as_operand(x, k) for k, x in enumerate(operands)]
    text, ops = subs.from_sublists([subscripts, *operands])
    return text, [_as_operand(x, k) for k, x in enumerate(ops)]


def einsum(subscripts: Any, *operands: Any, out: Any = None, alpha: Any = 1, beta: Any = 0,
           device: Any = None, epilogue: str | None = None, dtype: Any = None,
           optimize: Any = True) -> Any:
    """np.einsum on a tinyc kernel: `out = alpha·einsum(...) + beta·out` (with `out=`).

    `epilogue="relu"` applies max(·, 0) to the result inside the kernel; `dtype=`
    forces the computation type as in NumPy; `optimize` is accepted for NumPy
    compatibility (tinyc always chooses the order by flop count)."""
    text, arrays = _prepare(subscripts, operands)
    if out is not None:
        out = _as_out(out)
    if device is None:
        device = next((_queue_of(x) for x in arrays + ([out] if out is not None else [])
                       if _usm_interface(x) is not None), None)
    sigs = [_signature(x) for x in arrays]
    plain = _is_one(alpha) and (out is None or _is_zero(beta))
    c = _compiled(text, sigs, _signature(out) if out is not None else None, dtype, device, epilogue,
                  plain)
    return _run(c, arrays, out, alpha, beta)


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
    `tinyc.einsum` (operands of another dtype or layout get their own cached
    kernel, and so does a call with alpha = 1 and beta = 0, which has them as
    constants)."""

    def __init__(self, subscripts: Any, shapes_or_arrays: Sequence[Any], dtype: Any = None,
                 device: Any = None, epilogue: str | None = None):
        if not isinstance(subscripts, str):
            raise TypeError(f"subscripts must be a string, got {type(subscripts).__name__}")
        self.subscripts = subscripts
        self.device = device
        self.epilogue = epilogue
        self.dtype = dtype
        sigs = []
        for k, x in enumerate(shapes_or_arrays):
            if isinstance(x, (tuple, list)) and all(isinstance(n, (int, np.integer)) for n in x):
                d = compute_dtype([], dtype if dtype is not None else np.float32)
                shape = tuple(int(n) for n in x)
                if any(n < 0 for n in shape):
                    raise ValueError(f"operand {k}: negative size in shape {shape}")
                c_strides, step = [], d.itemsize
                for n in reversed(shape):
                    c_strides.insert(0, step)
                    step *= max(n, 1)
                sigs.append(Signature("numpy", d, shape, tuple(c_strides)))
            elif isinstance(x, (int, np.integer)) and not isinstance(x, bool):
                d = compute_dtype([], dtype if dtype is not None else np.float32)
                sigs.append(Signature("numpy", d, (int(x),), (d.itemsize,)))
            else:
                x = _as_operand(x, k)
                sigs.append(_signature(x))
                if device is None and _usm_interface(x) is not None:
                    self.device = device = _queue_of(x)
        self.shapes = [s.shape for s in sigs]
        self._main = _compiled(subscripts, sigs, None, dtype, device, epilogue)

    @property
    def source(self) -> str:
        """The generated tensor-language program (`tinyc check` accepts it)."""
        return self._main.source

    @property
    def program(self) -> Any:
        """The compiled `tinyc.Program` (its kernel is `program["einsum"]`)."""
        return self._main.program

    @property
    def path(self) -> list[str]:
        """The steps of the kernel, as subscripts of each pairwise contraction."""
        return describe_path(self._main)

    @property
    def flops(self) -> int:
        """Floating-point operations of one call (2 per multiply-add)."""
        return 2 * self._main.spec.plan.flops

    def __call__(self, *operands: Any, out: Any = None, alpha: Any = 1, beta: Any = 0) -> Any:
        arrays = [_as_operand(x, k) for k, x in enumerate(operands)]
        if len(arrays) != len(self.shapes):
            raise ValueError(f"the contraction '{self.subscripts}' takes {len(self.shapes)} operands, "
                             f"got {len(arrays)}")
        for k, (x, shape) in enumerate(zip(arrays, self.shapes)):
            got = _signature(x).shape
            if got != shape:
                raise ValueError(f"operand {k} has shape {got} but the contraction was made for {shape}")
        return einsum(self.subscripts, *arrays, out=out, alpha=alpha, beta=beta, device=self.device,
                      epilogue=self.epilogue, dtype=self.dtype)

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
    return Contraction(subscripts, shapes_or_arrays, dtype=_dtype_alias(dtype) if dtype is not None
                       else None, device=device, epilogue=epilogue)


def describe_path(c: Compiled) -> list[str]:
    """Each step as `labels,labels->labels` in the kernel's per-work-group view."""
    return describe_plan(c.spec.plan) if c.spec is not None else []


def describe_plan(plan: Any) -> list[str]:
    """The steps of a plan as subscripts; `(shared)` marks steps done once per work-group."""
    def show(labels: Any) -> str:
        return "".join(sorted(labels, key=lambda s: (not subs.is_letter(s), s)))

    steps = []
    for step in plan.steps:
        ins = ",".join(show(plan.tensors[t]) for t in step.inputs)
        steps.append(f"{ins}->{show(step.labels)}" + (" (shared)" if step.invariant else ""))
    return steps
