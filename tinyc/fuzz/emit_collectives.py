"""Generator entries for the BLAS-like collectives: gemm, gemv, ger, axpby, sum,
cumsum, hadamard_product, with random shapes, transposes, alpha, beta and atomics.

The output is the work-group's own view (or a shared accumulator with
`.atomic` and beta 1); inputs are views of other memory, of element types
that promote to the output's.
"""

from __future__ import annotations

from tinyc.fuzz.facts import SCALARS, tolerance
from tinyc.fuzz.generator import Writer
from tinyc.fuzz.program import GROUP, Root, Val
from tinyc.ir.types import ScalarType, promotable, promote
from tinyc.fuzz.registry import generates
from tinyc.ir import instructions as I


def _output(w: Writer, order: tuple[int, ...], *, shared_ok: bool) -> Val | None:
    outs = [v for v in w.mems(writable=True) if 0 not in v.mem.shape
            and (shared_ok or not v.mem.root.shared) and v.mem.order >= min(order)]
    if not outs:
        return None
    return w.pick(outs)


def _input_view(w: Writer, element_ok, shape: tuple[int, ...], avoid: Root) -> Val | None:
    """A readable view of exactly `shape` whose element type passes `element_ok`."""
    srcs = [v for v in w.mems(readable=True) if v.mem.root is not avoid and element_ok(v.mem.type.element)
            and v.mem.order >= len(shape)]
    w.rng.shuffle(srcs)
    for src in srcs:
        if src.mem.shape == shape:
            return src
        if len(shape) == 0:
            return w.scalar_view(src)
        if len(shape) == 1 and max(src.mem.shape, default=0) >= shape[0]:
            return w.vector_view(src, shape[0])
        if len(shape) == 2 and src.mem.order >= 2:
            for _ in range(3):
                view = _try_matrix(w, src, shape)
                if view is not None:
                    return view
    return None


def _try_matrix(w: Writer, src: Val, shape: tuple[int, int]) -> Val | None:
    m = src.mem
    pairs = [(a, b) for a in range(m.order) for b in range(a + 1, m.order)
             if m.shape[a] >= shape[0] and m.shape[b] >= shape[1]]
    if not pairs:
        return None
    a, b = w.pick(pairs)
    sizes: list[int | None] = [None] * m.order
    sizes[a], sizes[b] = shape
    return w.subview(src, sizes)


def _shaped_output(w: Writer, orders: tuple[int, ...], shared_ok: bool) -> Val | None:
    out = _output(w, orders, shared_ok=shared_ok)
    if out is None:
        return None
    m = out.mem
    order = w.pick([o for o in orders if o <= m.order])
    if m.order == order and w.chance(0.5):
        return out
    if order == 0:
        return w.scalar_view(out) if not m.root.shared else None
    if order == 1:
        return w.vector_view(out, w.rng.randint(1, max(m.shape)))
    return _try_matrix(w, out, (w.rng.randint(1, m.shape[0]), w.rng.randint(1, m.shape[-1])))


def _scalars(w: Writer, out: Val, input_types: list[ScalarType], atomic: bool) -> tuple[Val, Val]:
    """alpha ⪯ promote(inputs), beta ⪯ element(out); beta constant 0 or 1 for .atomic."""
    common = input_types[0]
    for t in input_types[1:]:
        common = promote(common, t) or common
    alpha_types = [t for t in SCALARS if promotable(t, common)]
    alpha = w.scalar(w.pick(alpha_types), level=GROUP)
    c = out.mem.type.element
    if atomic:
        beta = w.constant(c, 1 if out.mem.root.shared or w.chance(0.5) else 0)
    else:
        beta = w.scalar(w.pick([t for t in SCALARS if promotable(t, c)]), level=GROUP)
    return alpha, beta


def _blas(w: Writer, out: Val, text: str, inputs: list[Val], atomic: bool) -> None:
    alpha, beta = _scalars(w, out, [v.mem.type.element for v in inputs], atomic)
    w.emit(text.format(alpha=alpha.name, beta=beta.name, out=out.name,
                       atomic=".atomic" if atomic else "", *[v.name for v in inputs]))
    root = out.mem.root
    root.exact = root.exact and out.mem.type.element.is_int and all(
        v.mem.root.exact for v in inputs) and alpha.exact and beta.exact
    if not root.exact:
        root.tol = max([root.tol, tolerance(out.mem.type.element), alpha.tol, beta.tol]
                       + [max(v.mem.root.tol, tolerance(v.mem.type.element)) for v in inputs])


def _atomic(w: Writer, out: Val) -> bool:
    return out.mem.root.shared or w.chance(0.2)


def _promotes_to(t: ScalarType):
    return lambda e: promotable(e, t)


def _with_input(w: Writer, out: Val, shape: tuple[int, ...], text: str) -> bool:
    """A collective with one input of `shape` (axpby, sum): the input, then the text."""
    A = _input_view(w, _promotes_to(out.mem.type.element), shape, out.mem.root)
    if A is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, text, [A], atomic)
    return True


@generates(I.Gemm, "gemm", 1.0, "collective")
def emit_gemm(w: Writer) -> bool:
    out = _shaped_output(w, (2,), False)
    if out is None or out.mem.order != 2:
        return False
    M, N = out.mem.shape
    K = w.rng.randint(1, 8)
    ta, tb = w.chance(0.4), w.chance(0.4)
    c = out.mem.type.element
    A = _input_view(w, _promotes_to(c), (K, M) if ta else (M, K), out.mem.root)
    if A is None:
        return False
    B = _input_view(w, lambda e: promotable(e, c) and promote(e, A.mem.type.element) is not None,
                    (N, K) if tb else (K, N), out.mem.root)
    if B is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, f"gemm{'.t' if ta else '.n'}{'.t' if tb else '.n'}{{atomic}} {{alpha}}, {{0}}, {{1}}, "
                  f"{{beta}}, {{out}}", [A, B], atomic)
    return True


@generates(I.Gemv, "gemv", 0.8, "collective")
def emit_gemv(w: Writer) -> bool:
    out = _shaped_output(w, (1,), True)
    if out is None or out.mem.order != 1:
        return False
    (M,) = out.mem.shape
    K = w.rng.randint(1, 8)
    t = w.chance(0.4)
    c = out.mem.type.element
    A = _input_view(w, _promotes_to(c), (K, M) if t else (M, K), out.mem.root)
    if A is None:
        return False
    x = _input_view(w, lambda e: promotable(e, c) and promote(e, A.mem.type.element) is not None,
                    (K,), out.mem.root)
    if x is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, f"gemv{'.t' if t else '.n'}{{atomic}} {{alpha}}, {{0}}, {{1}}, {{beta}}, {{out}}",
          [A, x], atomic)
    return True


@generates(I.Ger, "ger", 0.6, "collective")
def emit_ger(w: Writer) -> bool:
    out = _shaped_output(w, (2,), False)
    if out is None or out.mem.order != 2:
        return False
    M, N = out.mem.shape
    c = out.mem.type.element
    a = _input_view(w, _promotes_to(c), (M,), out.mem.root)
    if a is None:
        return False
    b = _input_view(w, lambda e: promotable(e, c) and promote(e, a.mem.type.element) is not None,
                    (N,), out.mem.root)
    if b is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, "ger{atomic} {alpha}, {0}, {1}, {beta}, {out}", [a, b], atomic)
    return True


@generates(I.Axpby, "axpby", 0.8, "collective")
def emit_axpby(w: Writer) -> bool:
    out = _shaped_output(w, (0, 1, 2), True)
    if out is None:
        return False
    shape = out.mem.shape
    t = w.chance(0.4) and len(shape) == 2
    return _with_input(w, out, shape[::-1] if t else shape,
                       f"axpby{'.t' if t else '.n'}{{atomic}} {{alpha}}, {{0}}, {{beta}}, {{out}}")


@generates(I.Sum, "sum", 0.6, "collective")
def emit_sum(w: Writer) -> bool:
    out = _shaped_output(w, (0, 1), True)
    if out is None or out.mem.order > 1:
        return False
    t = w.chance(0.4)
    if out.mem.order == 0:
        shape = (w.rng.randint(1, 16),)
    else:
        K = w.rng.randint(1, 8)
        shape = (K, out.mem.shape[0]) if t else (out.mem.shape[0], K)
    return _with_input(w, out, shape, f"sum{'.t' if t else '.n'}{{atomic}} {{alpha}}, {{0}}, {{beta}}, {{out}}")


@generates(I.Cumsum, "cumsum", 0.6, "collective")
def emit_cumsum(w: Writer) -> bool:
    out = _shaped_output(w, (1, 2), True)
    if out is None or out.mem.order < 1:
        return False
    A = _input_view(w, _promotes_to(out.mem.type.element), out.mem.shape, out.mem.root)
    if A is None:
        return False
    mode = w.rng.randrange(out.mem.order)
    atomic = _atomic(w, out)
    _blas(w, out, f"cumsum{{atomic}} {{alpha}}, {{0}}, {mode}, {{beta}}, {{out}}", [A], atomic)
    return True


@generates(I.HadamardProduct, "hadamard_product", 0.6, "collective")
def emit_hadamard(w: Writer) -> bool:
    out = _shaped_output(w, (1, 2), True)
    if out is None or out.mem.order < 1:
        return False
    c = out.mem.type.element
    a = _input_view(w, _promotes_to(c), out.mem.shape, out.mem.root)
    if a is None:
        return False
    b = _input_view(w, lambda e: promotable(e, c) and promote(e, a.mem.type.element) is not None,
                    out.mem.shape, out.mem.root)
    if b is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, "hadamard_product{atomic} {alpha}, {0}, {1}, {beta}, {out}", [a, b], atomic)
    return True
