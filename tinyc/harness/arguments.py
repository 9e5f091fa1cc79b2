"""Random arguments for a kernel: the sizes of sizes.py, data laid out as the types declare.

Static modes come from the types; the `?` modes and the integer scalars that
the program relates get one value per class of related sizes (sizes.py). A
`?` group size is the batch; a `?` group offset is 0. Arrays are laid out with
the strides the types declare (`?` strides packed after the static ones). A
request that does not fit in memory is refused before anything is allocated.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tinyc.diagnostics import UsageError
from tinyc.harness.sizes import Chosen, choose_sizes
from tinyc.ir.types import DYNAMIC, BoolType, GroupType, MemrefType, ScalarType

HOST_MEMORY_SHARE = 4
"""`run` holds about four copies of the inputs (inputs, launch copies, reference, device)."""

NUMPY_DTYPES = {
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64,
    "bf16": np.uint16, "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "c32": np.complex64, "c64": np.complex128,
}


def parse_sizes(sizes: Sequence[str]) -> dict[str, str]:
    """`NAME=VALUE` pairs; a malformed or repeated one is a usage error (UsageError)."""
    parsed: dict[str, str] = {}
    for item in sizes:
        name, sep, value = item.partition("=")
        name = name.strip().lstrip("%")
        if not sep or not name or not value.strip():
            raise UsageError(f"--size expects NAME=VALUE, got '{item}'")
        if name in parsed:
            raise UsageError(f"--size {name} is given twice ({name}={parsed[name]} and {item})")
        parsed[name] = value.strip()
    return parsed


def layout_strides(memref: MemrefType, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides for an array of `memref`: the static ones as declared, each `?`
    one just past everything the modes before it span (packed column-major when all
    are `?`), so the modes never overlap."""
    span = max([1] + [st * n for st, n in zip(memref.stride, shape) if st != DYNAMIC])
    strides = []
    for st, n in zip(memref.stride, shape):
        if st == DYNAMIC:
            st = span
            span = max(span, st * n)
        strides.append(st)
    return tuple(strides)


def extent(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements from the first to the last one of a layout (0 if it has none)."""
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * st for n, st in zip(shape, strides))


def _random_values(rng: np.random.Generator, element: ScalarType, count: int) -> np.ndarray:
    dtype = NUMPY_DTYPES[element.name]
    if element.name == "bf16":
        values = rng.uniform(-1, 1, size=count).astype(np.float32)
        return (values.view(np.uint32) >> 16).astype(np.uint16)
    if element.is_int:
        return rng.integers(-8, 8, size=count).astype(dtype)
    data = rng.uniform(-1, 1, size=count)
    if element.is_complex:
        data = data + 1j * rng.uniform(-1, 1, size=count)
    return data.astype(dtype)


def strided_array(base: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """A view of the 1-D `base` with the given shape and element strides."""
    itemsize = base.itemsize
    return np.ndarray(shape, base.dtype, buffer=base, strides=tuple(st * itemsize for st in strides))


def random_array(rng: np.random.Generator, memref: MemrefType, shape: tuple[int, ...]) -> np.ndarray:
    """Random data laid out as `memref` declares (gaps of a strided layout random too)."""
    if memref.order == 0:
        return _random_values(rng, memref.element, 1).reshape(())
    strides = layout_strides(memref, shape)
    base = _random_values(rng, memref.element, max(extent(shape, strides), 1))
    return strided_array(base, shape, strides)


def _scalar(rng: np.random.Generator, t: ScalarType, text: str | None, chosen: int | None, name: str) -> Any:
    if chosen is not None:
        return chosen
    if text is not None:
        try:
            value = complex(text) if t.is_complex else float(text) if t.is_float else int(text)
        except ValueError:
            raise UsageError(f"--size {name}={text}: not a {t} value") from None
        limit = {"f16": 65504.0, "bf16": 3.39e38, "f32": 3.4028234e38, "c32": 3.4028234e38}.get(t.name)
        parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
        if limit is not None and any(abs(x) > limit for x in parts if x == x):
            raise UsageError(f"--size {name}={text}: out of range for {t} (at most {limit:g} in size)")
        return value
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


@dataclass
class Plan:
    """What `make_arguments` will allocate: per argument its member count and shape."""

    shapes: dict[str, tuple[int, ...]]
    members: dict[str, int]  # group arguments: member count
    nbytes: int


def _arrays(info: Any, shapes: dict[str, tuple[int, ...]]):
    """(parameter, its memref, its (member) shape, bytes of one array) per memref or group."""
    for p in info.params:
        t = p.type
        memref = t.memref if isinstance(t, GroupType) else t
        if isinstance(memref, MemrefType):
            shape = shapes[p.name]
            yield p, memref, shape, max(extent(shape, layout_strides(memref, shape)), 1) * memref.element.size


def _plan(info: Any, batch: int, chosen: Chosen, extents: dict[tuple[str, int], int] | None = None) -> Plan:
    members: dict[str, int] = {}
    nbytes = 0
    for p, _, _, one in _arrays(info, chosen.shapes):
        count = 1
        if isinstance(p.type, GroupType):  # a `?` count: what the batch reaches (mode -1)
            reached = max(batch, (extents or {}).get((p.name, -1), 0))
            count = members[p.name] = reached if p.type.size == DYNAMIC else p.type.size
        nbytes += count * one
    return Plan(chosen.shapes, members, nbytes)


def _free_memory() -> int:
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def _bytes_text(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB", "PB", "EB"):
        if n < 1000 or unit == "EB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return f"{n:.3g} EB"


def check_memory(plan: Plan, info: Any, max_array_bytes: int | None = None,
                 free_bytes: int | None = None) -> None:
    """Refuse arguments that do not fit in memory (a usage error, before allocating)."""
    free = _free_memory() if free_bytes is None else free_bytes
    biggest = ""
    largest = 0
    for p, memref, shape, one in _arrays(info, plan.shapes):
        if one > largest:
            largest = one
            dims = "x".join(map(str, shape)) or "scalar"
            biggest = f"%{p.name}: {memref.element} {dims}"
        if max_array_bytes is not None and one > max_array_bytes:
            raise UsageError(f"--size/--batch: {dims_of(p.name, memref, shape)} needs "
                             f"{_bytes_text(one)}, more than the {_bytes_text(max_array_bytes)} the "
                             f"device allows for one array")
    if plan.nbytes * HOST_MEMORY_SHARE > free:
        raise UsageError(f"--size/--batch: the arguments need {_bytes_text(plan.nbytes)} (the largest "
                         f"array is {biggest}, {_bytes_text(largest)}); `tinyc run` keeps about "
                         f"{HOST_MEMORY_SHARE} copies and this machine has {_bytes_text(free)} free")


def dims_of(name: str, memref: MemrefType, shape: tuple[int, ...]) -> str:
    return f"%{name} ({memref.element} {'x'.join(map(str, shape)) or 'scalar'})"


def make_arguments(fn: Any, info: Any, batch: int, sizes: dict[str, str], seed: int,
                   max_array_bytes: int | None = None) -> tuple[list[Any], Chosen]:
    """Random arguments for every parameter of a kernel (KernelInfo), with the sizes chosen."""
    rng = np.random.default_rng(seed)
    known = {p.name for p in info.params}
    for name in sizes:
        if name not in known:
            raise UsageError(f"--size {name}: the kernel has no argument '{name}'; "
                             f"arguments: {', '.join(p.name for p in info.params)}")
    batch_modes = {p.name: p.batch_mode for p in info.params
                   if p.batch_mode is not None and isinstance(p.type, MemrefType)}
    reached = info.launch.extents(batch) if info.launch is not None else {}
    extents = {(info.params[p].name, m): n for (p, m), n in reached.items()}
    chosen = choose_sizes(fn, batch, sizes, batch_modes, extents)
    plan = _plan(info, batch, chosen, extents)
    check_memory(plan, info, max_array_bytes)
    args: list[Any] = []
    for p in info.params:
        t = p.type
        if isinstance(t, ScalarType):
            args.append(_scalar(rng, t, sizes.get(p.name), chosen.scalars.get(p.name), p.name))
        elif isinstance(t, BoolType):
            args.append(_bool(p.name, sizes.get(p.name), rng))
        elif isinstance(t, MemrefType):
            args.append(random_array(rng, t, chosen.shapes[p.name]))
        elif isinstance(t, GroupType):
            shape = chosen.shapes[p.name]
            count = plan.members[p.name]
            if t.offset in (0, DYNAMIC):  # a list of arrays: the offset is 0
                args.append([random_array(rng, t.memref, shape) for _ in range(count)])
            else:
                args.append(_offset_group(rng, t, shape, count))
        else:
            raise UsageError(f"argument '{p.name}' of type {t} cannot be generated")
    return args, chosen


def _offset_group(rng: np.random.Generator, t: GroupType, shape: tuple[int, ...], count: int) -> Any:
    """Members of a group with a static offset k: flat buffers with k elements before each
    memref, given as tinyc.Group with the memref's shape and strides (tinyc/runtime/groups.py)."""
    from tinyc.runtime.groups import Group

    strides = layout_strides(t.memref, shape)
    size = t.offset + max(extent(shape, strides), 1)
    return Group([_random_values(rng, t.memref.element, size) for _ in range(count)], offset=t.offset,
                 shape=shape, stride=strides)


def group_members(arg: Any) -> list[Any]:
    """The member arrays of a group argument (a list, or a tinyc.Group of them)."""
    return arg if isinstance(arg, list) else list(arg.arrays)


def describe_arguments(info: Any, args: Sequence[Any]) -> str:
    """One line with every argument's size or value, as `run` chose them."""
    parts = []
    for p, arg in zip(info.params, args):
        t = p.type
        if isinstance(t, BoolType):
            parts.append(f"%{p.name} = {str(arg).lower()}")
        elif isinstance(t, ScalarType):
            value = f"{arg:.4g}" if isinstance(arg, (float, complex)) else str(arg)
            parts.append(f"%{p.name} = {value}")
        elif isinstance(t, GroupType):
            members = group_members(arg)
            shape = arg.shape if not isinstance(arg, list) else members[0].shape if members else None
            dims = "x".join(map(str, shape)) if shape is not None else "-"
            offset = f" at offset {arg.offset}" if not isinstance(arg, list) else ""
            parts.append(f"%{p.name}: {len(members)} x {t.memref.element} {dims}{offset}")
        else:
            dims = "x".join(map(str, arg.shape)) or "scalar"
            strided = "" if arg.flags.f_contiguous or arg.ndim < 2 else \
                f" strides {','.join(str(s // arg.itemsize) for s in arg.strides)}"
            parts.append(f"%{p.name}: {t.element} {dims}{strided}")
    return "arguments: " + ", ".join(parts)


def device_array_limit(kernel: Any) -> int | None:
    """The largest allocation the kernel's device allows (None if it does not say)."""
    try:
        return int(kernel.queue.sycl_device.max_mem_alloc_size)
    except Exception:
        return None
