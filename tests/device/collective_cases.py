"""Kernel text, host data and NumPy references for the collective device tests.

A `Case` is one kernel (one function of a shared program) plus the runs to
check it with. Every memref operand is batched: a trailing `?` mode selected
by `builtin.group_id` (`view`), a group of arrays (`group`), or one array
shared by all work-groups (`shared`, for atomic accumulation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

BATCH = 3

INT_TYPES = ("i8", "i16", "i32", "i64")
COMPLEX_TYPES = ("c32", "c64")
NUMPY = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "c32": np.complex64,
         "c64": np.complex128, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
         "bf16": np.uint16}
RTOL = {"f16": 2e-2, "bf16": 3e-2, "f32": 2e-5, "c32": 2e-5, "f64": 1e-12, "c64": 1e-12}


# ------------------------------------------------------------------ values

def random_values(rng: np.random.Generator, t: str, shape: Sequence[int]) -> np.ndarray:
    """Random column-major data of type t; small values exact in every type involved."""
    shape = tuple(shape)
    if t in INT_TYPES:
        data = rng.integers(-4, 5, size=shape).astype(NUMPY[t])
    elif t == "bf16":  # quarters in [-2, 2] are exact in bf16: the pattern is the top half
        values = (rng.integers(-8, 9, size=shape) / 4).astype(np.float32)
        data = (values.view(np.uint32) >> 16).astype(np.uint16)
    elif t in COMPLEX_TYPES:
        data = (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(NUMPY[t])
    elif t == "f16":
        data = (rng.integers(-16, 17, size=shape) / 16).astype(np.float16)
    else:
        data = rng.uniform(-1, 1, shape).astype(NUMPY[t])
    return np.array(data, order="F")  # keeps order 0 (asfortranarray would not)


def numeric(t: str, data: np.ndarray) -> np.ndarray:
    """Values of host data as float64 / complex128 / int64 for the reference."""
    data = np.asarray(data)
    if t == "bf16":
        return (data.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if t in INT_TYPES:
        return data.astype(np.int64)
    if t in COMPLEX_TYPES:
        return data.astype(np.complex128)
    return data.astype(np.float64)


def garbage(t: str, shape: Sequence[int]) -> np.ndarray:
    """What an output holds when beta = 0 must not read it: NaN, or a huge integer."""
    if t in INT_TYPES:
        return np.array(np.full(shape, np.iinfo(NUMPY[t]).max // 3, NUMPY[t]), order="F")
    return np.array(np.full(shape, np.nan, NUMPY[t]), order="F")


def scalar_arg(t: str, value: complex) -> Any:
    """A kernel scalar argument of type t."""
    if t in INT_TYPES:
        return int(value.real if isinstance(value, complex) else value)
    if t in COMPLEX_TYPES:
        return complex(value)
    if t == "f16":
        return np.float16(value.real if isinstance(value, complex) else value)
    return float(value.real if isinstance(value, complex) else value)


def literal(t: str, value: complex) -> str:
    """`value` as a constant of type t in the tensor language."""
    if t in INT_TYPES:
        return str(int(value.real if isinstance(value, complex) else value))
    if t in COMPLEX_TYPES:
        v = complex(value)
        return f"[{float(v.real)!r}, {float(v.imag)!r}]"
    return repr(float(value.real if isinstance(value, complex) else value))


def check_close(got: np.ndarray, want: np.ndarray, t: str, scale: float, what: str) -> None:
    """Compare a device result with the float64 reference, per the output type."""
    got_values = numeric(t, got)
    if t in INT_TYPES:
        np.testing.assert_array_equal(got_values, want, err_msg=what)
        return
    rtol = RTOL[t]
    np.testing.assert_allclose(got_values, want, rtol=rtol, atol=rtol * max(1.0, scale),
                               err_msg=what)


# ------------------------------------------------------------------ operands

def memref_text(t: str, shape: Sequence[int | None]) -> str:
    return "memref<" + t + "".join("x" + ("?" if s is None else str(s)) for s in shape) + ">"


@dataclass
class Operand:
    """A memref operand of the tested instruction and how the batch reaches it."""

    name: str
    type: str
    shape: tuple[int, ...]           # the shape compiled in; sizes at run time may differ
    dynamic: bool = False            # compile the sizes as `?`
    via: str = "view"                # "view" | "group" | "shared"

    @property
    def local(self) -> str:
        return f"%{self.name}" if self.via == "shared" else f"%{self.name}_g"

    def inner_type(self) -> str:
        return memref_text(self.type, [None if self.dynamic else s for s in self.shape])

    def param(self) -> str:
        inner = [None if self.dynamic else s for s in self.shape]
        if self.via == "view":
            return f"%{self.name}: {memref_text(self.type, [*inner, None])}"
        if self.via == "group":
            return f"%{self.name}: group<{self.inner_type()}x?>"
        return f"%{self.name}: {self.inner_type()}"

    def bind(self) -> str:
        if self.via == "view":
            modes = ", ".join([":"] * len(self.shape) + ["%g"])
            return f"{self.local} = subview %{self.name}[{modes}] : {self.inner_type()}"
        if self.via == "group":
            return f"{self.local} = load %{self.name}[%g] : {self.inner_type()}"
        return ""

    def host(self, members: list[np.ndarray]) -> Any:
        """The kernel argument holding one array per batch entry."""
        if self.via == "view":
            return np.asfortranarray(np.stack(members, axis=-1))
        if self.via == "group":
            return [np.array(m, order="F") for m in members]
        return members[0]

    def member(self, host: Any, g: int) -> np.ndarray:
        if self.via == "view":
            return host[..., g]
        if self.via == "group":
            return host[g]
        return host


# ------------------------------------------------------------------ cases

Reference = Callable[[dict[str, np.ndarray], complex, complex], np.ndarray]
"""(numeric inputs by operand name, alpha, beta-times-old-output folded in) -> result."""


@dataclass
class Run:
    """One launch: the sizes of every operand and the runtime alpha/beta."""

    shapes: dict[str, tuple[int, ...]]
    alpha: complex | float | int = 1
    beta: complex | float | int = 0


@dataclass
class Case:
    """One kernel of a program and the launches that check it."""

    name: str
    program: str
    instruction: str                       # e.g. "gemm.n.t" (".atomic" included)
    inputs: list[Operand]
    output: Operand
    scalar_type: tuple[str, str]           # types of alpha and beta
    alpha: str                             # "arg" or a literal for a constant
    beta: str
    reference: Callable[[list[np.ndarray]], np.ndarray]   # numeric inputs -> op(...) result
    runs: list[Run]
    extra: str = ""                        # e.g. ", 1" mode of cumsum, spliced after A
    attributes: str = ""
    scale: Callable[[list[np.ndarray]], float] = lambda xs: 1.0
    seed: int = 0

    def text(self) -> str:
        params = [f"%alpha: {self.scalar_type[0]}", f"%beta: {self.scalar_type[1]}"]
        params += [op.param() for op in (*self.inputs, self.output)]
        lines = ["%g = builtin.group_id : index"]
        lines += [op.bind() for op in (*self.inputs, self.output) if op.bind()]
        alpha, beta = "%alpha", "%beta"
        if self.alpha != "arg":
            lines.append(f"%ca = constant {self.alpha} : {self.scalar_type[0]}")
            alpha = "%ca"
        if self.beta != "arg":
            lines.append(f"%cb = constant {self.beta} : {self.scalar_type[1]}")
            beta = "%cb"
        ins = [op.local for op in self.inputs]
        if self.extra:
            ins[0] += self.extra
        lines.append(f"{self.instruction} {alpha}, {', '.join(ins)}, {beta}, {self.output.local}")
        attrs = f" attributes {self.attributes}" if self.attributes else ""
        body = "\n".join("  " + line for line in lines)
        return f"func @{self.name}({', '.join(params)}){attrs} {{\n{body}\n}}\n"

    @property
    def atomic_shared(self) -> bool:
        return self.output.via == "shared"

    def alpha_value(self, run: Run) -> complex:
        return complex(_parse_literal(self.alpha)) if self.alpha != "arg" else complex(run.alpha)

    def beta_value(self, run: Run) -> complex:
        return complex(_parse_literal(self.beta)) if self.beta != "arg" else complex(run.beta)

    def execute(self, program: Any, run: Run, rng: np.random.Generator) -> None:
        """Launch once and compare every batch entry with NumPy."""
        members = {op.name: [random_values(rng, op.type, run.shapes[op.name]) for _ in range(BATCH)]
                   for op in self.inputs}
        out = self.output
        alpha, beta = self.alpha_value(run), self.beta_value(run)
        out_shape = run.shapes[out.name]
        n_out = 1 if self.atomic_shared else BATCH
        if beta == 0:
            out_members = [garbage(out.type, out_shape) for _ in range(n_out)]
        else:
            out_members = [random_values(rng, out.type, out_shape) for _ in range(n_out)]
        args = [scalar_arg(self.scalar_type[0], run.alpha), scalar_arg(self.scalar_type[1], run.beta)]
        hosts = [op.host(members[op.name]) for op in self.inputs]
        out_host = out.host(out_members)
        before = [numeric(out.type, m).copy() for m in out_members]
        program[self.name](*args, *hosts, out_host, batch=BATCH)
        results = []
        for g in range(BATCH):
            ins = [numeric(op.type, members[op.name][g]) for op in self.inputs]
            results.append((alpha * self.reference(ins), ins))
        if self.atomic_shared:
            want = sum(r for r, _ in results)
            if beta != 0:
                want = want + beta * before[0]
            scale = sum(self.scale(ins) for _, ins in results) + abs(beta) * _max_abs(before[0])
            check_close(out.member(out_host, 0), _real_if(out.type, want), out.type, scale,
                        f"{self.name}: shared output")
            return
        for g in range(BATCH):
            want, ins = results[g]
            if beta != 0:
                want = want + beta * before[g]
            scale = abs(alpha) * self.scale(ins) + abs(beta) * _max_abs(before[g])
            check_close(out.member(out_host, g), _real_if(out.type, want), out.type, scale,
                        f"{self.name}: batch entry {g}, run {run}")


def _max_abs(x: np.ndarray) -> float:
    return float(np.max(np.abs(x))) if x.size else 0.0


def _real_if(t: str, x: Any) -> np.ndarray:
    x = np.asarray(x)
    if t not in COMPLEX_TYPES and np.iscomplexobj(x):
        x = x.real
    if t in INT_TYPES:
        return np.rint(x).astype(np.int64)
    return x


def _parse_literal(text: str) -> complex:
    text = text.strip()
    if text.startswith("["):
        re_, im = text[1:-1].split(",")
        return complex(float(re_), float(im))
    return complex(float(text))


@dataclass
class ProgramCache:
    """Compiled programs by name, so each program is JIT-compiled once per module."""

    cases: dict[str, list[Case]]
    device: Any = None
    compiled: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str) -> Any:
        import tinyc

        program = self.compiled.get(name)
        if program is None:
            source = "\n".join(case.text() for case in self.cases[name])
            program = tinyc.compile(source, name=f"{name}.ir", device=self.device)
            self.compiled[name] = program
        return program
