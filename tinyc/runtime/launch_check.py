"""The compiler's launch conditions (tinyc/analysis/launch_bounds.py), checked for each call.

A kernel's conditions are expressions of the batch, its scalar arguments and
the `?` sizes of its array arguments that must not be negative. A call's
packers record the sizes they checked (`Call.sizes`: a memref's shape; a
group's member count and the smallest and largest size of each member mode,
over all members); `LaunchCheck.verify` evaluates the conditions with them
(interval arithmetic where members differ) before anything runs, and raises
LaunchError naming the argument, the mode and the largest batch that fits.
Results are remembered per sizes and batch, so a repeated call costs a
dictionary lookup.

`largest_batch` finds the largest batch the conditions allow for given
sizes (by bisection: a larger batch reaches further); `infer` is the batch
of a call without `batch=`: the useful batch of guarded kernels (one more
than the last work-group that can reach an argument: batch_extents.py),
else that largest batch when the arguments bound it, else a LaunchError (a
kernel whose batch no argument bounds needs `batch=`).
Kernels without conditions (KernelInfo.launch None: SPIR-V not made by
tinyc.compile) are checked by their batch modes (ParamInfo.batch_mode) alone.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable, Sequence

from tinyc.analysis.batch_extents import useful_batch
from tinyc.analysis.symbolic import Sym, interval
from tinyc.diagnostics import LaunchError
from tinyc.ir.types import GroupType, MemrefType
from tinyc.signature import KernelInfo

MAX_BATCH = 2**31 - 1
MAX_WORK_ITEMS = 2**31 - 1
"""The most work-items one launch may have (Intel's OpenCL CPU runtime refuses 2^31)."""
MEMO_SIZE = 256


class LaunchCheck:
    """A kernel's launch conditions, ready to evaluate for calls (module docs)."""

    def __init__(self, info: Any):
        self.info = info
        launch = info.launch
        self.conditions = launch.conditions if launch is not None else ()
        self.symbols = sorted((s for s in launch.symbols if s.kind != "batch"), key=repr) if launch else []
        self.getters = [_getter(s) for s in self.symbols]
        self.params_of = [_params_of(c) for c in self.conditions]
        self.memo: dict[tuple, int] = {}  # (batch, sizes) -> index of a failing condition or -1
        self.active = bool(self.conditions)
        x, y = info.work_group_size
        self.limit = min(MAX_BATCH, MAX_WORK_ITEMS // max(x * y, 1))  # work-groups of one launch

    # -- a call ------------------------------------------------------------------------------
    def sizes(self, call: Any, args: Sequence[Any]) -> tuple | None:
        """The values of the conditions' symbols for a bound call (None: an argument is None)."""
        try:
            return tuple(get(call.sizes, args) for get in self.getters)
        except _Absent:
            return None

    def verify(self, call: Any, args: Sequence[Any], batch: int, conditions: bool = True) -> None:
        """LaunchError unless the device launches `batch` work-groups at once and (unless
        `conditions` is False) every condition holds for this call (module docs)."""
        if batch > self.limit:
            if conditions and self.active:  # name the argument when it, too, refuses the batch
                sizes = self.sizes(call, args)
                failed = self._failing(sizes, batch, args)
                if failed >= 0:
                    raise self._error(failed, sizes, batch, args)
            x, y = self.info.work_group_size
            error = LaunchError(f"kernel '{self.info.name}' with batch={batch}: {batch * x * y} work-items "
                                f"({x}x{y} per work-group), more than one launch may have "
                                f"({MAX_WORK_ITEMS}); the largest batch is {self.limit}", argument="batch")
            error.max_batch = self.limit  # type: ignore[attr-defined]
            raise error
        if not conditions or not self.active or not batch:
            return
        sizes = self.sizes(call, args)
        failed = self._failing(sizes, batch, args)
        if failed >= 0:
            raise self._error(failed, sizes, batch, args)

    def _failing(self, sizes: tuple | None, batch: int, args: Sequence[Any]) -> int:
        key = (batch, sizes)
        found = self.memo.get(key) if sizes is not None else None
        if found is None:
            found = self._evaluate(sizes, batch, args)
            if sizes is not None:
                if len(self.memo) >= MEMO_SIZE:
                    self.memo.clear()
                self.memo[key] = found
        return found

    def _values(self, sizes: tuple | None, batch: int, args: Sequence[Any]) -> dict:
        values = {Sym("batch", (), 0): (batch, batch)}
        if sizes is not None:
            for sym, v in zip(self.symbols, sizes):
                values[sym] = v if isinstance(v, tuple) else (v, v)
        return values

    def _evaluate(self, sizes: tuple | None, batch: int, args: Sequence[Any]) -> int:
        values = self._values(sizes, batch, args)
        skipped = {p for p, a in enumerate(args) if a is None}  # null memrefs: the kernel checks them
        for k, c in enumerate(self.conditions):
            if self.params_of[k] & skipped:
                continue
            try:
                low = interval(c.slack, values)[0]
            except (KeyError, ZeroDivisionError):
                continue  # (a symbol of an absent argument)
            if low < 0:
                return k
        return -1

    def largest_batch(self, sizes: tuple | None, args: Sequence[Any], cap: bool = True) -> int:
        """The largest batch for which every condition holds (0 if none), at most what one
        launch may have (`cap`; else at most MAX_BATCH)."""
        top = self.limit if cap else MAX_BATCH
        if self._failing(sizes, top, args) < 0:
            return top
        low, high = 0, top  # holds at low (nothing runs), fails at high
        while high - low > 1:
            middle = (low + high) // 2
            if self._failing(sizes, middle, args) < 0:
                low = middle
            else:
                high = middle
        return low

    # -- messages ----------------------------------------------------------------------------
    def _error(self, failed: int, sizes: tuple | None, batch: int, args: Sequence[Any]) -> LaunchError:
        c = self.conditions[failed]
        values = self._values(sizes, batch, args)
        largest = self.largest_batch(sizes, args)
        reach = interval(c.reach, values)
        limit = interval(c.limit, values) if c.limit is not None else (0, 0)
        if c.kind == "upper":
            what = (f"{c.site} reaches entry {reach[1]} of {c.detail} of {c.subject}, which has "
                    f"{limit[0]} entr{'y' if limit[0] == 1 else 'ies'}")
        elif c.kind == "lower":
            what = f"{c.site} reaches entry {reach[0]} of {c.detail} of {c.subject}, below 0"
        elif c.kind == "fits":
            what = f"{c.site} computes {reach[1] if c.slack == c.limit - c.reach else reach[0]} in {c.subject}, outside its range"
        else:
            what = f"{c.site}: {c.subject} does not hold ({reach[0]} != {limit[0]})"
        fits = (f"the largest batch these arguments take is {largest}" if largest
                else "no batch fits these arguments")
        name = self.info.params[c.param].name if c.param is not None else None
        error = LaunchError(f"kernel '{self.info.name}' with batch={batch}: {what}; {fits}", argument=name)
        error.max_batch = largest  # type: ignore[attr-defined]
        return error

    # -- a call without batch= ----------------------------------------------------------------
    def infer(self, call: Any, args: Sequence[Any]) -> int:
        """The batch of a call without `batch=` (module docs)."""
        if self.info.launch is None:
            return _from_batch_modes(self.info, call)
        sizes = self.sizes(call, args)
        largest = self.largest_batch(sizes, args, cap=False)
        values = self._values(sizes, 0, args)
        useful = useful_batch(self.info.launch.last_groups, values) if sizes is not None else MAX_BATCH
        if useful < MAX_BATCH:  # guarded accesses: the work-groups that do something (batch_extents.py)
            if useful == 0 or largest > 0:
                return min(useful, largest)
        elif largest >= MAX_BATCH:
            raise LaunchError(f"kernel '{self.info.name}': no argument bounds the batch, so batch= is "
                              f"needed", argument="batch")
        if largest == 0:
            failed = self._failing(sizes, 1, args)
            if self._empty(failed, sizes, args):  # an array of no entries: nothing to run
                return 0
            raise self._error(failed, sizes, 1, args)
        return largest  # (verify refuses it if one launch cannot have that many work-groups)

    def _empty(self, failed: int, sizes: tuple | None, args: Sequence[Any]) -> bool:
        """Whether the condition that fails at batch 1 is an access to a mode of no entries."""
        c = self.conditions[failed]
        if c.kind != "upper" or c.limit is None:
            return False
        return interval(c.limit, self._values(sizes, 1, args)) == (0, 0)


class _Absent(Exception):
    """An argument passed as None (a null memref): its sizes are not known."""


def _params_of(condition: Any) -> set[int]:
    found = {s.key[0] for s in condition.slack.symbols() if s.kind != "batch" and s.key}
    return found | ({condition.param} if condition.param is not None else set())


def _getter(sym: Sym) -> Callable[[dict, Sequence[Any]], Any]:
    """How to read a symbol's value from a call's recorded sizes and its arguments."""
    kind, key = sym.kind, sym.key
    p = key[0]

    def recorded(sizes: dict) -> Any:
        found = sizes.get(p)
        if found is None:
            raise _Absent
        return found

    if kind == "scalar":
        def scalar(sizes: dict, args: Sequence[Any]) -> int:
            value = args[p]
            if value is None:
                raise _Absent
            return int(value)
        return scalar
    if kind == "dim":
        m = key[1]
        return lambda sizes, args: recorded(sizes)[m]
    if kind == "count":
        return lambda sizes, args: recorded(sizes)[0]
    if kind == "member_dim":
        m = key[1]

        def member(sizes: dict, args: Sequence[Any]) -> tuple[int, int]:
            _, low, high = recorded(sizes)
            return (low[m], high[m])
        return member
    raise ValueError(f"no value for the launch symbol {sym!r}")


def _from_batch_modes(info: Any, call: Any) -> int:
    """A kernel without conditions: the smallest batch mode of its batched arguments."""
    found = []
    for p, param in enumerate(info.params):
        recorded = call.sizes.get(p)
        if param.batch_mode is None or recorded is None:
            continue
        if isinstance(param.type, MemrefType):
            found.append(recorded[param.batch_mode])
        elif isinstance(param.type, GroupType):
            found.append(recorded[0])
    if not found:
        raise LaunchError(f"kernel '{info.name}': no argument has a batch mode, so batch= is needed",
                          argument="batch")
    return min(found)


_CHECKS: dict[int, tuple[Any, LaunchCheck]] = {}


def check_of(info: Any) -> LaunchCheck:
    """The LaunchCheck of a KernelInfo (made once; the info is held, so its id stays its own)."""
    found = _CHECKS.get(id(info))
    if found is None or found[0] is not info:
        if len(_CHECKS) >= MEMO_SIZE:
            _CHECKS.clear()
        found = _CHECKS[id(info)] = (info, LaunchCheck(info))
    return found[1]


class LaunchInfo(KernelInfo):
    """A KernelInfo as a runtime Kernel holds it (`k.info`): the compiler's signature plus
    `max_batch`, which reads arguments (NumPy and USM arrays, groups) and so lives with the
    runtime, not with codegen (which makes the KernelInfo)."""

    @classmethod
    def of(cls, info: KernelInfo) -> "LaunchInfo":
        if isinstance(info, cls):
            return info
        return cls(**{f.name: getattr(info, f.name) for f in fields(info)})

    def max_batch(self, *args: Any) -> int:
        """The largest batch these arguments can take (0 if none; 2**31 - 1, the most a launch
        allows, if nothing bounds it). LaunchError for arguments that do not fit the signature."""
        return max_batch(self, args)


def max_batch(info: Any, args: Sequence[Any]) -> int:
    """`k.info.max_batch(*args)` (LaunchInfo): the largest batch these arguments take (module docs)."""
    if len(args) != len(info.params):
        raise LaunchError(f"{info.name}() takes {len(info.params)} arguments, got {len(args)}")

    class Sizes:  # what a call's packers would record
        sizes = read_sizes(info, args)

    check = check_of(info)
    if info.launch is None:
        return min(_from_batch_modes(info, Sizes), check.limit)
    return check.largest_batch(check.sizes(Sizes, args), args)


def write_blocks(info: Any, args: Sequence[Any], batch: int) -> dict[int, tuple[tuple[int, ...], int]]:
    """parameter -> (modes, step) for each argument that work-group g writes only in entries
    [step·g, step·g + step) of those modes (flattened, the first fastest) at this launch
    (launch_bounds.WriteBlock: its expressions evaluated with the arguments' sizes and the batch)."""
    blocks = info.launch.write_blocks if info.launch is not None else ()
    if not blocks:
        return {}
    sizes = read_sizes(info, args)
    values: dict[Sym, tuple[int, int]] = {Sym("batch", (), 0): (batch, batch)}
    found = {}
    for block in blocks:
        try:
            for slack in block.slacks:
                for sym in slack.symbols():
                    if sym not in values:
                        v = _getter(sym)(sizes, args)
                        values[sym] = v if isinstance(v, tuple) else (v, v)
            holds = all(interval(slack, values)[0] >= 0 for slack in block.slacks)
        except (_Absent, KeyError, ZeroDivisionError):
            continue
        if holds:
            found[block.param] = (block.modes, block.step)
    return found


def read_sizes(info: Any, args: Sequence[Any]) -> dict[int, Any]:
    """The sizes a call's packers record (Call.sizes), read from the arguments themselves."""
    from tinyc.runtime.arrays import array_view, fitter
    from tinyc.runtime.groups import Group

    found: dict[int, Any] = {}
    for p, (param, value) in enumerate(zip(info.params, args)):
        t = param.type
        if value is None or not isinstance(t, (MemrefType, GroupType)):
            continue
        if isinstance(t, MemrefType):
            view = array_view(value, param.name, str(t))
            found[p] = fitter(t).fit(view, param.name, str(t)).shape
            continue
        arrays, shape = (value.arrays, value.shape) if isinstance(value, Group) else (value, None)
        if hasattr(arrays, "shape") or hasattr(arrays, "__sycl_usm_array_interface__"):
            whole = array_view(arrays, param.name, str(t)).shape
            count, shapes = (whole[-1] if whole else 0), [whole[:-1]]
        else:
            count = len(arrays)
            shapes = [tuple(array_view(a, param.name, str(t)).shape) for a in arrays]
        if shape is not None:  # flat members: the memref shape is given
            shapes = [tuple(shape)] if all(isinstance(n, int) for n in shape) else [tuple(s) for s in shape]
        order = t.memref.order
        shapes = [s for s in shapes if len(s) == order] or [tuple(t.memref.shape)]
        low = tuple(min(s[m] for s in shapes) for m in range(order))
        high = tuple(max(s[m] for s in shapes) for m in range(order))
        found[p] = (count, low, high)
    return found
