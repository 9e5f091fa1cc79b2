"""The verifier: every restriction of the spec, checked before any pass runs.

`verify(program)` walks each function once and raises one
`CompilationError` carrying every independent error, sorted by location.
This module holds the driver and the rules that need context (regions,
scoping, signatures); each instruction's own rules are its `verify(ctx)`
method, with shared helpers and wording in tinyc/ir/checks.py.

Rules where the spec leaves room (documented decisions):

- Function bodies are collective; `foreach` and `parallel` bodies are SPMD;
  `for` and `if` bodies take the kind of the enclosing region.
- Arguments may not be void or coopmatrix, nor memrefs in the local address
  space (the kernel ABI passes global pointers only). Bool arguments are
  allowed, as in the reference (an OpTypeBool parameter: docs/decisions.md).
- Parameter attributes only on memref and group arguments; `alignment` is a
  positive power of two and a multiple of the element size; `shape_gcd` and
  `stride_gcd` hold positive integers, at most one per mode, and must divide
  the sizes / strides that are known. Unknown attribute names are errors.
- `subgroup_size` must be one of 4, 8, 16, 32, 64 (a size some target
  supports); `work_group_size` is two positive integers whose first is a
  multiple of the subgroup size (or of a supported one when none is given)
  and whose product is at most 8192. A device narrows these later.
- Memref sizes are >= 0 (a zero size is legal, if useless); the first
  stride is >= 1, no stride is negative, and the column-major rule
  S[i-1]*s[i-1] <= S[i] is checked where all three are known. Group sizes
  and offsets are >= 0; coopmatrix rows and columns are positive. An
  instruction whose written result type is malformed is not checked
  further (its other errors would only follow from the bad type).
- `yield` may only be the last instruction of a `for` or `if` region.
- An operand must be visible where it is used: a function argument, an
  argument of an enclosing region, or the result of an earlier instruction
  in the same or an enclosing region (IR built by passes can break this).
- Constants: the literal's kind must match the (component) type, as in
  tinytc: an integer literal is no float (`constant 1 : f32` is an error),
  a real literal is no complex (write `[1.0, 0.0]`). Integers must fit the
  type as signed numbers (`255 : i8` is an error) and lie in
  -2^63+1..2^63-1; floats must not round to infinity in the type.
- Not checked here: "dynamically uniform" operands (a run-time property)
  and device limits (default alignment of alloca, the device's subgroup
  and work-group sizes), which are checked once a device is chosen.
"""

from __future__ import annotations

from typing import Iterable

from tinyc.diagnostics import Diagnostic, DiagnosticSink, Note, Span, in_source_order
from tinyc.ir import attr_checks
from tinyc.ir.checks import check_subgroup_multiples, title
from tinyc.ir.core import Function, Instruction, Kind, Program, Region, Value
from tinyc.ir.instructions import SPMD_BUILTINS, Builtin, Yield
from tinyc.lint import WarningOptions, lint_function, split
from tinyc.ir.types import DYNAMIC, AddressSpace, BoolType, CoopMatrixType, GroupType, MemrefType, \
    ScalarType, Type, VoidType, type_problems
from tinyc.ir.knobs import knob_problems
from tinyc.std import DEFAULT, Std, Version, other_std

class VerifyContext:
    """What an instruction's `verify` needs: error reporting and where it sits."""

    def __init__(self, version: Version | None = None) -> None:
        self.version = version or Version(DEFAULT, "default")  # rules that differ per version
        self.sink = DiagnosticSink()
        self.region_kind: Kind = Kind.COLLECTIVE
        self.spmd_origin: Instruction | None = None  # the foreach/parallel opening the SPMD region
        self.function: Function | None = None

    def error(self, message: str, span: Span | None, notes: Iterable[Note] = ()) -> None:
        """Record one error; verification goes on to find the independent ones."""
        self.sink.error(message, span, notes)

    def defined_here(self, value: Value) -> Note:
        """`'%A' is defined here with type memref<f32x8x8>` at the value's definition."""
        name = f"'%{value.name}'" if value.name else "the value"
        return Note(f"{name} is defined here with type {value.type}", value.span)

    @property
    def in_spmd(self) -> bool:
        return self.region_kind is Kind.SPMD


def verify(program: Program, version: Version | None = None,
           warnings: "WarningOptions | None" = None) -> list[Diagnostic]:
    """Check a whole program; raise CompilationError with every error found.

    The rules that differ per language version follow the program's version,
    or `version` (lowered IR is checked with the seed's: the newest
    language's restrictions are on what the user writes, not on what the
    compiler makes). With `warnings` (tinyc.lint), each function that has no
    error is also checked for warnings: they are returned (errors if the
    options make them so: then raised), or carried by the CompilationError
    beside the errors of other functions.
    """
    ctx = VerifyContext(version or program.version)
    seen: dict[str, Function] = {}
    found: list[Diagnostic] = []
    for fn in program.functions:
        if fn.name in seen:
            ctx.error(f"function '@{fn.name}' is defined twice", fn.span,
                      [Note(f"'@{fn.name}' is first defined here", seen[fn.name].span)])
        seen.setdefault(fn.name, fn)
        errors = len(ctx.sink.diagnostics)
        verify_function(ctx, fn)
        if warnings is not None and len(ctx.sink.diagnostics) == errors:
            found += lint_function(fn, warnings)
    found = warnings.apply(found) if warnings is not None else []
    made_errors, found = split(found)
    ctx.sink.diagnostics += made_errors
    ctx.sink.raise_if_any(found)
    return in_source_order(found)


def verify_function(ctx: VerifyContext, fn: Function) -> None:
    """Signature, attributes, then the body as a collective region."""
    ctx.function = fn
    for problem in attr_checks.function_problems(fn.attrs):
        ctx.error(f"function '@{fn.name}': {problem}", fn.span)
    for arg in fn.args:
        _check_argument(ctx, arg)
    _check_abi_size(ctx, fn)
    _verify_region(ctx, fn.body, Kind.COLLECTIVE, None, set(map(id, fn.args)))


MAX_KERNEL_ARGUMENTS = 254
"""SPIR-V allows 255 function parameters; one is kept for the report buffer of
bounds-checked launches."""
MAX_ARGUMENT_BYTES = 3832
"""OpenCL's kernel argument space on the devices here (3840 bytes), less that buffer."""


def _check_abi_size(ctx: VerifyContext, fn: Function) -> None:
    """The kernel ABI (DESIGN.md) must fit SPIR-V's and OpenCL's limits on arguments."""
    count = size = 0
    for arg in fn.args:
        t = arg.type
        if isinstance(t, MemrefType):
            n = 1 + len(t.dynamic_slots())
        elif isinstance(t, GroupType):
            n = 1 + len(t.memref.dynamic_slots()) + (t.size == DYNAMIC) + (t.offset == DYNAMIC)
        else:
            n = 1
        count += n
        size += n * 8 if not isinstance(t, ScalarType) else max(8, t.size)
    if count > MAX_KERNEL_ARGUMENTS or size > MAX_ARGUMENT_BYTES:
        ctx.error(f"function '@{fn.name}' passes {count} kernel arguments ({size} bytes) under the "
                  f"calling convention (a memref or group also passes one per '?'); at most "
                  f"{MAX_KERNEL_ARGUMENTS} arguments and {MAX_ARGUMENT_BYTES} bytes fit", fn.span)


def _check_argument(ctx: VerifyContext, arg: Value) -> None:
    span = arg.type_span or arg.span
    name = f"argument '%{arg.name}'" if arg.name else "an argument"
    t = arg.type
    _check_type(ctx, t, span)
    if isinstance(t, (VoidType, CoopMatrixType)):
        ctx.error(f"{name} cannot have type {t}", span)
    memref = t.memref if isinstance(t, GroupType) else t
    if isinstance(memref, MemrefType) and memref.space is AddressSpace.LOCAL:
        ctx.error(f"{name} cannot have type {t}: arguments live in the global address space", span)
    extra_gcd_ok = ctx.version.newest_extensions  # extra gcd entries: ignored in the newest language
    for problem in attr_checks.parameter_problems(t, arg.attrs, extra_gcd_ok):
        ctx.error(f"{name}: {problem}", span)


_TYPE_PROBLEMS: dict[Type, tuple[str, ...]] = {}
"""type_problems per type: types are interned and immutable, so each is checked once
(a large function writes the same few types thousands of times)."""


def _check_type(ctx: VerifyContext, t: Type, span: Span | None) -> bool:
    """Report what is wrong with a written type; True when it is well formed."""
    problems = _TYPE_PROBLEMS.get(t)
    if problems is None:
        problems = _TYPE_PROBLEMS[t] = tuple(type_problems(t))
    for problem in problems:
        ctx.error(f"invalid type {t}: {problem}", span)
    return not problems


def _verify_region(ctx: VerifyContext, region: Region, kind: Kind,
                   origin: Instruction | None, visible: set[int]) -> None:
    """Check the instructions of a region in order; `visible` holds ids of usable values.

    `visible` is extended in place while walking and restored on return, so
    sibling regions do not see each other's values.
    """
    added: list[int] = []
    for arg in region.args:
        if id(arg) not in visible:
            visible.add(id(arg))
            added.append(id(arg))
    # The common case inline (one call per instruction less for each): an operand visible,
    # a kind that fits the region, result types already known well formed, no knobs.
    last = len(region.instructions) - 1
    mixed, std, known_types = Kind.MIXED, ctx.version.std, _TYPE_PROBLEMS
    no_multiples = Instruction.subgroup_multiples  # (most classes want none: no call)
    ctx.region_kind, ctx.spmd_origin = kind, origin
    for position, inst in enumerate(region.instructions):
        own = _effective_kind(inst, std)
        if own is not mixed and own is not kind:
            _check_kind(ctx, inst, kind, origin)
        operands = inst.operands
        if not visible.issuperset(map(id, operands)):
            _check_visible(ctx, inst, visible)
        if isinstance(inst, Yield):
            _check_yield_place(ctx, inst, region, position == last)
        well_formed = True  # every result type is checked (a loop: no list per instruction)
        results = inst.results
        for result in results:
            if known_types.get(result.type) != ():
                well_formed = _check_type(ctx, result.type, inst.type_span or inst.span) and well_formed
        if well_formed:
            inst.verify(ctx)  # a malformed result type would only add follow-on errors
            if type(inst).subgroup_multiples is not no_multiples and inst.subgroup_multiples(std):
                check_subgroup_multiples(ctx, inst)
        if inst.knobs:
            for problem in knob_problems(inst.opname, inst.knobs, inst.attrs):
                ctx.error(f"{inst.opname}: {problem}", inst.span)
        if inst.regions:
            for sub in inst.regions:
                if inst.region_kind is None:  # for, if: the enclosing kind
                    _verify_region(ctx, sub, kind, origin, visible)
                else:
                    _verify_region(ctx, sub, inst.region_kind, inst, visible)
            ctx.region_kind, ctx.spmd_origin = kind, origin
        for result in results:
            visible.add(id(result))
            added.append(id(result))
    ctx.region_kind, ctx.spmd_origin = kind, origin
    visible.difference_update(added)


def _effective_kind(inst: Instruction, std: Std) -> Kind:
    """The class's kind in version `std`; the mixed `builtin` class also spells SPMD builtins."""
    if isinstance(inst, Builtin) and inst.builtin in SPMD_BUILTINS:
        return Kind.SPMD
    return inst.kind_in(std)


def _check_kind(ctx: VerifyContext, inst: Instruction, kind: Kind, origin: Instruction | None) -> None:
    """Collective instructions only in collective regions, SPMD ones only in SPMD regions."""
    own = _effective_kind(inst, ctx.version.std)
    if own is Kind.COLLECTIVE and kind is Kind.SPMD:
        rule = ctx.version.rule() if own is not inst.kind_in(other_std(ctx.version.std)) else ""
        where = ""
        if origin is not None and origin.span is not None:
            where = f" ({origin.opname} at {origin.span.line}.{origin.span.column})"
        notes = [Note(f"the SPMD region is opened by this {origin.opname}", origin.span)] if origin else []
        ctx.error(f"{title(inst)} is a collective instruction and cannot appear inside an SPMD "
                  f"region{where}{rule}", inst.span, notes)
    elif own is Kind.SPMD and kind is Kind.COLLECTIVE:
        ctx.error(f"{title(inst)} is an SPMD instruction and cannot appear in a collective region; "
                  f"place it inside a foreach or parallel region", inst.span)


def _check_visible(ctx: VerifyContext, inst: Instruction, visible: set[int]) -> None:
    """Each operand is defined before its use, in this region or an enclosing one."""
    for i, value in enumerate(inst.operands):
        if id(value) in visible:
            continue
        name = f"'%{value.name}'" if value.name else "a value"
        ctx.error(f"{title(inst)}: {name} is used where it is not visible; an operand must be a "
                  f"function argument, an argument of an enclosing region, or defined earlier "
                  f"in this region or an enclosing one", inst.operand_span(i), [ctx.defined_here(value)])


def _check_yield_place(ctx: VerifyContext, inst: Yield, region: Region, is_last: bool) -> None:
    """Yield ends the region of a for, an if (or a cooperative_matrix_apply), and nothing else."""
    if not getattr(region.parent, "region_yields", False):
        ctx.error("yield can only appear as the last instruction of a for, if or "
                  "cooperative_matrix_apply region", inst.span)
    elif not is_last:
        ctx.error("yield must be the last instruction of its region", inst.span)
