"""Calls that must run or raise: random launches with wrong and odd arguments.

    python -m tinyc.fuzz.calls --calls 2000 --seed 1
    ...
    calls 2000 ran 1190 raised 810 out-of-bounds 0 unexpected 0 wrong 0

The program campaign (campaign.py) runs each generated kernel with the arguments
it was written for. Users pass other ones: another batch, a shape one off, a
C-order array, a reversed view, the wrong dtype, a list, a missing argument.
The rule (DESIGN.md, "no input may crash the process") is that a launch runs
correctly or raises before anything runs. Here every array lies inside a buffer
filled with a canary, the elements the array does not cover included, so a write
past an end or into a stride's gap is seen at once, whether the call ran or raised.

Two kinds of calls, drawn per call:
* a generated kernel (programs.py, compiled as one module) with its own arguments,
  each perturbed with some probability;
* `tinyc.einsum` with odd operands (reversed, broadcast, misaligned, byte-swapped,
  lists, mixed dtypes, size 0 and 1) against `np.einsum`: the same values, or both
  raise; refusing what NumPy computes is counted as `raised` (tinyc may be stricter,
  with a message), computing what NumPy refuses or another value as `wrong`.

A raise must be one of the errors the API documents (LaunchError and its
subclasses, TypeError, ValueError); any other is `unexpected`. Call i of seed S
depends on (S, i) alone (`--only I` repeats it). A crash ends the process: run
it in a subprocess (tests/test_fuzz_calls.py does) to see one.
"""

from __future__ import annotations

import argparse
import random
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tinyc.contractions.layout import c_order_strides, f_order_strides
from tinyc.fuzz.program import ArrayArg, GroupArg, Kernel, ScalarArg
from tinyc.fuzz.programs import program_kernel
from tinyc.fuzz.runner import _values, compile_module

PAD = 32
"""Canary elements before and after each array's buffer."""
CANARY = 7
DOCUMENTED = ("LaunchError", "BoundsError", "DeviceError", "TypeError", "ValueError")
EINSUM_DTYPES = (np.float32, np.float64, np.complex64, np.complex128, np.int8, np.int16, np.int32,
                 np.int64, np.uint8, np.uint16, np.float16, np.bool_)


@dataclass
class Guarded:
    """An array inside a canary-filled buffer; `intact` checks every element it does not cover."""

    array: Any
    buffer: np.ndarray
    covered: np.ndarray   # bool mask over the buffer: the array's elements

    def intact(self) -> bool:
        return bool((self.buffer[~self.covered] == self.buffer.dtype.type(CANARY)).all())


def guarded(values: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...]) -> Guarded:
    """`values` laid out with element `strides` inside a canary buffer."""
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    buffer = np.full(extent + 2 * PAD, CANARY, values.dtype)
    size = buffer.itemsize
    view = np.ndarray(shape, buffer.dtype, buffer, PAD * size, tuple(s * size for s in strides))
    view[...] = values.reshape(shape) if values.size == view.size else values.flat[0]
    marks = np.zeros(buffer.shape, bool)
    np.ndarray(shape, bool, marks, PAD, strides)[...] = True
    return Guarded(view, buffer, marks)


@dataclass
class Tally:
    calls: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("ran", "raised", "out-of-bounds", "unexpected", "wrong"), 0))

    def summary(self) -> str:
        return f"calls {self.calls} " + " ".join(f"{k} {v}" for k, v in self.counts.items())

    @property
    def failed(self) -> bool:
        return any(self.counts[k] for k in ("out-of-bounds", "unexpected", "wrong"))


# ---------------------------------------------------------------- generated kernels

def _array(rng: random.Random, nrng: np.random.Generator, arg: ArrayArg, odd: bool) -> tuple[Any, list[Guarded]]:
    values = _values(nrng, arg.element, int(np.prod(arg.shape)))
    shape, strides = arg.shape, arg.strides
    change = rng.random() if odd else 1.0
    if change < 0.15 and shape:                       # one mode a little off
        d = rng.randrange(len(shape))
        shape = shape[:d] + (max(0, shape[d] + rng.choice((-1, 1, 5))),) + shape[d + 1:]
        strides = f_order_strides(shape)
    elif change < 0.25 and len(shape) > 1:            # C order
        strides = c_order_strides(shape)
    elif change < 0.3:                                # a mode more
        shape, strides = shape + (2,), strides + (max(s * n for s, n in zip(strides, shape)) if shape else 1,)
    if change < 0.35 and values.dtype.kind in "fc" and rng.random() < 0.5:
        values = values.astype(rng.choice((np.float32, np.float64, np.complex64, np.int32)))
    g = guarded(values if values.size == int(np.prod(shape)) else values[:1], shape, strides)
    a: Any = g.array
    other = rng.random() if odd else 1.0
    if other < 0.05 and a.ndim:
        a = a[::-1]
    elif other < 0.08:
        a.flags.writeable = False
    elif other < 0.1:
        a = a.tolist()
    elif other < 0.12:
        a = None
    return a, [g]


def _group(rng: random.Random, nrng: np.random.Generator, arg: GroupArg, odd: bool) -> tuple[Any, list[Guarded]]:
    import tinyc

    count = arg.count
    if odd and rng.random() < 0.3:
        count = max(0, count + rng.choice((-1, 1, -count)))
    element = arg.memref.element
    members, found = [], []
    for _ in range(count):
        if arg.offset:
            extent = 1 + sum((n - 1) * s for n, s in zip(arg.shape, arg.strides))
            g = guarded(_values(nrng, element, arg.offset + extent), (arg.offset + extent,), (1,))
        else:
            g = guarded(_values(nrng, element, int(np.prod(arg.shape))), arg.shape, arg.strides)
        members.append(g.array)
        found.append(g)
    if odd and members and rng.random() < 0.1:
        members[rng.randrange(len(members))] = None
    if arg.offset and arg.offset_dynamic:
        return tinyc.Group(members, offset=arg.offset), found
    return members, found


def _scalar(rng: random.Random, arg: ScalarArg, odd: bool) -> Any:
    t = arg.type
    value = int(arg.value) if t.is_int else complex(arg.value) if t.is_complex else float(arg.value)
    if odd and rng.random() < 0.3:
        return rng.choice((None, "x", np.array([1.0]), 2 ** 70, 1 + 2j, float("nan"), True, np.float32(0.5)))
    return value


def kernel_call(rng: random.Random, nrng: np.random.Generator, kernel: Kernel, launch: Callable) -> tuple[str, str]:
    """One launch of a generated kernel with arguments perturbed at random."""
    odd = rng.random() < 0.6
    args, buffers = [], []
    for arg in kernel.args:
        if isinstance(arg, ScalarArg):
            args.append(_scalar(rng, arg, odd))
            continue
        made, found = (_array if isinstance(arg, ArrayArg) else _group)(rng, nrng, arg, odd)  # type: ignore[operator]
        args.append(made)
        buffers += found
    batch: Any = kernel.batch
    if odd and rng.random() < 0.5:
        batch = rng.choice((0, 1, max(0, kernel.batch - 1), kernel.batch + 1, kernel.batch * 3, -1, 2 ** 31,
                            2 ** 62, 1.5, "2", np.int64(kernel.batch), np.uint8(1), None))
    if odd and rng.random() < 0.05:
        args = args[:-1] if rng.random() < 0.5 else args + [np.zeros(3)]
    keywords: dict[str, Any] = {} if batch is None else {"batch": batch}
    if rng.random() < 0.1:
        keywords["check_bounds"] = True
    try:
        launch(*args, **keywords)
        outcome, detail = "ran", ""
    except Exception as err:   # (any exception: classified below, never a crash)
        outcome, detail = _raised(err)
    if not all(g.intact() for g in buffers):
        return "out-of-bounds", f"{kernel.name} batch={batch!r} ({outcome}: {detail})\n{kernel.text}"
    return outcome, detail


def _raised(err: Exception) -> tuple[str, str]:
    name = type(err).__name__
    if name in DOCUMENTED or isinstance(err, (TypeError, ValueError)):
        return "raised", f"{name}: {str(err)[:120]}"
    return "unexpected", "".join(traceback.format_exception(err, limit=4))


# ---------------------------------------------------------------- einsum

def _odd_operand(rng: random.Random, a: np.ndarray) -> Any:
    r = rng.random()
    if r < 0.1 and a.ndim:
        return a[::-1]
    if r < 0.15 and a.dtype.kind not in "b":
        return a.astype(a.dtype.newbyteorder(">"))
    if r < 0.2 and a.ndim and a.shape[0]:
        return np.broadcast_to(a[:1], a.shape)
    if r < 0.25:
        return np.asfortranarray(a)
    if r < 0.3 and a.ndim:
        return a[..., ::2]
    if r < 0.33:
        return a.tolist()
    if r < 0.38 and a.ndim:   # one byte off an element boundary
        b = np.zeros(a.nbytes + a.itemsize, np.uint8)[1:1 + a.nbytes].view(a.dtype).reshape(a.shape)
        b[...] = a
        return b
    return a


def einsum_call(rng: random.Random, nrng: np.random.Generator) -> tuple[str, str]:
    """`tinyc.einsum` against `np.einsum` on random subscripts and odd operands."""
    import tinyc

    labels = rng.sample("ijklb", rng.randint(1, 4))
    sizes = {label: rng.choice((0, 1, 1, 2, 3, 5, 17)) for label in labels}
    terms = ["".join(rng.choice(labels) for _ in range(rng.randint(0, 3))) for _ in range(rng.choice((1, 2, 2, 3)))]
    used = sorted(set("".join(terms)))
    output = "".join(label for label in used if rng.random() < 0.5)
    text = ",".join(terms) + ("" if rng.random() < 0.1 else "->" + output)
    mixed = rng.random() < 0.3
    first = rng.choice(EINSUM_DTYPES)
    operands = []
    for term in terms:
        dtype = np.dtype(rng.choice(EINSUM_DTYPES) if mixed else first)
        a = nrng.standard_normal([sizes[label] for label in term]) * 3
        a = (a + 1j * a if dtype.kind == "c" else a).astype(dtype)
        operands.append(_odd_operand(rng, a))
    keywords: dict[str, Any] = {}
    pick = rng.random()
    if pick < 0.1:
        keywords["dtype"] = rng.choice(EINSUM_DTYPES)
    elif pick < 0.15:
        keywords["casting"] = rng.choice(("no", "equiv", "safe", "same_kind", "unsafe"))
    elif pick < 0.2:
        keywords["order"] = rng.choice("CFAK")
    try:
        want, refused = np.einsum(text, *operands, **keywords), None
    except Exception as err:
        want, refused = None, err
    try:
        got = tinyc.einsum(text, *operands, **keywords)
    except Exception as err:
        outcome, detail = _raised(err)
        return outcome, f"{text} {keywords}: {detail}"
    shown = f"{text} {keywords} {[(getattr(a, 'dtype', type(a)), getattr(a, 'shape', None)) for a in operands]}"
    if refused is not None:
        return "wrong", f"{shown}: NumPy refuses ({refused!r}) but tinyc returned a result"
    want, got = np.asarray(want), np.asarray(got)
    if want.shape != got.shape or want.dtype != got.dtype:
        return "wrong", f"{shown}: NumPy {want.dtype}{want.shape}, tinyc {got.dtype}{got.shape}"
    if want.dtype.kind in "biu":
        same = np.array_equal(want, got)
    else:
        bound = rounding_bound(text, operands, sizes, want.dtype)
        same = bool(np.all((got == want) | (np.abs(got - want) <= bound) | (np.isnan(got) & np.isnan(want))))
    return ("ran", "") if same else ("wrong", f"{shown}: values differ")


def rounding_bound(text: str, operands: list[Any], sizes: dict[str, int], dtype: np.dtype) -> np.ndarray:
    """How far two correctly rounded evaluations of `text` in `dtype` may lie apart, per
    element: each is within γ·Σ|terms| of the exact sum (γ = m·u for m roundings per term: the
    conversions, the products and the n additions of n summed terms, in any order; u = eps/2;
    a complex product rounds twice as often), so the two are within 2γ·Σ|terms|, Σ|terms|
    being the einsum of the operands' absolute values, in float64."""
    inputs, _, output = text.partition("->")
    terms = inputs.split(",")
    if not _:   # NumPy's implicit output: the labels used once, sorted
        output = "".join(sorted(label for label in set(inputs) - {","} if inputs.count(label) == 1))
    summed = set("".join(terms)) - set(output)
    roundings = (len(terms) + 1) + int(np.prod([sizes[label] for label in summed]))
    u = float(np.finfo(dtype).eps) / 2 * (2 if dtype.kind == "c" else 1)
    magnitude = np.einsum(text, *[np.abs(np.asarray(a)).astype(np.float64) for a in operands])
    return 2 * roundings * u * magnitude


# ---------------------------------------------------------------- driver

def run(seed: int, indices: range, kernels: int, out: Any) -> Tally:
    """Calls `indices` of the seed; failures written to `out`."""
    import warnings

    warnings.simplefilter("ignore")
    programs = [program_kernel(seed, i, prefix="c") for i in range(kernels)]
    launchers: dict[str, Callable] = {}
    for std in sorted({p.std for p in programs}):   # (a module holds kernels of one version)
        module, _ = compile_module([p for p in programs if p.std == std])
        if module is not None:
            launchers.update({name: module[name] for name in module.kernel_names})
    compiled = [p for p in programs if p.name in launchers]
    tally = Tally()
    for i in indices:
        rng = random.Random(f"{seed}:call:{i}")
        nrng = np.random.default_rng(rng.randrange(2 ** 32))
        if compiled and rng.random() < 0.6:
            kernel = rng.choice(compiled)
            outcome, detail = kernel_call(rng, nrng, kernel, launchers[kernel.name])
        else:
            outcome, detail = einsum_call(rng, nrng)
        tally.calls += 1
        tally.counts[outcome] += 1
        if outcome not in ("ran", "raised"):
            out.write(f"--- {outcome}: seed {seed} call {i}\n{detail.rstrip()}\n")
            out.flush()
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tinyc.fuzz.calls", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="calls to make (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the campaign (default 0)")
    parser.add_argument("--kernels", type=int, default=40, help="generated kernels to call (default 40)")
    parser.add_argument("--only", type=int, default=None, help="make call ONLY of the seed alone")
    args = parser.parse_args(argv)
    if args.calls < 0 or args.kernels < 0:
        parser.error("--calls and --kernels must be >= 0")
    indices = range(args.calls) if args.only is None else range(args.only, args.only + 1)
    tally = run(args.seed, indices, args.kernels, sys.stderr)
    print(tally.summary())
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
