"""Compile generated kernels, run them on the device and in the reference, compare.

Kernels are compiled many to a module, so one JIT build (100-600 ms on the
CPU runtime) serves them all; a module that does not compile is split to
find the kernel at fault. Each kernel then runs on random inputs (the
arrays laid out exactly as the generator declared them, strides included)
on the device, bounds-checked on the device (which must give the same
results and find nothing: the programs are in bounds), and, on copies, in
the NumPy reference interpreter, whose collectives `CollectiveOracle`
checks against NumPy on the way. Outputs are
compared bit for bit where the generator says both sides compute exactly
(integers, loads and stores, correctly rounded operations), else within a
tolerance scaled by the output's magnitude.
"""

from __future__ import annotations

import os
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from tinyc.fuzz.oracle import CollectiveOracle
from tinyc.fuzz.program import ArrayArg, GroupArg, Kernel, ScalarArg

TOLERANCE = {"f16": 2e-2, "bf16": 6e-2, "f32": 1e-3, "f64": 1e-9, "c32": 1e-3, "c64": 1e-9}
LAUNCH_TIMEOUT = 60.0
"""Seconds a launch may take on an idle machine (a generated kernel takes milliseconds; the
JIT builds happen before); scaled by the machine's load (`launch_timeout`)."""


@dataclass
class Outcome:
    """What happened to one kernel."""

    kernel: Kernel
    status: str  # "ok", "mismatch", "rejected", "undefined", "unsupported", "internal", "hang"
    detail: str = ""
    checked_collectives: int = 0

    @property
    def failed(self) -> bool:
        return self.status != "ok"


class LaunchTimeout(Exception):
    """A launch did not finish within LAUNCH_TIMEOUT: the device may be stuck."""


# ---------------------------------------------------------------- arguments

_DTYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64,
           "bf16": np.uint16, "f16": np.float16, "f32": np.float32, "f64": np.float64,
           "c32": np.complex64, "c64": np.complex128}


def _values(rng: np.random.Generator, element: Any, count: int) -> np.ndarray:
    name = element.name
    if element.is_int:
        return rng.integers(-8, 9, size=count).astype(_DTYPES[name])
    data = rng.uniform(-1, 1, size=count)
    if element.is_complex:
        data = data + 1j * rng.uniform(-1, 1, size=count)
    if name == "bf16":
        return (np.round(data * 64) / 64).astype(np.float32).view(np.uint32).__rshift__(16).astype(np.uint16)
    if name == "f16":
        data = np.round(data * 256) / 256  # exactly representable
    return data.astype(_DTYPES[name])


def _strided(rng: np.random.Generator, element: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 1
    base = _values(rng, element, extent)
    itemsize = base.itemsize
    return np.ndarray(shape, base.dtype, buffer=base, strides=tuple(s * itemsize for s in strides))


def build_arguments(kernel: Kernel, seed: int) -> list[Any]:
    """Random arguments laid out as the kernel's types and the generator's sizes say."""
    import tinyc

    rng = np.random.default_rng(seed)
    args: list[Any] = []
    for arg in kernel.args:
        if isinstance(arg, ScalarArg):
            t = arg.type
            args.append(int(arg.value) if t.is_int else complex(arg.value) if t.is_complex else float(arg.value))
        elif isinstance(arg, ArrayArg):
            args.append(_strided(rng, arg.element, arg.shape, arg.strides))
        else:
            args.append(_group(rng, arg, tinyc))
    return args


def _group(rng: np.random.Generator, arg: GroupArg, tinyc: Any) -> Any:
    element = arg.memref.element
    if arg.offset == 0:
        members = [_strided(rng, element, arg.shape, arg.strides) for _ in range(arg.count)]
        return members
    extent = 1 + sum((n - 1) * s for n, s in zip(arg.shape, arg.strides))
    members = [_values(rng, element, arg.offset + extent) for _ in range(arg.count)]
    return tinyc.Group(members, offset=arg.offset) if arg.offset_dynamic else members


def copy_arguments(args: Sequence[Any]) -> list[Any]:
    """Deep copies that keep strides, lists and tinyc.Group."""
    import tinyc
    from tinyc.reference.arguments import copy_argument

    out = []
    for a in args:
        if isinstance(a, tinyc.Group):
            out.append(tinyc.Group([copy_argument(m) for m in a.arrays], offset=a.offset))
        else:
            out.append(copy_argument(a))
    return out


# ---------------------------------------------------------------- comparing

def _as_float(a: np.ndarray, element: Any) -> np.ndarray:
    if element.name == "bf16":
        return (np.asarray(a).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.asarray(a)


def _differs(element: Any, got: np.ndarray, want: np.ndarray, exact: bool, tol: float = 0.0,
             sides: tuple[str, str] = ("device", "reference")) -> str | None:
    got, want = _as_float(got, element), _as_float(want, element)
    if element.is_int or exact:
        same = np.array_equal(got, want, equal_nan=not element.is_int)
        if same:
            return None
        where = np.argwhere(~((got == want) | (np.isnan(got) & np.isnan(want)) if not element.is_int
                              else got == want))
        first = tuple(int(i) for i in where[0]) if len(where) else ()
        return f"differs at {first}: {sides[0]} {got[first]!r}, {sides[1]} {want[first]!r}"
    tol = max(TOLERANCE.get(element.name, 0.0), tol)
    finite = np.isfinite(want)
    scale = max(1.0, float(np.max(np.abs(want[finite]))) if finite.any() else 1.0)
    close = np.isclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True)
    close |= (got == want)  # equal infinities
    # Overflow on both sides: whether it ends as inf or nan depends on the order of the operations
    # (inf - inf, a complex product with an infinite part), which no program fixes.
    close |= ~np.isfinite(got) & ~np.isfinite(want)
    if close.all():
        return None
    first = tuple(int(i) for i in np.argwhere(~close)[0])
    return (f"differs at {first}: {sides[0]} {got[first]!r}, {sides[1]} {want[first]!r} "
            f"(tolerance {tol} x {scale:.3g})")


def compare(kernel: Kernel, device: Sequence[Any], reference: Sequence[Any],
            sides: tuple[str, str] = ("device", "reference")) -> str | None:
    """The first difference between the outputs, or None (`sides` names the two runs)."""
    for arg, got, want in zip(kernel.args, device, reference):
        if isinstance(arg, ScalarArg) or not arg.output:
            continue
        exact = kernel.exact_outputs.get(arg.name, False)
        tol = kernel.tolerances.get(arg.name, 0.0)
        if isinstance(arg, ArrayArg):
            pairs = [(got, want)]
            element = arg.element
        else:
            members_got = got.arrays if hasattr(got, "arrays") else got
            members_want = want.arrays if hasattr(want, "arrays") else want
            pairs = list(zip(members_got, members_want))
            element = arg.memref.element
        for k, (g, w) in enumerate(pairs):
            problem = _differs(element, g, w, exact, tol, sides)
            if problem:
                member = f" member {k}" if isinstance(arg, GroupArg) else ""
                return f"%{arg.name}{member} {problem}"
    return None


# ---------------------------------------------------------------- running

@dataclass
class Module:
    """Kernels compiled together."""

    kernels: list[Kernel]
    program: Any = None
    outcomes: dict[str, Outcome] = field(default_factory=dict)


QUIET = "none"
"""Random programs are full of values nobody uses: their warnings (`-w`) are noise."""


def compile_module(kernels: Sequence[Kernel]) -> tuple[Any, dict[str, Outcome]]:
    """One program for all kernels that compile; the others' outcomes."""
    import tinyc

    text = "\n".join(k.text for k in kernels)
    try:
        return tinyc.compile(text, name="<fuzz>", warnings=QUIET), {}
    except Exception:
        pass
    outcomes: dict[str, Outcome] = {}
    good = []
    for k in kernels:
        outcome = compile_one(k)
        if outcome is None:
            good.append(k)
        else:
            outcomes[k.name] = outcome
    if not good:
        return None, outcomes
    return tinyc.compile("\n".join(k.text for k in good), name="<fuzz>", warnings=QUIET), outcomes


def compile_one(kernel: Kernel) -> Outcome | None:
    """None if the kernel compiles, else why not."""
    import tinyc

    try:
        tinyc.compile(kernel.text, name=kernel.name, warnings=QUIET)
        return None
    except tinyc.CompilationError as err:
        return Outcome(kernel, "rejected", f"tinyc rejected a generated program:\n{err}")
    except Exception as err:
        return Outcome(kernel, "internal", "compiling raised " + _exception_text(err))


def _exception_text(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}\n" + "".join(traceback.format_exception(err)[-6:])


def launch_timeout() -> float:
    """LAUNCH_TIMEOUT times the load per core (at least 1): campaigns share the machine."""
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        load = 1.0
    return LAUNCH_TIMEOUT * max(1.0, load)


def _launch(kernel_object: Any, args: list[Any], batch: int, check_bounds: bool = False) -> None:
    """Launch and wait, with a time limit (a stuck device cannot be interrupted)."""
    failure: list[BaseException] = []

    def work() -> None:
        try:
            kernel_object(*args, batch=batch, check_bounds=check_bounds)
        except BaseException as exc:  # handed to the caller
            failure.append(exc)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    limit = launch_timeout()
    thread.join(limit)
    if thread.is_alive():
        raise LaunchTimeout(f"the launch did not finish within {limit:.0f} s")
    if failure:
        raise failure[0]


def run_kernel(program: Any, kernel: Kernel, seed: int, checked: Any = None) -> Outcome:
    """Run one compiled kernel on the device and in the reference; compare.

    `checked`: the program's checked IR (parsed once per module)."""
    import tinyc
    from tinyc.reference import ReferenceFault, ReferenceUnsupported, run as run_reference

    args = build_arguments(kernel, seed)
    reference_args = copy_arguments(args)
    bounds_args = copy_arguments(args)
    try:
        k = program[kernel.name]
        _launch(k, args, kernel.batch)
        problem = _bounds_checked_difference(k, kernel, args, bounds_args)
        if problem:
            return Outcome(kernel, "mismatch", problem)
    except LaunchTimeout as err:
        return Outcome(kernel, "hang", str(err))
    except tinyc.LaunchError as err:
        return Outcome(kernel, "internal", f"the launch was refused: {err}")
    except Exception as err:
        return Outcome(kernel, "internal", "launching raised " + _exception_text(err))
    oracle = CollectiveOracle()
    info = k.info
    try:
        fn = (checked or program.checked_ir())[kernel.name]
        run_reference(fn, reference_args, kernel.batch, work_group_size=info.work_group_size,
                      subgroup_size=info.subgroup_size, on_collective=oracle.before,
                      after_collective=oracle.after)
    except ReferenceFault as err:
        return Outcome(kernel, "undefined", f"the reference found undefined behaviour: {err}")
    except ReferenceUnsupported as err:
        return Outcome(kernel, "unsupported", f"the reference cannot run it: {err}")
    except Exception as err:
        return Outcome(kernel, "internal", "the reference raised " + _exception_text(err))
    if oracle.failures:
        return Outcome(kernel, "mismatch", "reference vs NumPy: " + "; ".join(oracle.failures),
                       oracle.checked)
    problem = compare(kernel, args, reference_args)
    if problem:
        return Outcome(kernel, "mismatch", "device vs reference: " + problem, oracle.checked)
    return Outcome(kernel, "ok", "", oracle.checked)


def _bounds_checked_difference(k: Any, kernel: Kernel, plain: list[Any], args: list[Any]) -> str | None:
    """Run the kernel bounds-checked on `args` (copies of the plain run's inputs): a generated
    program is in bounds, so it must give the plain run's results and raise nothing."""
    import tinyc

    k._checked_kernel()  # compiled and built first: a module's JIT is no launch to time
    try:
        _launch(k, args, kernel.batch, check_bounds=True)
    except tinyc.BoundsError as err:
        return f"the bounds-checked run of an in-bounds program raised: {err}"
    problem = compare(kernel, args, plain, ("checked", "plain"))
    return f"bounds-checked vs plain device run: {problem}" if problem else None


def run_module(kernels: Sequence[Kernel], seed: int) -> list[Outcome]:
    """Outcomes of all kernels, in order; the kernels of one language version are compiled
    together (a module has one version). After a hang nothing more runs: the outcomes of the
    kernels that ran, in order."""
    found: dict[int, Outcome] = {}
    for std in dict.fromkeys(k.std for k in kernels):
        part = [(i, k) for i, k in enumerate(kernels) if k.std == std]
        program, outcomes = compile_module([k for _, k in part])
        checked = program.checked_ir() if program is not None else None
        for i, kernel in part:
            if kernel.name in outcomes:
                found[i] = outcomes[kernel.name]
                continue
            found[i] = run_kernel(program, kernel, seed * 7919 + i, checked)
            if found[i].status == "hang":
                return [found[j] for j in sorted(found)]
    return [found[i] for i in sorted(found)]
