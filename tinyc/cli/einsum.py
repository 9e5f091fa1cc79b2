"""`tinyc einsum SUBSCRIPTS --shape A=16x8x1000 ...`: the kernel of a contraction.

Prints the generated tensor-language program (`--emit ir`, the default) or
the IR after the passes (`--emit lowered`) without touching a device; with
`--bench` it times the kernel through `tinyc.einsum` (NumPy arrays in and
out, kernel cached) against `np.einsum(..., optimize=True)`, `np.einsum` and
`opt_einsum.contract` (when installed), interleaved.
NumPy and the compiler load only when the command runs.
"""

from __future__ import annotations

import re
import time

import click

from tinyc.cli.common import EXIT_INPUT, error

_DTYPES = {"i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "f16": "float16",
           "f32": "float32", "f64": "float64", "c32": "complex64", "c64": "complex128"}
"""The language's types by NumPy name (tinyc.contractions.compiled.EINSUM_TYPES, without
importing NumPy before the command runs)."""
_SHAPE = re.compile(r"(?:([A-Za-z_][A-Za-z0-9_]*)=)?((?:\d+(?:x\d+)*)?)")


def parse_shape(text: str) -> tuple[str | None, tuple[int, ...]]:
    """`A=16x8x1000` (or `16x8x1000`, or `A=` for a scalar) → ("A", (16, 8, 1000))."""
    m = _SHAPE.fullmatch(text.strip())
    if m is None:
        raise click.BadParameter(f"{text!r}: write NAME=D1xD2x... (e.g. A=16x8x1000)", param_hint="--shape")
    name, dims = m.groups()
    return name, tuple(int(d) for d in dims.split("x")) if dims else ()


@click.command()
@click.argument("subscripts")
@click.option("--shape", "shapes", multiple=True, metavar="NAME=D1xD2x...",
              help="Shape of the next operand, in operand order (repeat per operand).")
@click.option("--dtype", type=click.Choice(sorted(_DTYPES)), default="f32", show_default=True)
@click.option("--emit", type=click.Choice(["ir", "lowered"]), default="ir", show_default=True,
              help="Print the generated program, or the IR after the passes.")
@click.option("--epilogue", type=click.Choice(["none", "relu"]), default="none", show_default=True)
@click.option("--bench", "do_bench", is_flag=True,
              help="Time tinyc.einsum against np.einsum (optimize=True and not) and "
                   "opt_einsum instead of printing.")
@click.option("--repeat", type=click.IntRange(min=1), default=15, show_default=True,
              help="Timed rounds for --bench.")
@click.option("--device", default=None, help="SYCL filter string for --bench (default: first SPIR-V device).")
def einsum(subscripts: str, shapes: tuple[str, ...], dtype: str, emit: str, epilogue: str,
           do_bench: bool, repeat: int, device: str | None) -> None:
    """Generate the kernel of an einsum contraction (C-order operands of the given shapes)."""
    parsed = [parse_shape(s) for s in shapes]
    relu = None if epilogue == "none" else epilogue
    try:
        if do_bench:
            _bench(subscripts, [s for _, s in parsed], _DTYPES[dtype], relu, repeat, device)
        else:
            click.echo(_program_text(subscripts, parsed, _DTYPES[dtype], relu, emit), nl=False)
    except (ValueError, TypeError) as err:   # bad subscripts, shapes or dtypes: errors in the input
        error(str(err))
        raise SystemExit(EXIT_INPUT) from None


def _analysis(subscripts: str, shapes: list[tuple[int, ...]], dtype: str, relu: str | None):
    import numpy as np

    from tinyc.contractions.compiled import Signature, analyse

    sigs = []
    for shape in shapes:
        probe = np.empty((0,), dtype)
        strides, step = [], probe.itemsize
        for n in reversed(shape):
            strides.insert(0, step)
            step *= max(n, 1)
        sigs.append(Signature("numpy", probe.dtype, shape, tuple(strides)))
    return analyse(subscripts, sigs, None, None, relu)


def _program_text(subscripts: str, parsed: list, dtype: str, relu: str | None, emit: str) -> str:
    from tinyc.compiler import compile_to_spirv
    from tinyc.contractions.compiled import kernel_spec
    from tinyc.contractions.emit import build_kernel
    from tinyc.editor.format import format_source

    a = _analysis(subscripts, [s for _, s in parsed], dtype, relu)
    if a.empty:
        return "; the result has no elements: no kernel\n"
    names = _names(parsed)
    spec = kernel_spec(a, relu, names=names)
    source = build_kernel(spec).checked_source()
    shapes = ", ".join(f"{n}={'x'.join(map(str, s)) or '()'}" for n, (_, s) in zip(names, parsed))
    head = (f"; einsum '{subscripts}' with {shapes} ({dtype}, C order)\n"
            + "".join(f"; {line}\n" for line in launch_notes(spec, a))
            + f"; path: {'; '.join(_path(spec.plan, a))}\n")
    if emit == "ir":
        return format_source(head + source, "<einsum>")
    result = compile_to_spirv(source, "<einsum>", validate=False)
    return head + result.stages["lowered"]


def _names(parsed: list) -> list[str]:
    """The operands' parameter names: the user's (`--shape K=...` gives %K), else A, B, ...;
    a name that repeats, or is taken by alpha, beta or out, gets the default."""
    from tinyc.contractions.emit import operand_names

    defaults = operand_names(len(parsed))
    names: list[str] = []
    for k, (name, _) in enumerate(parsed):
        taken = {"alpha", "beta", "out", "scratch", *names}
        names.append(name if name and name not in taken else defaults[k])
    return names


def launch_notes(spec, a) -> list[str]:
    """How the printed kernel is launched: its batch labels and the work-groups per size."""
    plan = spec.plan
    if not plan.dynamic:
        return [f"static shapes (no batch label); launch {plan.n_groups} work-group"
                f"{'s' if plan.n_groups != 1 else ''}"]
    sizes = {label: a.sizes[label] for label in plan.dynamic}
    labels = ", ".join(sorted(plan.dynamic))
    lines = [f"batch label{'s' if len(plan.dynamic) > 1 else ''} {labels}: `?` modes, one kernel for every "
             f"batch size"]
    for label, parts in sorted(a.joined.items()):
        static = "*".join(str(a.subscripts.sizes[part]) for part in parts[:-1])
        lines.append(f"{label}: the modes {', '.join(parts)} joined into one (they lie together in memory in "
                     f"every tensor): n{label} = {static}*n{parts[-1]}")
    first = plan.groups[0]
    if plan.lanes is not None:
        per = (f"chunks of {plan.lanes.chunk} entries along {first}, one subgroup of "
               f"{plan.lanes.sg} lanes per work-group")
        count = f"ceil(n{first}/{plan.lanes.chunk})"
    elif plan.tile:
        per, count = f"tiles of {plan.tile} entries along {first}", f"ceil(n{first}/{plan.tile})"
        if plan.cut:
            per += f", each in {plan.pieces} pieces of {plan.cut} along {plan.cut_label}"
            count += f"*{plan.pieces}"
    elif plan.block > 1:
        per, count = f"blocks of {plan.block} entries", f"ceil({'*'.join('n' + g for g in plan.groups)}/{plan.block})"
    else:
        per, count = "one entry each", "*".join("n" + g for g in plan.groups)
    others = [g for g in plan.groups[1:] if plan.lanes is not None or plan.tile]
    if others:
        count += "*" + "*".join("n" + g for g in others)
    at = ", ".join(f"n{label} = {n}" for label, n in sorted(sizes.items()))
    lines.append(f"launch: batch = {count} work-groups ({plan.groups_for(a.sizes)} at {at}); {per}")
    return lines


def _path(plan, a) -> list[str]:
    from tinyc.contractions.api import describe_plan

    return describe_plan(plan, a)


def _bench(subscripts: str, shapes: list[tuple[int, ...]], dtype: str, relu: str | None, repeat: int,
           device: str | None) -> None:
    import numpy as np

    import tinyc

    rng = np.random.default_rng(0)
    operands = []
    for shape in shapes:
        values = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            values = values + 1j * rng.standard_normal(shape)
        operands.append(values.astype(dtype))
    start = time.perf_counter()
    result = tinyc.einsum(subscripts, *operands, device=device, epilogue=relu)
    first = time.perf_counter() - start
    want = np.einsum(subscripts, *operands, optimize=True)
    if relu:
        want = np.maximum(want, 0)
    error = float(np.abs(np.asarray(result) - want).max(initial=0.0)) / max(1.0, float(np.abs(want).max(initial=0.0)))
    sides = {"tinyc.einsum": lambda: tinyc.einsum(subscripts, *operands, device=device, epilogue=relu),
             "np.einsum(optimize=True)": lambda: np.einsum(subscripts, *operands, optimize=True),
             "np.einsum": lambda: np.einsum(subscripts, *operands)}
    try:  # the fastest thing a user would otherwise call may be opt_einsum, when it is installed
        import opt_einsum

        sides["opt_einsum.contract"] = lambda: opt_einsum.contract(subscripts, *operands)
    except ImportError:
        pass
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(2):
        for run in sides.values():
            run()
    for r in range(repeat):
        order = list(sides.items())
        order = order[r % len(order):] + order[: r % len(order)]
        for name, run in order:
            t0 = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t0)
    c = tinyc.contract(subscripts, *operands, device=device, epilogue=relu)
    click.echo(f"einsum '{subscripts}' {' '.join('x'.join(map(str, s)) for s in shapes)} {dtype}")
    click.echo(f"path: {'; '.join(c.path)}   first call (compile + JIT): {first * 1e3:.0f} ms   "
               f"max error vs NumPy: {error:.1e}")
    medians = {name: float(np.median(t)) for name, t in times.items()}
    for name, seconds in medians.items():
        click.echo(f"  {name:26s} {seconds * 1e3:9.3f} ms   {c.flops / seconds / 1e9:7.2f} GFLOP/s")
    mine = medians.pop("tinyc.einsum")
    fastest = min(medians, key=medians.__getitem__)
    click.echo(f"  speedup over NumPy: {medians['np.einsum(optimize=True)'] / mine:.2f}x "
               f"np.einsum(optimize=True), {medians[fastest] / mine:.2f}x the fastest ({fastest})")
