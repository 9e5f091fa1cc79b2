"""The benchmark cases: data, reference, NumPy versions, OpenCL C variants, tinyc ABI.

Every case describes one piece of work over a batch in four ways that must
agree: a float64 NumPy reference (the correctness oracle), NumPy versions
on the arrays as the kernel lays them out (column-major, batch last), the
hand-written OpenCL C variants, and the tinyc kernel with its arguments for
the public API and for a raw dpctl submission (the ABI of DESIGN.md). The
batch sizes make each case run roughly 5-50 ms on the 2-core CPU device.
"""

from __future__ import annotations

import copy
import ctypes
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

import numpy as np

from benchmarks.device import UsmArray, pointer_table
from benchmarks.opencl_c import ClVariant, gemm_variants, with_subgroup_ids

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"

Arrays = dict[str, np.ndarray]
NumpyVersion = Callable[[Arrays], None]  # updates the output arrays in place


@dataclass
class DeviceData:
    """A case's arrays in USM memory (plus whatever its ABI needs)."""

    arrays: dict[str, UsmArray]
    extra: dict[str, Any] = field(default_factory=dict)


class Case:
    """One benchmark case; subclasses fill in the work."""

    name: str = ""
    title: str = ""
    ir_file: str = ""
    kernel: str = ""
    dtype: type = np.float32
    batch: int = 1
    outputs: tuple[str, ...] = ()

    def __init__(self, batch: int | None = None):
        if batch is not None:
            self.batch = batch

    # -- work ----------------------------------------------------------------
    @property
    def flops(self) -> float:
        """Floating-point operations of the whole batch, by tinyc's work model.

        The model of `tinyc bench` (tinyc.harness.work, defined on the
        instruction classes): the kernel's collectives with their real sizes,
        counted on one work-group by the reference interpreter.
        """
        return self.group_flops * self.batch

    @cached_property
    def group_flops(self) -> float:
        """Flops of one work-group (batch entry) of the kernel."""
        from tinyc.harness.work import group_flops
        from tinyc.compiler import check_source

        one = copy.copy(self)
        one.batch = 1
        args = one.tinyc_args(one.host_data(one.inputs(np.random.default_rng(0))))
        return group_flops(check_source(self.source, self.ir_file)[self.kernel], args, batch=1)

    @property
    def bytes(self) -> float:
        """Minimum memory traffic of the whole batch: each input read once, each output written once."""
        raise NotImplementedError

    def inputs(self, rng: np.random.Generator) -> Arrays:
        """Host arrays (Fortran order), including the outputs' initial values."""
        raise NotImplementedError

    def reference(self, a: Arrays) -> Arrays:
        """Expected outputs, computed in float64 from the initial arrays."""
        raise NotImplementedError

    def numpy_versions(self) -> dict[str, NumpyVersion]:
        """NumPy formulations of the same work; the fastest is reported."""
        raise NotImplementedError

    # -- device sides ------------------------------------------------------------
    def to_device(self, queue: Any, a: Arrays) -> DeviceData:
        return DeviceData({k: UsmArray(queue, v) for k, v in a.items()})

    def host_data(self, a: Arrays) -> DeviceData:
        """The host arrays in the shape `tinyc_args` takes (for the reference interpreter)."""
        return DeviceData(dict(a))

    def opencl_variants(self) -> list[ClVariant]:
        raise NotImplementedError

    def opencl_args(self, d: DeviceData, variant: ClVariant) -> list:
        raise NotImplementedError

    def tinyc_args(self, d: DeviceData) -> tuple:
        """Arguments of `kernel(*args, batch=N)` through tinyc's public API."""
        raise NotImplementedError

    def raw_args(self, d: DeviceData) -> list:
        """The same call packed by hand into the kernel ABI (DESIGN.md)."""
        raise NotImplementedError

    @property
    def source(self) -> str:
        return (KERNEL_DIR / self.ir_file).read_text()

    @property
    def tolerance(self) -> float:
        return 1e-4 if self.dtype == np.float32 else 1e-11


def _rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    return np.asfortranarray(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))


def _batched(x: np.ndarray) -> np.ndarray:
    """(m, n, batch) column-major -> (batch, m, n) view for matmul (no copy)."""
    return x.transpose(2, 0, 1)


def _i64(v: int) -> ctypes.c_int64:
    return ctypes.c_int64(int(v))


def _scalar(dtype: type, v: float) -> Any:
    return ctypes.c_float(v) if dtype == np.float32 else ctypes.c_double(v)


# --- batched GEMM, static square sizes -----------------------------------------
GEMM_FOOTPRINT = 8 << 20
"""Bytes of A, B and C over the batch. The data of a launch stays in the L3 cache
(32 MiB here, shared with whatever else runs on the VM: at 24 MiB a 64³ gemm
fell from ~150 to ~15 GFLOP/s while other jobs ran), so the cases measure the
kernels, not the memory of the shared VM (8-24 GB/s measured by the streams of
`tinyc bench`). A 64³ gemm is then compute bound, as on a machine with more
bandwidth."""

GEMM_SOURCE = """; Batched GEMM benchmark: C[:,:,g] := op(A[:,:,g]) · op(B[:,:,g]) (gemm.{ta}.{tb}),
; {n}×{n} {t} matrices, one work-group per batch instance g. Generated by benchmarks/cases.py.
func @gemm_{ta}{tb}(%A: memref<{t}x{n}x{n}x?>, %B: memref<{t}x{n}x{n}x?>, %C: memref<{t}x{n}x{n}x?>) {{
  %g = builtin.group_id : index
  %a = subview %A[0:{n}, 0:{n}, %g] : memref<{t}x{n}x{n}>
  %b = subview %B[0:{n}, 0:{n}, %g] : memref<{t}x{n}x{n}>
  %c = subview %C[0:{n}, 0:{n}, %g] : memref<{t}x{n}x{n}>
  %one = constant 1.0 : {t}
  %zero = constant 0.0 : {t}
  gemm.{ta}.{tb} %one, %a, %b, %zero, %c
}}
"""


class Gemm(Case):
    """C := op(A)·op(B) over a batch of n×n matrices (alpha = 1, beta = 0 in the source)."""

    outputs = ("C",)

    def __init__(self, n: int, dtype: type, trans: bool, batch: int | None = None,
                 trans_b: bool = False):
        self.n, self.dtype, self.trans, self.trans_b = n, dtype, trans, trans_b
        t = "f32" if dtype == np.float32 else "f64"
        op = ("t" if trans else "n") + ("t" if trans_b else "n")
        self.name = f"gemm_{op}_{t}_{n}"
        self.title = f"gemm.{op[0]}.{op[1]} {t} {n}×{n}"
        self.ir_file = f"{self.name}.ir (generated)"
        self.kernel = f"gemm_{op}"
        default = GEMM_FOOTPRINT // (3 * n * n * np.dtype(dtype).itemsize)
        super().__init__(batch if batch is not None else default)

    @property
    def source(self) -> str:
        t = "f32" if self.dtype == np.float32 else "f64"
        return GEMM_SOURCE.format(n=self.n, t=t, ta="t" if self.trans else "n",
                                  tb="t" if self.trans_b else "n")

    @property
    def spec(self) -> str:
        """The einsum of the product (A and B batched along the last mode)."""
        a = "kib" if self.trans else "ikb"
        b = "jkb" if self.trans_b else "kjb"
        return f"{a},{b}->ijb"

    @property
    def bytes(self) -> float:
        return 3.0 * self.n**2 * np.dtype(self.dtype).itemsize * self.batch

    def inputs(self, rng: np.random.Generator) -> Arrays:
        shape = (self.n, self.n, self.batch)
        return {"A": _rand(rng, shape, self.dtype), "B": _rand(rng, shape, self.dtype),
                "C": np.zeros(shape, self.dtype, order="F")}

    def reference(self, a: Arrays) -> Arrays:
        return {"C": np.einsum(self.spec, a["A"].astype(np.float64), a["B"].astype(np.float64))}

    def numpy_versions(self) -> dict[str, NumpyVersion]:
        def matmul(a: Arrays) -> None:
            op_a = _batched(a["A"]).transpose(0, 2, 1) if self.trans else _batched(a["A"])
            op_b = _batched(a["B"]).transpose(0, 2, 1) if self.trans_b else _batched(a["B"])
            np.matmul(op_a, op_b, out=_batched(a["C"]))

        def einsum(a: Arrays) -> None:
            np.einsum(self.spec, a["A"], a["B"], out=a["C"])

        return {"matmul": matmul, "einsum": einsum}

    def opencl_variants(self) -> list[ClVariant]:
        return gemm_variants(self.n, "float" if self.dtype == np.float32 else "double",
                             self.trans, self.trans_b)

    def opencl_args(self, d: DeviceData, variant: ClVariant) -> list:
        return [d.arrays[k].memory for k in ("A", "B", "C")]

    def tinyc_args(self, d: DeviceData) -> tuple:
        return tuple(d.arrays[k] for k in ("A", "B", "C"))

    def raw_args(self, d: DeviceData) -> list:
        # memref<T x n x n x ?>: pointer, then the one `?` (the batch size).
        out: list = []
        for k in ("A", "B", "C"):
            out += [d.arrays[k].memory, _i64(self.batch)]
        return out


# --- the spec's fused kernel ------------------------------------------------------
class Fused(Case):
    """D[:,:,g] += alpha · A_g · Bᵀ · C with A a group (pointer array) of 16×8 matrices."""

    name = "fused"
    title = "fused D+=αABᵀC"
    ir_file = "fused.ir"
    kernel = "fused_kernel"
    batch = 100_000
    outputs = ("D",)
    alpha = 0.5

    @property
    def bytes(self) -> float:
        # A_g (512 B) and its pointer (8 B), D read and written (2 × 1 KiB); B, C once.
        return (512 + 8 + 2 * 1024) * float(self.batch) + 4 * (64 + 128)

    def inputs(self, rng: np.random.Generator) -> Arrays:
        return {"A": _rand(rng, (16, 8, self.batch), np.float32), "B": _rand(rng, (8, 8), np.float32),
                "C": _rand(rng, (8, 16), np.float32), "D": _rand(rng, (16, 16, self.batch), np.float32)}

    def reference(self, a: Arrays) -> Arrays:
        A, B, C, D = (a[k].astype(np.float64) for k in "ABCD")
        return {"D": D + self.alpha * np.einsum("ikb,lk,lj->ijb", A, B, C, optimize=True)}

    def numpy_versions(self) -> dict[str, NumpyVersion]:
        """The same two products as the kernel (A·Bᵀ first), over the stacked group.

        The group's members are views into one (16, 8, batch) allocation, so
        NumPy sees them as one stacked array. (Reassociating to A·(BᵀC) would
        halve the work; that is a different kernel, so it is not used here.)
        """
        alpha = np.float32(self.alpha)
        tmp: dict[str, np.ndarray] = {}

        def matmul(a: Arrays) -> None:
            if "T" not in tmp:
                tmp["T"] = np.empty((self.batch, 16, 8), np.float32)
                tmp["X"] = np.empty((self.batch, 16, 16), np.float32)
            np.matmul(_batched(a["A"]), a["B"].T, out=tmp["T"])
            np.matmul(tmp["T"], a["C"], out=tmp["X"])
            tmp["X"] *= alpha
            _batched(a["D"])[...] += tmp["X"]

        return {"matmul": matmul}

    def to_device(self, queue: Any, a: Arrays) -> DeviceData:
        data = super().to_device(queue, a)
        base = data.arrays["A"]
        members = [base.view(g * 128, (16, 8)) for g in range(self.batch)]
        addresses = base.address + 4 * 128 * np.arange(self.batch, dtype=np.uint64)
        data.extra["members"] = members
        data.extra["table"] = pointer_table(queue, addresses)
        return data

    def host_data(self, a: Arrays) -> DeviceData:
        return DeviceData(dict(a), {"members": [a["A"][:, :, g] for g in range(self.batch)]})

    def opencl_variants(self) -> list[ClVariant]:
        rows = [ClVariant("fused.cl", "fused", (16, wgy), {"WGY": wgy}, f"rows nc={16 // wgy}")
                for wgy in (1, 2)]
        return with_subgroup_ids(rows + [ClVariant("fused.cl", "fused_local", (16, 1), {}, "local tmp")])

    def opencl_args(self, d: DeviceData, variant: ClVariant) -> list:
        return [ctypes.c_float(self.alpha), d.extra["table"], d.arrays["B"].memory,
                d.arrays["C"].memory, d.arrays["D"].memory]

    def tinyc_args(self, d: DeviceData) -> tuple:
        return (np.float32(self.alpha), d.extra["members"], d.arrays["B"], d.arrays["C"], d.arrays["D"])

    def raw_args(self, d: DeviceData) -> list:
        # group<memref<f32x16x8>x?>: pointer table, (no `?` in the memref), group size.
        return [ctypes.c_float(self.alpha), d.extra["table"], _i64(self.batch),
                d.arrays["B"].memory, d.arrays["C"].memory,
                d.arrays["D"].memory, _i64(self.batch)]


# --- axpby and cumsum over 64×64×batch -----------------------------------------------
class _Elementwise64(Case):
    """Shared shape of axpby and cumsum: (alpha, A, beta, B) over 64×64×batch f32."""

    batch = 5_000
    outputs = ("B",)
    alpha, beta = 1.5, 0.5

    def inputs(self, rng: np.random.Generator) -> Arrays:
        shape = (64, 64, self.batch)
        return {"A": _rand(rng, shape, np.float32), "B": _rand(rng, shape, np.float32)}

    @property
    def bytes(self) -> float:
        return 3 * 64 * 64 * 4 * float(self.batch)  # read A, read B, write B

    def opencl_args(self, d: DeviceData, variant: ClVariant) -> list:
        return [ctypes.c_float(self.alpha), d.arrays["A"].memory, ctypes.c_float(self.beta), d.arrays["B"].memory]

    def tinyc_args(self, d: DeviceData) -> tuple:
        return (np.float32(self.alpha), d.arrays["A"], np.float32(self.beta), d.arrays["B"])

    def raw_args(self, d: DeviceData) -> list:
        return [ctypes.c_float(self.alpha), d.arrays["A"].memory, _i64(self.batch),
                ctypes.c_float(self.beta), d.arrays["B"].memory, _i64(self.batch)]


class Axpby(_Elementwise64):
    """B := alpha·A + beta·B (axpby.n) per 64×64 matrix."""

    name = "axpby_f32_64"
    title = "axpby.n f32 64×64"
    ir_file = "axpby_f32_64.ir"
    kernel = "axpby"

    def reference(self, a: Arrays) -> Arrays:
        return {"B": self.alpha * a["A"].astype(np.float64) + self.beta * a["B"].astype(np.float64)}

    def numpy_versions(self) -> dict[str, NumpyVersion]:
        alpha, beta = np.float32(self.alpha), np.float32(self.beta)
        tmp: dict[str, np.ndarray] = {}

        def inplace(a: Arrays) -> None:
            if "T" not in tmp:
                tmp["T"] = np.empty_like(a["A"])
            np.multiply(a["A"], alpha, out=tmp["T"])
            a["B"] *= beta
            a["B"] += tmp["T"]

        def expression(a: Arrays) -> None:
            a["B"][...] = alpha * a["A"] + beta * a["B"]

        return {"in-place ufuncs": inplace, "expression": expression}

    def opencl_variants(self) -> list[ClVariant]:
        rows = [ClVariant("axpby.cl", "axpby", (64, wgy), {"WGY": wgy, "WGX": 64}, f"rows wgy={wgy}")
                for wgy in (1, 4)]
        flat = [ClVariant("axpby.cl", "axpby_flat", (wgx, 1), {"WGX": wgx}, f"flat wgx={wgx}")
                for wgx in (16, 64, 256)]
        return with_subgroup_ids(rows + flat)


class Cumsum(_Elementwise64):
    """B := alpha·cumsum(A, mode 0) + beta·B per 64×64 matrix."""

    name = "cumsum_f32_64"
    title = "cumsum f32 64×64 (mode 0)"
    ir_file = "cumsum_f32_64.ir"
    kernel = "cumsum"

    def reference(self, a: Arrays) -> Arrays:
        s = np.cumsum(a["A"].astype(np.float64), axis=0)
        return {"B": self.alpha * s + self.beta * a["B"].astype(np.float64)}

    def numpy_versions(self) -> dict[str, NumpyVersion]:
        alpha, beta = np.float32(self.alpha), np.float32(self.beta)
        tmp: dict[str, np.ndarray] = {}

        def cumsum(a: Arrays) -> None:
            if "T" not in tmp:
                tmp["T"] = np.empty_like(a["A"])
            np.cumsum(a["A"], axis=0, out=tmp["T"])
            tmp["T"] *= alpha
            a["B"] *= beta
            a["B"] += tmp["T"]

        return {"cumsum": cumsum}

    def opencl_variants(self) -> list[ClVariant]:
        out = [ClVariant("cumsum.cl", "cumsum_scan", (16, wgy), {"WGY": wgy, "WGX": 16}, f"sub-group scan wgy={wgy}")
               for wgy in (1, 4, 16)]
        out.append(ClVariant("cumsum.cl", "cumsum_columns", (64, 1), {"WGX": 64}, "columns"))
        return with_subgroup_ids(out)

    @property
    def tolerance(self) -> float:
        return 2e-4


# --- GEMM with dynamic sizes ------------------------------------------------------------
class GemmDynamic(Case):
    """C := A·B with memref<f32x?x?x?> operands: sizes and strides known only at run time."""

    name = "gemm_dyn_f32_32"
    title = "gemm.n.n f32 ?×? (32³)"
    ir_file = "gemm_dyn_f32.ir"
    kernel = "gemm_dyn"
    batch = 682  # 8 MiB of A, B and C, as the static gemm cases (GEMM_FOOTPRINT)
    outputs = ("C",)
    m = n = k = 32

    @property
    def bytes(self) -> float:
        return 4.0 * (self.m * self.k + self.k * self.n + self.m * self.n) * self.batch

    def inputs(self, rng: np.random.Generator) -> Arrays:
        return {"A": _rand(rng, (self.m, self.k, self.batch), np.float32),
                "B": _rand(rng, (self.k, self.n, self.batch), np.float32),
                "C": np.zeros((self.m, self.n, self.batch), np.float32, order="F")}

    def reference(self, a: Arrays) -> Arrays:
        return {"C": np.einsum("ikb,kjb->ijb", a["A"].astype(np.float64), a["B"].astype(np.float64))}

    def numpy_versions(self) -> dict[str, NumpyVersion]:
        def matmul(a: Arrays) -> None:
            np.matmul(_batched(a["A"]), _batched(a["B"]), out=_batched(a["C"]))

        return {"matmul": matmul}

    def opencl_variants(self) -> list[ClVariant]:
        rows = -(-self.m // 16) * 16
        return [ClVariant("gemm_dyn.cl", "gemm_dyn", (rows, wgy), {"NB": nb}, f"rows nb={nb} wgy={wgy}")
                for nb, wgy in ((8, 4), (16, 2), (8, 1))]

    def opencl_args(self, d: DeviceData, variant: ClVariant) -> list:
        return [_i64(self.m), _i64(self.n), _i64(self.k)] + [d.arrays[x].memory for x in "ABC"]

    def tinyc_args(self, d: DeviceData) -> tuple:
        return tuple(d.arrays[x] for x in "ABC")

    def raw_args(self, d: DeviceData) -> list:
        # memref<f32x?x?x?> (canonical stride <1,?,?>): pointer, 3 sizes, 2 strides.
        out: list = []
        for x in "ABC":
            r, c, b = d.arrays[x].shape
            out += [d.arrays[x].memory, _i64(r), _i64(c), _i64(b), _i64(r), _i64(r * c)]
        return out


def all_cases() -> list[Case]:
    """Every case, in report order."""
    cases: list[Case] = [Fused()]
    for dtype in (np.float32, np.float64):
        for n in (8, 16, 32, 64):
            for trans in (False, True):
                for trans_b in (False, True):
                    cases.append(Gemm(n, dtype, trans, trans_b=trans_b))
    cases += [GemmDynamic(), Axpby(), Cumsum()]
    return cases


def make_case(name: str, batch: int | None = None) -> Case:
    """A fresh case by name, optionally with another batch size."""
    for case in all_cases():
        if case.name == name:
            if batch is not None:
                case.batch = batch
            return case
    raise KeyError(f"no case {name!r}; cases: {', '.join(c.name for c in all_cases())}")
