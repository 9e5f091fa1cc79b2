"""Types of the tensor language: interned, immutable values.

Equal types are the same object (``memref_type(f32, (4, 4)) is
memref_type(f32, (4, 4))``), so passes compare types with ``is`` or ``==``
and use them as dict keys cheaply. The promotion order of the spec lives here
and nowhere else.
"""

from __future__ import annotations

from enum import Enum
from typing import ClassVar

DYNAMIC: int = -1
"""Marker for a `?` mode size, stride, group size or offset."""


def is_dynamic(value: int) -> bool:
    """True for the `?` marker."""
    return value == DYNAMIC


def dim_text(value: int) -> str:
    """Print a size or stride as the grammar writes it."""
    return "?" if value == DYNAMIC else str(value)


class Type:
    """Base of all types; subclasses are interned through ``_intern``."""

    __slots__ = ("_key", "__weakref__")
    _cache: ClassVar[dict[tuple, "Type"]] = {}

    @classmethod
    def _intern(cls, key: tuple, build) -> "Type":
        full_key = (cls.__name__,) + key
        found = Type._cache.get(full_key)
        if found is None:
            found = object.__new__(cls)
            object.__setattr__(found, "_key", full_key)
            build(found)
            Type._cache[full_key] = found
        return found

    def __setattr__(self, name, value):  # immutability: types are shared
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __reduce__(self):
        """Pickled by key: loading gives back the interned type (tinyc's compile cache
        keeps kernel signatures this way)."""
        return (_interned, (self._key,))

    def __repr__(self) -> str:
        return f"<type {self}>"


class VoidType(Type):
    """The empty type of a function without results."""

    __slots__ = ()

    def __str__(self) -> str:
        return "void"


class BoolType(Type):
    """Boolean; never stored to memory (OpenCL forbids bool in buffers)."""

    __slots__ = ()

    def __str__(self) -> str:
        return "bool"


class ScalarKind(Enum):
    INT = "int"
    FLOAT = "float"
    COMPLEX = "complex"


class ScalarType(Type):
    """i8 … i64, index, bf16, f16, f32, f64, c32, c64."""

    __slots__ = ("name", "kind", "size")
    name: str
    kind: ScalarKind
    size: int  # bytes

    def __str__(self) -> str:
        return self.name

    @property
    def is_int(self) -> bool:
        return self.kind is ScalarKind.INT

    @property
    def is_float(self) -> bool:
        return self.kind is ScalarKind.FLOAT

    @property
    def is_complex(self) -> bool:
        return self.kind is ScalarKind.COMPLEX

    @property
    def bits(self) -> int:
        return self.size * 8

    @property
    def component(self) -> "ScalarType":
        """The real type of a complex type (c32 → f32); itself otherwise."""
        return _COMPONENTS.get(self.name, self)


def _scalar(name: str, kind: ScalarKind, size: int) -> ScalarType:
    def build(t: ScalarType) -> None:
        object.__setattr__(t, "name", name)
        object.__setattr__(t, "kind", kind)
        object.__setattr__(t, "size", size)

    return ScalarType._intern((name,), build)  # type: ignore[return-value]


void = VoidType._intern((), lambda t: None)
bool_ = BoolType._intern((), lambda t: None)
i8 = _scalar("i8", ScalarKind.INT, 1)
i16 = _scalar("i16", ScalarKind.INT, 2)
i32 = _scalar("i32", ScalarKind.INT, 4)
i64 = _scalar("i64", ScalarKind.INT, 8)
index = _scalar("index", ScalarKind.INT, 8)
bf16 = _scalar("bf16", ScalarKind.FLOAT, 2)
f16 = _scalar("f16", ScalarKind.FLOAT, 2)
f32 = _scalar("f32", ScalarKind.FLOAT, 4)
f64 = _scalar("f64", ScalarKind.FLOAT, 8)
c32 = _scalar("c32", ScalarKind.COMPLEX, 8)
c64 = _scalar("c64", ScalarKind.COMPLEX, 16)

_COMPONENTS = {"c32": f32, "c64": f64}
"""ScalarType.component of the complex types (codegen asks per element access)."""

SCALAR_TYPES: dict[str, ScalarType] = {
    t.name: t for t in (i8, i16, i32, i64, index, bf16, f16, f32, f64, c32, c64)
}
"""Scalar types by their spelling in source."""

# The spec's relation matrix, row by row: PROMOTES_TO[a] = every b with a ⪯ b.
# `index` is 64 bits wide here and ranks like i64.
_PROMOTION_ROWS: dict[str, tuple[str, ...]] = {
    "i8": ("i8", "i16", "i32", "i64", "bf16", "f16", "f32", "f64", "c32", "c64"),
    "i16": ("i16", "i32", "i64", "f32", "f64", "c32", "c64"),
    "i32": ("i32", "i64", "f64", "c32", "c64"),
    "i64": ("i64",),
    "bf16": ("bf16", "f32", "f64", "c32", "c64"),
    "f16": ("f16", "f32", "f64", "c32", "c64"),
    "f32": ("f32", "f64", "c32", "c64"),
    "f64": ("f64", "c64"),
    "c32": ("c32", "c64"),
    "c64": ("c64",),
}


def _canonical_int(name: str) -> str:
    return "i64" if name == "index" else name


def promotable(a: ScalarType, b: ScalarType) -> bool:
    """a ⪯ b in the spec's partial order: every value of a is exact in b."""
    if a is b:
        return True
    return _canonical_int(b.name) in _PROMOTION_ROWS[_canonical_int(a.name)]


def promote(a: ScalarType, b: ScalarType) -> ScalarType | None:
    """The spec's promote(a, b); None where the spec says "fail"."""
    if promotable(a, b):
        return b
    if promotable(b, a):
        return a
    return None


def accumulation_type(t: ScalarType) -> ScalarType:
    """The type sums of `t` run in: f32 for the 16-bit floats, `t` otherwise.

    Collectives, coopmatrix multiply-adds and generated contractions sum f16 and bf16 data
    in f32 and round once per result (docs/decisions.md): a long half-precision sum
    stagnates (2048 + 1 is 2048), and the CPU has no half arithmetic (each operation is a
    conversion to f32 and back; a half fma is emulated in double by a library call)."""
    return f32 if t is f16 or t is bf16 else t


class AddressSpace(Enum):
    GLOBAL = "global"
    LOCAL = "local"


def canonical_stride(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Packed column-major strides; a `?` size makes the later strides `?`."""
    stride: list[int] = []
    current = 1
    for size in shape:
        stride.append(current)
        if current == DYNAMIC or size == DYNAMIC:
            current = DYNAMIC
        else:
            current *= size
    return tuple(stride)


class MemrefType(Type):
    """A strided, column-major view of memory in one address space."""

    __slots__ = ("element", "shape", "stride", "space")
    element: ScalarType
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    space: AddressSpace

    @property
    def order(self) -> int:
        return len(self.shape)

    @property
    def is_dynamic(self) -> bool:
        return DYNAMIC in self.shape or DYNAMIC in self.stride

    @property
    def has_canonical_stride(self) -> bool:
        return self.stride == canonical_stride(self.shape)

    def dynamic_slots(self) -> list[tuple[str, int]]:
        """The `?` entries in calling-convention order: shape then stride."""
        slots = [("shape", i) for i, s in enumerate(self.shape) if s == DYNAMIC]
        slots += [("stride", i) for i, s in enumerate(self.stride) if s == DYNAMIC]
        return slots

    def __str__(self) -> str:
        text = "memref<" + self.element.name
        text += "".join("x" + dim_text(s) for s in self.shape)
        if not self.has_canonical_stride:
            text += ",strided<" + ",".join(dim_text(s) for s in self.stride) + ">"
        if self.space is AddressSpace.LOCAL:
            text += ",local"
        return text + ">"


def memref_type(
    element: ScalarType,
    shape: tuple[int, ...] | list[int],
    stride: tuple[int, ...] | list[int] | None = None,
    space: AddressSpace = AddressSpace.GLOBAL,
) -> MemrefType:
    """The interned memref type; stride defaults to the packed layout."""
    shape = tuple(shape)
    stride = canonical_stride(shape) if stride is None else tuple(stride)

    def build(t: MemrefType) -> None:
        object.__setattr__(t, "element", element)
        object.__setattr__(t, "shape", shape)
        object.__setattr__(t, "stride", stride)
        object.__setattr__(t, "space", space)

    return MemrefType._intern((element, shape, stride, space), build)  # type: ignore[return-value]


class GroupType(Type):
    """Pointer to pointers of memrefs, optionally offset by `offset` elements."""

    __slots__ = ("memref", "size", "offset")
    memref: MemrefType
    size: int
    offset: int

    def __str__(self) -> str:
        text = f"group<{self.memref}x{dim_text(self.size)}"
        if self.offset != 0:
            text += f", offset: {dim_text(self.offset)}"
        return text + ">"


def group_type(memref: MemrefType, size: int = DYNAMIC, offset: int = 0) -> GroupType:
    """The interned group type."""

    def build(t: GroupType) -> None:
        object.__setattr__(t, "memref", memref)
        object.__setattr__(t, "size", size)
        object.__setattr__(t, "offset", offset)

    return GroupType._intern((memref, size, offset), build)  # type: ignore[return-value]


class MatrixUse(Enum):
    A = "matrix_a"
    B = "matrix_b"
    ACC = "matrix_acc"


class CoopMatrixType(Type):
    """A matrix held jointly by the work-items of a subgroup."""

    __slots__ = ("component", "rows", "cols", "use")
    component: ScalarType
    rows: int
    cols: int
    use: MatrixUse

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    def __str__(self) -> str:
        return f"coopmatrix<{self.component.name}x{self.rows}x{self.cols},{self.use.value}>"


def coopmatrix_type(component: ScalarType, rows: int, cols: int, use: MatrixUse) -> CoopMatrixType:
    """The interned coopmatrix type."""

    def build(t: CoopMatrixType) -> None:
        object.__setattr__(t, "component", component)
        object.__setattr__(t, "rows", rows)
        object.__setattr__(t, "cols", cols)
        object.__setattr__(t, "use", use)

    return CoopMatrixType._intern((component, rows, cols, use), build)  # type: ignore[return-value]


def _interned(key: tuple) -> Type:
    """The type of an interning key, made with its constructor if it does not exist yet."""
    found = Type._cache.get(key)
    if found is not None:
        return found
    constructors = {"MemrefType": memref_type, "GroupType": group_type, "CoopMatrixType": coopmatrix_type}
    kind, *args = key
    if kind not in constructors:
        raise TypeError(f"no type of kind {kind!r}")
    return constructors[kind](*args)


def element_type(t: Type) -> ScalarType | None:
    """Scalar type of a scalar, the element of a memref, the component of a coopmatrix."""
    if isinstance(t, ScalarType):
        return t
    if isinstance(t, MemrefType):
        return t.element
    if isinstance(t, CoopMatrixType):
        return t.component
    if isinstance(t, GroupType):
        return t.memref.element
    return None


def type_problems(t: Type) -> list[str]:
    """Why `t` breaks the spec's rules for types; empty when it is well formed.

    The constructors accept anything so that the parser and passes never fail
    half-way; the verifier calls this and reports each problem at the place
    where the type is written. Modes count from 0 in the wording.
    """
    if isinstance(t, MemrefType):
        return _memref_problems(t)
    if isinstance(t, GroupType):
        problems = _memref_problems(t.memref)
        if t.size != DYNAMIC and t.size < 0:
            problems.append(f"the group size {t.size} is negative")
        if t.offset != DYNAMIC and t.offset < 0:
            problems.append(f"the offset {t.offset} is negative")
        for what, n in (("group size", t.size), ("offset", t.offset)):
            if n != DYNAMIC and n >= INDEX_LIMIT:
                problems.append(f"the {what} {n} does not fit in index (it must be below 2^63)")
        return problems
    if isinstance(t, CoopMatrixType):
        if t.rows < 1 or t.cols < 1:
            return [f"the shape {t.rows}x{t.cols} must have positive rows and columns"]
        if t.rows * t.cols > MAX_COOPMATRIX_COMPONENTS:
            return [f"tinyc supports coopmatrices of at most {MAX_COOPMATRIX_COMPONENTS} components "
                    f"(e.g. 128x128), got {t.rows}x{t.cols}"]
    return []


MAX_COOPMATRIX_COMPONENTS = 16384
"""An implementation limit: codegen keeps a coopmatrix in registers, component by component."""

INDEX_LIMIT = 2**63
"""Sizes, strides, offsets and the byte span of a memref are `index` values: below 2^63."""


def _memref_problems(t: MemrefType) -> list[str]:
    """Shape and stride rules of the strided layout (spec: memref type)."""
    problems = [f"the size {s} of mode {i} is negative"
                for i, s in enumerate(t.shape) if s != DYNAMIC and s < 0]
    problems += [f"the {what} {n} of mode {i} does not fit in index (it must be below 2^63)"
                 for what, values in (("size", t.shape), ("stride", t.stride))
                 for i, n in enumerate(values) if n != DYNAMIC and n >= INDEX_LIMIT]
    if not problems and DYNAMIC not in t.shape and DYNAMIC not in t.stride and \
            len(t.stride) == t.order and all(n > 0 for n in t.shape):
        span = (1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride))) * t.element.size
        if span >= INDEX_LIMIT:
            problems.append(f"the memref spans {span} bytes; at most 2^63 - 1 are addressable")
    if len(t.stride) != t.order:
        problems.append(f"the strided layout has {len(t.stride)} entries but the order is {t.order}")
        return problems
    if t.order and t.stride[0] != DYNAMIC and t.stride[0] < 1:
        problems.append(f"the stride {t.stride[0]} of mode 0 must be at least 1")
    problems += [f"the stride {S} of mode {i} is negative"
                 for i, S in enumerate(t.stride) if i and S != DYNAMIC and S < 0]
    for i in range(1, t.order):
        before, size, stride = t.stride[i - 1], t.shape[i - 1], t.stride[i]
        if DYNAMIC in (before, size, stride) or min(before, size, stride) < 0:
            continue
        if before * size > stride:
            problems.append(
                f"the stride {stride} of mode {i} is smaller than stride times size of mode "
                f"{i - 1} ({before}*{size} = {before * size}); the layout must be column-major")
    return problems
