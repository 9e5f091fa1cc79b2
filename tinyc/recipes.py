"""Ready-made kernels with the reference's parameters and meaning: `tinyc.recipes`.

    r = tinyc.recipes.small_gemm_batched("f32", False, True, M, N, K, ldA, strideA, ldB,
                                         strideB, ldC, strideC)
    r(howmany, alpha, A, B, beta, C)      # C_i := alpha op(A_i) op(B_i) + beta C_i, i < howmany

    t = tinyc.recipes.tall_and_skinny("f64", N, K)          # M dynamic, blocks of M_block rows
    t(alpha, A, B, beta, C)               # C := alpha A B + beta C, A is M×K, C is M×N

Both build two kernels with `tinyc.builder`: `gemm`, and `gemm_beta0`, which
never reads C (it may hold NaN); a call with beta == 0 runs the second.
Matrices are column-major with leading dimensions `ld*` and batch strides
`stride*` (in elements). A matrix argument is an array whose element strides
fit (e.g. a Fortran-order `(M, K, howmany)` array), or a flat 1-D buffer that
the recipe views with those strides (NumPy or USM).
"""

from __future__ import annotations

from typing import Any

from tinyc.builder import DYNAMIC, FunctionBuilder, Program, index, memref, scalar
from tinyc.ir.types import ScalarType

__all__ = ["small_gemm_batched", "tall_and_skinny", "Recipe", "suggest_block_size"]

KERNELS = ("gemm", "gemm_beta0")


def _transpose(value: Any, name: str) -> bool:
    if value in (False, None, "n", "N", 0):
        return False
    if value in (True, "t", "T", 1):
        return True
    raise ValueError(f"{name} must be a bool or 'n'/'t', got {value!r}")


def _positive(name: str, value: Any, dynamic_ok: bool = False) -> int:
    if dynamic_ok and value is None:
        return DYNAMIC
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _element(dtype: Any) -> ScalarType:
    try:
        return scalar(dtype)
    except TypeError:
        raise TypeError(f"unknown dtype {dtype!r}; use a type of the language (f32, f64, c32, c64, f16, "
                        f"bf16, i8, i16, i32, i64) or its NumPy name") from None


def _check_ld(name: str, ld: int, rows: int) -> None:
    if ld != DYNAMIC and rows != DYNAMIC and ld < rows:
        raise ValueError(f"{name} = {ld} is smaller than the {rows} rows it must hold")


class Recipe:
    """A compiled recipe: `program` (tinyc.Program with `gemm` and `gemm_beta0`), `source`.

    Its schedule is the one tuned for `gemm` on this device (cached like `tinyc.compile`'s;
    `tune=True` tunes on a miss), applied to both kernels: the beta = 0 variant has the
    same instructions, so one tuning serves every call."""

    def __init__(self, prog: Program, device: Any, tune: bool = False):
        from tinyc.compiler import compile as compile_program
        from tinyc.runtime.devices import compile_target

        self.source = prog.checked_source()
        self.device = device   # a device, or several (a list, a Devices): each call splits its batch
        target = compile_target(device)
        schedule = _tuned_schedule(self.source, target, tune)
        self.program = compile_program(self.source, name="<recipe>", device=target, fp_contract=True,
                                       schedule={name: schedule for name in KERNELS} if schedule else None)

    def kernel(self, beta: Any) -> Any:
        """The kernel a call with this beta runs: gemm_beta0 when beta is zero."""
        return self.program["gemm_beta0" if beta == 0 else "gemm"]

    def _launch(self, beta: Any, args: tuple, batch: int, check_bounds: bool | None) -> None:
        """Kernel.__call__ with the recipe's devices (split over several) and bounds checks."""
        from tinyc.runtime.devices import is_split

        options = {"device": self.device} if is_split(self.device) else {}
        self.kernel(beta)(*args, batch=batch, check_bounds=check_bounds, **options)


class SmallGemmBatched(Recipe):
    """C_i := alpha op(A_i) op(B_i) + beta C_i for i < howmany (the reference's recipe)."""

    def __init__(self, dtype: Any, transA: Any, transB: Any, M: int, N: int, K: int, ldA: int,
                 strideA: int, ldB: int, strideB: int, ldC: int, strideC: int, device: Any = None,
                 tune: bool = False):
        t = _element(dtype)
        ta, tb = _transpose(transA, "transA"), _transpose(transB, "transB")
        M, N, K = (_positive(n, v) for n, v in (("M", M), ("N", N), ("K", K)))
        ldA, ldB, ldC = (_positive(n, v) for n, v in (("ldA", ldA), ("ldB", ldB), ("ldC", ldC)))
        strideA, strideB, strideC = (_positive(n, v) for n, v in
                                     (("strideA", strideA), ("strideB", strideB), ("strideC", strideC)))
        a_shape = (K, M) if ta else (M, K)
        b_shape = (N, K) if tb else (K, N)
        for name, ld, shape, stride_name, stride in (("ldA", ldA, a_shape, "strideA", strideA),
                                                     ("ldB", ldB, b_shape, "strideB", strideB),
                                                     ("ldC", ldC, (M, N), "strideC", strideC)):
            _check_ld(name, ld, shape[0])
            if stride < ld * shape[1]:
                raise ValueError(f"{stride_name} = {stride} is smaller than {name}·columns = "
                                 f"{ld * shape[1]}: the matrices of the batch would overlap")
        self.shapes = {"A": (*a_shape, ldA, strideA), "B": (*b_shape, ldB, strideB),
                       "C": (M, N, ldC, strideC)}
        self.dtype = t
        prog = Program("<small_gemm_batched>")
        for name in KERNELS:
            fn = prog.function(name, alpha=t,
                               A=memref(t, *a_shape, None, stride=[1, ldA, strideA]),
                               B=memref(t, *b_shape, None, stride=[1, ldB, strideB]),
                               beta=t, C=memref(t, M, N, None, stride=[1, ldC, strideC]))
            alpha, A, B, beta, C = fn.params
            g = fn.group_id(name="gid")
            whole = (slice(None), slice(None), g)
            a, b, c = (fn.subview(X, whole, name=n) for X, n in ((A, "a"), (B, "b"), (C, "c")))
            fn.gemm(alpha, a, b, beta if name == "gemm" else 0, c, transpose_a=ta, transpose_b=tb)
        super().__init__(prog, device, tune)

    def __call__(self, *args: Any, howmany: int | None = None, batch: int | None = None,
                 check_bounds: bool | None = None) -> None:
        """`r(howmany, alpha, A, B, beta, C)` as the reference orders it, or
        `r(alpha, A, B, beta, C, howmany=N)`; `check_bounds=True` runs bounds-checked."""
        if len(args) == 6:
            howmany, alpha, A, B, beta, C = args
        elif len(args) == 5:
            alpha, A, B, beta, C = args
            howmany = howmany if howmany is not None else batch
        else:
            raise TypeError("call as r(howmany, alpha, A, B, beta, C) or r(alpha, A, B, beta, C, howmany=N)")
        if howmany is None:
            howmany = _batch_of(C)
        howmany = _positive("howmany", howmany)
        views = [_strided(X, name, self.shapes[name], howmany, self.dtype)
                 for X, name in ((A, "A"), (B, "B"), (C, "C"))]
        self._launch(beta, (alpha, views[0], views[1], beta, views[2]), howmany, check_bounds)


class TallAndSkinny(Recipe):
    """C := alpha A B + beta C with A M×K, B K×N, C M×N, M large: a work-group per block of
    M_block rows, the last block as long as M leaves (the reference's recipe)."""

    def __init__(self, dtype: Any, N: int, K: int, M_block: int | None = None, M: int | None = None,
                 ldA: int | None = None, ldB: int | None = None, ldC: int | None = None,
                 device: Any = None, tune: bool = False):
        t = _element(dtype)
        N, K = _positive("N", N), _positive("K", K)
        self.M_block = _positive("M_block", M_block if M_block is not None else suggest_block_size())
        Ms = _positive("M", M, dynamic_ok=True)
        ldA_, ldB_, ldC_ = (_positive(n, v, dynamic_ok=True) for n, v in (("ldA", ldA), ("ldB", ldB), ("ldC", ldC)))
        _check_ld("ldA", ldA_, Ms)
        _check_ld("ldB", ldB_, K)
        _check_ld("ldC", ldC_, Ms)
        self.dtype, self.N, self.K = t, N, K
        prog = Program("<tall_and_skinny>")
        for name in KERNELS:
            fn = prog.function(name, alpha=t, A=memref(t, Ms, K, stride=[1, ldA_]),
                               B=memref(t, K, N, stride=[1, ldB_]), beta=t,
                               C=memref(t, Ms, N, stride=[1, ldC_]))
            self._body(fn, name == "gemm", Ms, K, N)
        super().__init__(prog, device, tune)

    def _body(self, fn: FunctionBuilder, reads_c: bool, M: int, K: int, N: int) -> None:
        alpha, A, B, beta, C = fn.params
        beta_value = beta if reads_c else 0
        block = self.M_block
        gid = fn.group_id(name="gid")
        m = fn.mul(gid, block, name="m")

        def gemm(rows: Any) -> None:
            a = fn.subview(A, ((m, rows), slice(None)))
            c = fn.subview(C, ((m, rows), slice(None)))
            fn.gemm(alpha, a, B, beta_value, c)

        if M != DYNAMIC and M % block == 0:
            gemm(block)
            return
        if M != DYNAMIC and M < block:  # one block holds every row (no view past the end of A)
            gemm(M)
            return
        rest = fn.sub(fn.size(C, 0), m, name="rest")
        with fn.if_(fn.lt(rest, block)) as branch:
            with branch.then():
                gemm(rest)          # the last block: as many rows as are left
            with branch.otherwise():
                gemm(block)

    def __call__(self, *args: Any, check_bounds: bool | None = None) -> None:
        """`t(alpha, A, B, beta, C)` with (M, K), (K, N), (M, N) arrays, or the reference's
        `t(M, alpha, A, ldA, B, ldB, beta, C, ldC)` with flat buffers; `check_bounds=True`
        runs bounds-checked."""
        if len(args) == 5:
            alpha, A, B, beta, C = args
        elif len(args) == 9:
            M, alpha, A, ldA, B, ldB, beta, C, ldC = args
            K, N = self.K, self.N
            A = _matrix_view(A, "A", M, K, ldA, self.dtype)
            B = _matrix_view(B, "B", K, N, ldB, self.dtype)
            C = _matrix_view(C, "C", M, N, ldC, self.dtype)
        else:
            raise TypeError("call as t(alpha, A, B, beta, C) or t(M, alpha, A, ldA, B, ldB, beta, C, ldC)")
        M = _shape_of(C)[0]
        if M == 0:
            return
        self._launch(beta, (alpha, A, B, beta, C), -(-M // self.M_block), check_bounds)


def _tuned_schedule(source: str, device: Any, tune: bool) -> dict:
    """The schedule cached (or, with `tune`, tuned) for the recipe's `gemm` kernel."""
    from tinyc.compiler import check_source, target_device
    from tinyc.tune import cached_or_tuned

    found, _ = target_device(device)
    if found is None:
        return {}
    hook = cached_or_tuned(found, device, None, None, tune, kernels=["gemm"])
    return dict(hook(check_source(source, "<recipe>")).get("gemm", {}))


def suggest_block_size(device: Any = None) -> int:
    """Rows per work-group for tall_and_skinny: 128, as the reference suggests for its devices."""
    return 128


def small_gemm_batched(dtype: Any, transA: Any, transB: Any, M: int, N: int, K: int, ldA: int,
                       strideA: int, ldB: int, strideB: int, ldC: int, strideC: int,
                       device: Any = None, tune: bool = False) -> SmallGemmBatched:
    """Batched small GEMM with static sizes, leading dimensions and batch strides; the batch
    (howmany) is a `?` mode: one compile serves every batch size. `tune=True` tunes the
    kernel on first use (cached per device)."""
    return SmallGemmBatched(dtype, transA, transB, M, N, K, ldA, strideA, ldB, strideB, ldC,
                            strideC, device, tune)


def tall_and_skinny(dtype: Any, N: int, K: int, M_block: int | None = None, M: int | None = None,
                    ldA: int | None = None, ldB: int | None = None, ldC: int | None = None,
                    device: Any = None, tune: bool = False) -> TallAndSkinny:
    """GEMM with a large M (dynamic unless given) and small N, K, in blocks of M_block rows;
    `tune=True` tunes the kernel on first use (cached per device)."""
    return TallAndSkinny(dtype, N, K, M_block, M, ldA, ldB, ldC, device, tune)


# -- arrays as the recipes' memrefs -------------------------------------------------------------
def _shape_of(x: Any) -> tuple[int, ...]:
    if hasattr(x, "shape") and not hasattr(x, "__sycl_usm_array_interface__"):
        return tuple(x.shape)
    return tuple(x.__sycl_usm_array_interface__["shape"])


def _batch_of(C: Any) -> int:
    shape = _shape_of(C)
    if len(shape) != 3:
        raise TypeError("howmany is needed when C is not a 3-D array")
    return shape[2]


def _strided(x: Any, name: str, spec: tuple[int, int, int, int], howmany: int, t: ScalarType) -> Any:
    """A 1-D buffer viewed as (rows, cols, howmany) with strides (1, ld, stride); other arrays as is."""
    rows, cols, ld, stride = spec
    if len(_shape_of(x)) != 1:
        return x
    return _view(x, name, (rows, cols, howmany), (1, ld, stride), t)


def _matrix_view(x: Any, name: str, rows: int, cols: int, ld: int, t: ScalarType) -> Any:
    if len(_shape_of(x)) != 1:
        return x
    return _view(x, name, (rows, cols), (1, ld), t)


def _view(x: Any, name: str, shape: tuple[int, ...], strides: tuple[int, ...], t: ScalarType) -> Any:
    import numpy as np

    need = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    have = _shape_of(x)[0]
    if have < need:
        raise ValueError(f"{name} holds {have} elements but the recipe reads {need} "
                         f"(shape {shape}, strides {strides})")
    if isinstance(x, np.ndarray):
        if x.strides[0] != x.itemsize:
            raise ValueError(f"{name} must be a contiguous 1-D buffer")
        return np.lib.stride_tricks.as_strided(x, shape, tuple(s * x.itemsize for s in strides))
    return _UsmView(x, shape, strides)


class _UsmView:
    """A strided view of a 1-D USM buffer, by its __sycl_usm_array_interface__ alone."""

    def __init__(self, base: Any, shape: tuple[int, ...], strides: tuple[int, ...]):
        iface = dict(base.__sycl_usm_array_interface__)
        iface["shape"], iface["strides"] = shape, strides
        self._base = base
        self.__sycl_usm_array_interface__ = iface
