"""Types, constants and attributes from their parse trees.

Range rules that the IR's encoding needs are checked here (a negative mode
size would read as the `?` marker); everything else about values — integer
constants beyond i64, strides that break the column-major order, attribute
meanings — is left to the verifier.
"""

from __future__ import annotations

import math
from typing import Any

from tinyc.diagnostics import Note
from tinyc.ir.types import (
    DYNAMIC, SCALAR_TYPES, AddressSpace, MatrixUse, Type, bool_, canonical_stride,
    coopmatrix_type, group_type, index, memref_type, void,
)
from tinyc.parser.context import MAX_NESTING, BuildContext
from tinyc.parser.lalr import Token, Tree
from tinyc.std import Std

_MAX_DIGITS = 4000
"""Python refuses to convert longer digit strings (sys.int_info.str_digits_check_threshold)."""


def integer(token: Token, ctx: BuildContext) -> int:
    """An integer literal as a Python int (any size; the verifier checks ranges)."""
    if len(token.value) > _MAX_DIGITS:
        ctx.error(f"integer constant with {len(token.value)} digits is out of range", token)
        return 0
    return int(token.value)


def floating(token: Token, ctx: BuildContext) -> float:
    """A decimal or hexadecimal floating-point literal (C syntax) as a double."""
    text = token.value
    if text.lstrip("+-") in ("inf", "nan"):
        ctx.mark(Std.NEWEST, f"'{text}'", token)
        return float(text)
    try:
        value = float.fromhex(text) if "x" in text or "X" in text else float(text)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value):
        ctx.error(f"floating-point constant '{text}' is out of the range of double precision",
                  token)
        return 0.0
    return value


def constant(node: Token | Tree, ctx: BuildContext) -> bool | int | float | complex:
    """The value of a `constant` instruction."""
    if isinstance(node, Token):
        return integer(node, ctx) if node.type == "INTEGER" else floating(node, ctx)
    if node.data == "boolean":
        return node.children[0].value == "true"
    real, imag = node.children
    return complex(floating(real, ctx), floating(imag, ctx))


# ---------------------------------------------------------------- types

def _dim(tree: Tree, ctx: BuildContext, what: str) -> int:
    token = tree.children[0]
    if token.value == "?":
        return DYNAMIC
    value = integer(token, ctx)
    if value < 0:
        ctx.error(f"{what} must not be negative, got {value}", token)
        return 0
    return value


def build_type(tree: Tree, ctx: BuildContext) -> Type:
    """The interned type a type tree denotes."""
    kind = tree.data
    if kind in ("scalar_type", "integer_type"):
        return SCALAR_TYPES[tree.children[0].value]
    if kind == "index_type":
        return index
    if kind == "bool_type":
        return bool_
    if kind == "void_type":
        return void
    if kind == "memref_type":
        return _memref(tree, ctx)
    if kind == "group_type":
        memref_tree, size_tree, *rest = tree.children
        offset = _dim(rest[0].children[0], ctx, "group offset") if rest else 0
        return group_type(_memref(memref_tree, ctx), _dim(size_tree, ctx, "group size"), offset)
    assert kind == "coopmatrix_type", kind
    component, rows, cols, use = tree.children
    return coopmatrix_type(SCALAR_TYPES[component.children[0].value], integer(rows, ctx),
                           integer(cols, ctx), MatrixUse(use.children[0].value))


def _memref(tree: Tree, ctx: BuildContext) -> Type:
    element = SCALAR_TYPES[tree.children[0].children[0].value]
    shape: list[int] = []
    stride: list[int] | None = None
    space = AddressSpace.GLOBAL
    for child in tree.children[1:]:
        if child.data == "shape_dim":
            shape.append(_dim(child.children[0], ctx, "mode size"))
        elif child.data == "memref_layout":
            stride = [_dim(d, ctx, "stride") for d in child.children]
            if len(stride) != len(shape):
                ctx.error(f"strided layout has {len(stride)} entries but the memref has "
                          f"order {len(shape)}", child)
                stride = None
        else:
            space = AddressSpace(child.children[-1].value)
    return memref_type(element, shape, stride if stride is not None else canonical_stride(shape),
                       space)


# ---------------------------------------------------------------- attributes

def attribute(node: Token | Tree, ctx: BuildContext, depth: int = 0) -> Any:
    """An attribute as plain Python: int, bool, str, list or dict."""
    if depth > MAX_NESTING:
        ctx.error(f"attributes nested more than {MAX_NESTING} deep", node)
        return 0
    if isinstance(node, Token):
        return integer(node, ctx) if node.type == "INTEGER" else node.value[1:-1]
    if node.data == "boolean":
        return node.children[0].value == "true"
    if node.data == "array":
        return [attribute(c, ctx, depth + 1) for c in node.children]
    return dictionary(node, ctx, depth)


def dictionary(tree: Tree | None, ctx: BuildContext, depth: int = 0) -> dict[str, Any]:
    """A dictionary attribute; names are unquoted, a repeated name is an error."""
    result: dict[str, Any] = {}
    if tree is None:
        return result
    first_seen: dict[str, Token] = {}
    for named in tree.children:
        name_token = named.children[0].children[0]
        name = name_token.value
        if name_token.type == "STRING":
            name = name[1:-1]
        if name in first_seen:
            ctx.error(f"attribute '{name}' is given twice", name_token,
                      (Note("first given here", ctx.span(first_seen[name])),))
            continue
        first_seen[name] = name_token
        result[name] = attribute(named.children[1], ctx, depth + 1)
    return result
