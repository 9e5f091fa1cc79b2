"""`tinyc run`: random inputs of the right types, a timed launch, an optional check.

Shapes: static modes come from the type; a `?` mode is the batch for the
mode indexed by `builtin.group_id`, else 16, unless `--size NAME=AxBx?`
says otherwise. A `?` group size is the batch; a `?` group offset is 0.
`--check` runs the NumPy reference interpreter (tinyc.reference) on the
same inputs — over every work-group for batches up to 256, else over 64
sampled work-groups whose batch slices are compared.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.cli.errors import UsageError
from tinyc.ir.types import DYNAMIC, BoolType, GroupType, MemrefType, ScalarType

DEFAULT_DYNAMIC_SIZE = 16
FULL_CHECK_LIMIT = 256
SAMPLED_GROUPS = 64

NUMPY_DTYPES = {
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64,
    "bf16": np.uint16, "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "c32": np.complex64, "c64": np.complex128,
}


def parse_sizes(sizes: Sequence[str]) -> dict[str, str]:
    """`NAME=VALUE` pairs; a malformed one is a UsageError."""
    parsed: dict[str, str] = {}
    for item in sizes:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"--size expects NAME=VALUE, got '{item}'")
        parsed[name.lstrip("%")] = value
    return parsed


def _shape(name: str, memref: MemrefType, batch_mode: int | None, batch: int,
           sizes: dict[str, str]) -> tuple[int, ...]:
    given = sizes.get(name)
    dims = given.split("x") if given else ["?"] * memref.order
    if len(dims) != memref.order:
        raise UsageError(f"--size {name}: expected {memref.order} modes, got '{given}'")
    shape = []
    for mode, (static, text) in enumerate(zip(memref.shape, dims)):
        if static != DYNAMIC:
            shape.append(static)
        elif text not in ("?", ""):
            if not text.isdigit() or int(text) < 1:
                raise UsageError(f"--size {name}: '{text}' is not a positive size")
            shape.append(int(text))
        else:
            shape.append(batch if mode == batch_mode else DEFAULT_DYNAMIC_SIZE)
    return tuple(shape)


def _random_array(rng: np.random.Generator, element: ScalarType, shape: tuple[int, ...]) -> np.ndarray:
    dtype = NUMPY_DTYPES[element.name]
    if element.name == "bf16":
        values = rng.uniform(-1, 1, size=shape).astype(np.float32)
        bits = values.view(np.uint32) >> 16
        return np.asfortranarray(bits.astype(np.uint16))
    if element.is_int:
        return np.asfortranarray(rng.integers(-8, 8, size=shape).astype(dtype))
    data = rng.uniform(-1, 1, size=shape)
    if element.is_complex:
        data = data + 1j * rng.uniform(-1, 1, size=shape)
    return np.asfortranarray(data.astype(dtype))


def _random_scalar(rng: np.random.Generator, t: ScalarType, text: str | None) -> Any:
    if text is not None:
        try:
            return complex(text) if t.is_complex else float(text) if t.is_float else int(text)
        except ValueError:
            raise UsageError(f"--size: '{text}' is not a {t} value") from None
    if t.is_int:
        return int(rng.integers(1, 4))
    value = float(rng.uniform(0.5, 1.5))
    return complex(value, 0.25) if t.is_complex else value


def _bool(name: str, text: str | None, rng: np.random.Generator) -> bool:
    """`--size flag=true|false|1|0`, else random."""
    if text is None:
        return bool(rng.integers(0, 2))
    if text.lower() in ("true", "1", "false", "0"):
        return text.lower() in ("true", "1")
    raise UsageError(f"--size {name}: '{text}' is not a bool (true, false, 1 or 0)")


def make_arguments(info: Any, batch: int, sizes: dict[str, str], seed: int) -> list[Any]:
    """Random arguments for every parameter of a kernel (KernelInfo)."""
    rng = np.random.default_rng(seed)
    known = {p.name for p in info.params}
    for name in sizes:
        if name not in known:
            raise UsageError(f"--size {name}: the kernel has no argument '{name}'; "
                             f"arguments: {', '.join(sorted(known))}")
    args: list[Any] = []
    for p in info.params:
        t = p.type
        if isinstance(t, ScalarType):
            args.append(_random_scalar(rng, t, sizes.get(p.name)))
        elif isinstance(t, BoolType):
            args.append(_bool(p.name, sizes.get(p.name), rng))
        elif isinstance(t, MemrefType):
            args.append(_random_array(rng, t.element, _shape(p.name, t, p.batch_mode, batch, sizes)))
        elif isinstance(t, GroupType):
            count = batch if t.size == DYNAMIC else t.size
            shape = _shape(p.name, t.memref, None, batch, sizes)
            members = [_random_array(rng, t.memref.element, shape) for _ in range(count)]
            args.append(members)
        else:
            raise UsageError(f"argument '{p.name}' of type {t} cannot be generated")
    return args


def _compare(info: Any, device_args: list[Any], reference_args: list[Any],
             groups: Sequence[int] | None) -> list[str]:
    """Names and errors of the written arguments that differ."""
    problems = []
    for p, got, want in zip(info.params, device_args, reference_args):
        if not p.written or isinstance(p.type, ScalarType):
            continue
        pairs = list(zip(got, want)) if isinstance(got, list) else [(got, want)]
        if groups is not None and isinstance(got, list) and p.batch_mode is not None:
            pairs = [pairs[g] for g in groups]
        elif groups is not None and isinstance(p.type, MemrefType) and p.batch_mode is not None:
            pairs = [(np.take(got, groups, axis=p.batch_mode), np.take(want, groups, axis=p.batch_mode))]
        elif groups is not None:
            continue  # not partitioned by group: only a full check can compare it
        element = p.type.memref.element if isinstance(p.type, GroupType) else p.type.element
        tol = {"f16": 1e-2, "bf16": 5e-2, "f32": 1e-4, "c32": 1e-4}.get(element.name, 1e-10)
        for g, w in pairs:
            if element.name == "bf16":
                g = (g.astype(np.uint32) << 16).view(np.float32)
                w = (w.astype(np.uint32) << 16).view(np.float32)
            scale = max(1.0, float(np.max(np.abs(w))) if w.size else 1.0)
            if not np.allclose(g, w, rtol=tol, atol=tol * scale, equal_nan=True):
                err = float(np.max(np.abs(g.astype(np.complex128) - w.astype(np.complex128))))
                problems.append(f"{p.name}: max abs error {err:.3g}")
                break
    return problems


def run_kernel(source: str, file: str, kernel_name: str | None, batch: int, sizes: Sequence[str],
               check: bool, repeat: int, seed: int, device: str | None,
               echo: Callable[[str], None] = print, std: str | None = None,
               defines: dict[str, str] | None = None) -> None:
    """Compile, launch on random inputs, time, and optionally check."""
    import tinyc
    from tinyc.cli.mpi_run import launched_by_mpi, run_kernel_mpi
    from tinyc.reference.arguments import copy_argument

    if launched_by_mpi():  # under mpiexec: the batch split over the ranks
        return run_kernel_mpi(source, file, kernel_name, batch, sizes, check, repeat, seed, device,
                              echo, std=std, defines=defines)

    program = tinyc.compile(source, name=file, device=device, std=std, defines=defines)
    names = program.kernel_names
    name = kernel_name or names[0]
    if name not in names:
        raise UsageError(f"no kernel '{name}' in {file}; kernels: {', '.join(names)}")
    start = time.perf_counter()
    kernel = program[name]  # builds the program on the device (the runtime's JIT)
    build = time.perf_counter() - start
    info = kernel.info
    args = make_arguments(info, batch, parse_sizes(sizes), seed)
    inputs = [copy_argument(a) for a in args]

    start = time.perf_counter()
    kernel(*args, batch=batch)  # warm-up
    first = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        run_args = [copy_argument(a) for a in inputs]
        start = time.perf_counter()
        kernel(*run_args, batch=batch)
        times.append(time.perf_counter() - start)
    median = float(np.median(times))
    echo(f"{name}: batch {batch}, {median * 1e3:.3f} ms per launch "
         f"(median of {repeat}, wall clock incl. argument transfer; JIT build "
         f"{build * 1e3:.1f} ms, first launch {first * 1e3:.1f} ms)")
    if check:
        check_results(program, name, inputs, args, batch, seed, echo)


def check_results(program: Any, name: str, inputs: list[Any], results: list[Any], batch: int, seed: int,
                  echo: Callable[[str], None]) -> None:
    """Compare a launch's `results` (from `inputs`) with the NumPy reference interpreter."""
    import tinyc
    from tinyc.reference import ReferenceFault, ReferenceUnsupported, run as run_reference
    from tinyc.reference.arguments import copy_argument

    info = program[name].info
    groups = None if batch <= FULL_CHECK_LIMIT else sorted(
        np.random.default_rng(seed + 1).choice(batch, SAMPLED_GROUPS, replace=False).tolist())
    reference_args = [copy_argument(a) for a in inputs]
    fn = program.checked_ir()[name]
    try:
        run_reference(fn, reference_args, batch, groups, work_group_size=info.work_group_size,
                      subgroup_size=info.subgroup_size)
    except ReferenceUnsupported as exc:
        echo(f"check: no reference for this kernel ({exc})")
        return
    except ReferenceFault as exc:
        raise tinyc.LaunchError(f"check: the kernel does something undefined on these inputs: {exc}")
    problems = _compare(info, results, reference_args, groups)
    scope = "all work-groups" if groups is None else f"{len(groups)} sampled work-groups"
    if problems:
        raise tinyc.LaunchError("check failed against the NumPy reference over " + scope
                                + ": " + "; ".join(problems))
    echo(f"check: results match the NumPy reference over {scope}")
