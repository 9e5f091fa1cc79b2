"""Each instruction's parse tree → its IR class, with operand and type spans.

One builder function per grammar rule, registered in `_BUILDERS` by the
rule's name. Operands are resolved (and their spans recorded) in the order
the IR class keeps them, which is not always the order of the source text
(a subview keeps its offsets before its sizes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from tinyc.diagnostics import Span
from tinyc.ir.core import Instruction, Value
from tinyc.ir.instructions import (
    SPMD_BUILTINS, WHOLE_MODE, Alloca, ArithBinary, ArithBinaryOp, ArithUnary, ArithUnaryOp, Axpby,
    Barrier, Builtin, BuiltinName, Cast, CheckedFlag, Cmp, CmpCond, Constant, CoopMatrixLoad,
    CoopMatrixMulAdd, CoopMatrixScale, CoopMatrixStore, Cumsum, Expand, For, Foreach, Fuse, Gemm,
    Gemv, Ger, HadamardProduct, If, LifetimeStop, Load, MathUnary, MathUnaryOp, Parallel, Size,
    SpmdBuiltin, Store, StoreFlag, SubgroupBroadcast, SubgroupMode, SubgroupOp, SubgroupOperation,
    Subview, Sum, Yield,
)
from tinyc.ir.types import DYNAMIC, index
from tinyc.parser.lalr import Token, Tree
from tinyc.parser.literals import build_type, constant, dictionary, integer

if TYPE_CHECKING:
    from tinyc.parser.builder import ProgramBuilder

Operand = tuple[Value, Span]

_TYPE_RULES = frozenset({"void_type", "bool_type", "scalar_type", "integer_type", "index_type",
                         "memref_type", "group_type", "coopmatrix_type"})


def build_instruction(b: "ProgramBuilder", tree: Tree) -> Instruction:
    """The IR instruction for the operation subtree of an `instruction`."""
    return _BUILDERS[tree.data](b, tree)


# ---------------------------------------------------------------- helpers

def _ids(tree: Tree) -> list[Token]:
    return [c for c in tree.children if isinstance(c, Token) and c.type == "LOCAL_ID"]


def _child(tree: Tree, data: str) -> Tree | None:
    return next((c for c in tree.children if isinstance(c, Tree) and c.data == data), None)


def _children(tree: Tree, data: str) -> list[Tree]:
    return [c for c in tree.children if isinstance(c, Tree) and c.data == data]


def _word(tree: Tree | None) -> str | None:
    """The keyword held by a `!rule` subtree such as `transpose` or `cmp_op`."""
    return tree.children[0].value if tree is not None else None


def _type_tree(tree: Tree) -> Tree:
    return next(c for c in reversed(tree.children) if isinstance(c, Tree) and c.data in _TYPE_RULES)


def _uses(b: "ProgramBuilder", tokens: list[Token]) -> list[Operand]:
    return [b.ctx.use(t) for t in tokens]


def _finish(b: "ProgramBuilder", inst: Instruction, operands: list[Operand],
            type_node: Tree | None = None) -> Instruction:
    inst.operand_spans = [span for _, span in operands]
    inst.type_span = b.ctx.span(type_node) if type_node is not None else None
    return inst


def _values(operands: list[Operand]) -> list[Value]:
    return [v for v, _ in operands]


def _typed(b: "ProgramBuilder", tree: Tree):
    """(operands, result type, type tree) of an instruction `op %a, ... : type`."""
    type_tree = _type_tree(tree)
    return _uses(b, _ids(tree)), build_type(type_tree, b.ctx), type_tree


# ---------------------------------------------------------------- collective

def _alloca(b: "ProgramBuilder", t: Tree) -> Instruction:
    type_tree = _type_tree(t)
    inst = Alloca(build_type(type_tree, b.ctx), dictionary(_child(t, "dictionary"), b.ctx))
    return _finish(b, inst, [], type_tree)


def _blas(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops = _uses(b, _ids(t))
    v = _values(ops)
    trans = [_word(c) == ".t" for c in _children(t, "transpose")]
    atomic = _child(t, "atomic") is not None
    kind = t.data
    if kind == "axpby":
        inst: Instruction = Axpby(trans[0], *v, atomic=atomic)
    elif kind == "gemm":
        inst = Gemm(trans[0], trans[1], *v, atomic=atomic)
    elif kind == "gemv":
        inst = Gemv(trans[0], *v, atomic=atomic)
    elif kind == "ger":
        inst = Ger(*v, atomic=atomic)
    elif kind == "hadamard_product":
        inst = HadamardProduct(*v, atomic=atomic)
    elif kind == "sum":
        inst = Sum(trans[0], *v, atomic=atomic)
    else:
        mode = next(c for c in t.children if isinstance(c, Token) and c.type == "INTEGER")
        inst = Cumsum(v[0], v[1], integer(mode, b.ctx), v[2], v[3], atomic=atomic)
    schedule = _child(t, "inst_attributes")
    if schedule is not None:
        inst.attrs = dictionary(schedule.children[0], b.ctx)
    return _finish(b, inst, ops)


def _foreach(b: "ProgramBuilder", t: Tree) -> Instruction:
    var_list, lower_list, upper_list = _children(t, "values")
    type_tree = _child(t, "integer_type")
    loop_type = build_type(type_tree, b.ctx) if type_tree is not None else index
    lower = _uses(b, lower_list.children)
    upper = _uses(b, upper_list.children)
    n_vars = len(var_list.children)
    if not n_vars == len(lower) == len(upper):
        b.ctx.error(f"foreach has {n_vars} loop variables, {len(lower)} lower and {len(upper)} "
                    "upper bounds; the three lists must have the same length",
                    b.ctx.span(var_list).join(b.ctx.span(upper_list)))
    n = min(len(lower), len(upper))
    loop_vars = [(Value(loop_type), tok) for tok in var_list.children]
    body = b.region(t.children[-1], loop_vars)
    inst = Foreach([v for v, _ in loop_vars], _values(lower[:n]), _values(upper[:n]), body,
                   loop_type)
    return _finish(b, inst, lower[:n] + upper[:n], type_tree)


def _parallel(b: "ProgramBuilder", t: Tree) -> Instruction:
    return Parallel(b.region(t.children[-1], []))


# ---------------------------------------------------------------- mixed

def _arith_binary(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops, ty, type_tree = _typed(b, t)
    op = ArithBinaryOp(_word(t.children[0]).split(".")[1])
    return _finish(b, ArithBinary(op, *_values(ops), ty), ops, type_tree)


def _arith_unary(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops, ty, type_tree = _typed(b, t)
    op = ArithUnaryOp(_word(t.children[0]).split(".")[1])
    return _finish(b, ArithUnary(op, *_values(ops), ty), ops, type_tree)


def _barrier(b: "ProgramBuilder", t: Tree) -> Instruction:
    words = {c.value for c in t.children}
    return Barrier(global_fence=".global" in words, local_fence=".local" in words)


def _builtin(b: "ProgramBuilder", t: Tree) -> Instruction:
    _, ty, type_tree = _typed(b, t)
    name = BuiltinName(_word(t.children[0]).split(".")[1])
    cls = SpmdBuiltin if name in SPMD_BUILTINS else Builtin
    return _finish(b, cls(name, ty), [], type_tree)


def _cast(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops, ty, type_tree = _typed(b, t)
    return _finish(b, Cast(*_values(ops), ty), ops, type_tree)


def _cmp(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops, ty, type_tree = _typed(b, t)
    cond = CmpCond(_word(t.children[0]).split(".")[1])
    return _finish(b, Cmp(cond, *_values(ops), type=ty), ops, type_tree)


def _constant(b: "ProgramBuilder", t: Tree) -> Instruction:
    literal, type_tree = t.children
    inst = Constant(constant(literal, b.ctx), build_type(type_tree, b.ctx))
    return _finish(b, inst, [], type_tree)


def _expand(b: "ProgramBuilder", t: Tree) -> Instruction:
    tensor_tok, mode_tok, shape_tree, type_tree = t.children
    ops = [b.ctx.use(tensor_tok)]
    static_shape: list[int] = []
    for entry in shape_tree.children:
        if entry.type == "LOCAL_ID":
            ops.append(b.ctx.use(entry))
            static_shape.append(DYNAMIC)
        else:
            static_shape.append(_non_negative(b, entry, "expand shape entry"))
    inst = Expand(ops[0][0], integer(mode_tok, b.ctx), static_shape, _values(ops[1:]),
                  build_type(type_tree, b.ctx))
    return _finish(b, inst, ops, type_tree)


def _non_negative(b: "ProgramBuilder", token: Token, what: str) -> int:
    """A literal that the IR stores beside the DYNAMIC marker, so it must be >= 0."""
    value = integer(token, b.ctx)
    if value < 0:
        b.ctx.error(f"{what} must not be negative, got {value}", token)
        return 0
    return value


def _for(b: "ProgramBuilder", t: Tree) -> Instruction:
    var_tok, *bound_toks = _ids(t)
    type_tree = _child(t, "integer_type")
    loop_type = build_type(type_tree, b.ctx) if type_tree is not None else index
    bounds = _uses(b, bound_toks)
    init_tree = _child(t, "for_init")
    carried: list[tuple[Value, Token]] = []
    init: list[Operand] = []
    types_tree = None
    if init_tree is not None:
        *pairs, types_tree = init_tree.children
        init = _uses(b, [p.children[1] for p in pairs])
        types = [build_type(c, b.ctx) for c in types_tree.children]
        if len(types) != len(pairs):
            b.ctx.error(f"for carries {len(pairs)} values but {len(types)} "
                        f"type{'s are' if len(types) != 1 else ' is'} given after '->'",
                        types_tree)
        n = min(len(types), len(pairs))
        init = init[:n]
        carried = [(Value(ty), p.children[0]) for ty, p in zip(types, pairs)]
    loop_var = Value(loop_type)
    body = b.region(_child(t, "region"), [(loop_var, var_tok), *carried])
    lower, upper = bounds[0][0], bounds[1][0]
    step = bounds[2][0] if len(bounds) == 3 else None
    inst = For(loop_var, lower, upper, step, [v for v, _ in carried], _values(init), body,
               loop_type, dictionary(_child(t, "dictionary"), b.ctx))
    return _finish(b, inst, bounds + init, types_tree)


def _fuse(b: "ProgramBuilder", t: Tree) -> Instruction:
    tensor_tok, first, last, type_tree = t.children
    ops = [b.ctx.use(tensor_tok)]
    inst = Fuse(ops[0][0], integer(first, b.ctx), integer(last, b.ctx),
                build_type(type_tree, b.ctx))
    return _finish(b, inst, ops, type_tree)


def _if(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops = _uses(b, _ids(t))
    types_tree = _child(t, "return_types")
    types = [build_type(c, b.ctx) for c in types_tree.children] if types_tree else []
    regions = [b.region(r, []) for r in _children(t, "region")]
    inst = If(ops[0][0], types, regions[0], regions[1] if len(regions) > 1 else None)
    return _finish(b, inst, ops, types_tree)


def _load(b: "ProgramBuilder", t: Tree) -> Instruction:
    type_tree = _type_tree(t)
    index_list = _child(t, "indices")
    ops = [b.ctx.use(t.children[0])] + _uses(b, index_list.children if index_list else [])
    inst = Load(ops[0][0], _values(ops[1:]), build_type(type_tree, b.ctx))
    return _finish(b, inst, ops, type_tree)


def _math_unary(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops, ty, type_tree = _typed(b, t)
    op = MathUnaryOp(_word(t.children[0]).split(".")[1])
    return _finish(b, MathUnary(op, *_values(ops), ty), ops, type_tree)


def _size(b: "ProgramBuilder", t: Tree) -> Instruction:
    tensor_tok, mode_tok, type_tree = t.children
    ops = [b.ctx.use(tensor_tok)]
    inst = Size(ops[0][0], integer(mode_tok, b.ctx), type=build_type(type_tree, b.ctx))
    return _finish(b, inst, ops, type_tree)


def _store(b: "ProgramBuilder", t: Tree) -> Instruction:
    flag = StoreFlag(_word(_child(t, "store_flag")) or "")
    index_list = _child(t, "indices")
    ops = _uses(b, _ids(t)) + _uses(b, index_list.children if index_list else [])
    inst = Store(ops[0][0], ops[1][0], _values(ops[2:]), flag)
    return _finish(b, inst, ops)


def _subview(b: "ProgramBuilder", t: Tree) -> Instruction:
    type_tree = _type_tree(t)
    tensor = b.ctx.use(t.children[0])
    static_offsets: list[int] = []
    static_sizes: list[int] = []
    single: list[bool] = []
    offsets: list[Operand] = []
    sizes: list[Operand] = []
    for s in t.children[1:-1]:
        if s.data == "whole_mode":
            static_offsets.append(0)
            static_sizes.append(WHOLE_MODE)
            single.append(False)
            continue
        parts = s.children
        for token, statics, dynamics, what in zip(
                parts, (static_offsets, static_sizes), (offsets, sizes),
                ("subview offset", "subview size")):
            if token.type == "LOCAL_ID":
                dynamics.append(b.ctx.use(token))
                statics.append(DYNAMIC)
            else:
                statics.append(_non_negative(b, token, what))
        if len(parts) == 1:
            static_sizes.append(0)
        single.append(len(parts) == 1)
    inst = Subview(tensor[0], static_offsets, static_sizes, _values(offsets), _values(sizes),
                   build_type(type_tree, b.ctx), single_index=single)
    return _finish(b, inst, [tensor] + offsets + sizes, type_tree)


def _yield(b: "ProgramBuilder", t: Tree) -> Instruction:
    value_list = _child(t, "values")
    ops = _uses(b, value_list.children if value_list else [])
    return _finish(b, Yield(_values(ops)), ops)


def _lifetime_stop(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops = _uses(b, _ids(t))
    return _finish(b, LifetimeStop(ops[0][0]), ops)


# ---------------------------------------------------------------- SPMD

def _checked(t: Tree) -> CheckedFlag:
    return CheckedFlag(_word(_child(t, "checked_flag")) or "")


def _coop_load(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops, ty, type_tree = _typed(b, t)
    transpose = _word(_child(t, "transpose")) == ".t"
    inst = CoopMatrixLoad(transpose, _checked(t), *_values(ops), ty)
    return _finish(b, inst, ops, type_tree)


def _coop_mul_add(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops, ty, type_tree = _typed(b, t)
    return _finish(b, CoopMatrixMulAdd(*_values(ops), ty), ops, type_tree)


def _coop_scale(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops, ty, type_tree = _typed(b, t)
    return _finish(b, CoopMatrixScale(*_values(ops), ty), ops, type_tree)


def _coop_store(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops = _uses(b, _ids(t))
    flag = StoreFlag(_word(_child(t, "store_flag")) or "")
    transpose = _word(_child(t, "transpose")) == ".t"
    return _finish(b, CoopMatrixStore(_checked(t), flag, *_values(ops), transpose=transpose), ops)


def _subgroup_broadcast(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops, ty, type_tree = _typed(b, t)
    return _finish(b, SubgroupBroadcast(*_values(ops), ty), ops, type_tree)


def _subgroup_operation(b: "ProgramBuilder", t: Tree) -> Instruction:
    ops, ty, type_tree = _typed(b, t)
    family, mode = _word(t.children[0]).split(".")
    inst = SubgroupOperation(SubgroupOp(family.split("_")[1]), SubgroupMode(mode),
                             *_values(ops), ty)
    return _finish(b, inst, ops, type_tree)


_BUILDERS: dict[str, Callable[["ProgramBuilder", Tree], Instruction]] = {
    "alloca": _alloca, "axpby": _blas, "cumsum": _blas, "foreach": _foreach, "gemm": _blas,
    "gemv": _blas, "ger": _blas, "hadamard_product": _blas, "parallel": _parallel, "sum": _blas,
    "arith_binary": _arith_binary, "arith_unary": _arith_unary, "barrier": _barrier,
    "builtin": _builtin, "cast": _cast, "cmp": _cmp, "constant_inst": _constant,
    "expand": _expand, "for_loop": _for, "fuse": _fuse, "if_else": _if, "load": _load,
    "math_unary": _math_unary, "size": _size, "store": _store, "subview": _subview,
    "yield_inst": _yield, "lifetime_stop": _lifetime_stop, "coop_load": _coop_load,
    "coop_mul_add": _coop_mul_add, "coop_scale": _coop_scale, "coop_store": _coop_store,
    "subgroup_broadcast": _subgroup_broadcast, "subgroup_operation": _subgroup_operation,
}
