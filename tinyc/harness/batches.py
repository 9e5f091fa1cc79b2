"""The batch `tinyc run`, `bench` and `tune` launch: one the kernel can take with its arguments.

The random arguments are made for the wanted batch (arguments.py, sizes.py: `?`
modes the batch reaches are sized for it). The kernel's launch conditions
then say how many work-groups those arguments take (`Kernel.max_batch`):
an explicit `--batch` beyond that is a usage error (exit 2) that names the
argument, the mode and the largest batch that fits; a default batch beyond
it is lowered to it, and the arguments are made again for that batch. A default
batch whose arguments would not fit in memory is lowered until they do. A kernel
that reads neither the group id nor the group count but writes an argument (a
printed contraction with static shapes: "launch 1 work-group") takes batch 1: more
work-groups would all write the same elements, so `--batch N > 1` is refused.
"""

from __future__ import annotations

from typing import Any, Callable

from tinyc.diagnostics import LaunchError, UsageError

Make = Callable[[int], Any]
"""Random arguments for a batch (what make_arguments returns)."""


def fitting(kernel: Any, make: Make, given: int | None, default: int,
            args_of: Callable[[Any], list] = lambda made: made[0]) -> tuple[Any, int]:
    """(what `make` made, the batch to launch) for `--batch given` (None: the default)."""
    if given is not None:
        refuse_repeated_work(kernel, given)
    wanted = given if given is not None else default
    if _repeated_writes(kernel):
        wanted = 1
    made, wanted = _made(make, wanted, given is None)
    largest = kernel.max_batch(*args_of(made))
    if largest >= wanted:
        return made, wanted
    reason = _refusal(kernel, args_of(made), wanted)
    if given is not None:
        raise UsageError(f"--batch {given}: {reason}")
    if largest == 0:
        raise LaunchError(reason)
    for _ in range(3):  # made again for the smaller batch (its `?` sizes may shrink with it)
        made = make(largest)
        smaller = kernel.max_batch(*args_of(made))
        if smaller >= largest:
            return made, largest
        largest = smaller
        if largest == 0:
            break
    raise LaunchError(_refusal(kernel, args_of(made), max(largest, 1)))


def refuse_repeated_work(kernel: Any, batch: int) -> None:
    """UsageError for `--batch N > 1` of a kernel whose work-groups all write the same elements
    (what `fitting` and `mpiexec tinyc run` check before they launch)."""
    repeated = _repeated_writes(kernel)
    if repeated and batch > 1:
        raise UsageError(f"--batch {batch}: kernel '{kernel.name}' reads neither its group id nor the group "
                         f"count, so every work-group would repeat the same work and write the same elements "
                         f"of {', '.join(repeated)}; launch it with --batch 1")


def _repeated_writes(kernel: Any) -> tuple[str, ...]:
    """What every work-group of `kernel` writes alike (launch_bounds: `repeated_writes`)."""
    launch = getattr(kernel.info, "launch", None)
    return getattr(launch, "repeated_writes", ()) if launch is not None else ()


def _made(make: Make, wanted: int, default: bool) -> tuple[Any, int]:
    """(make(wanted), wanted); a default batch whose arguments would not fit in memory (a
    kernel with many batch entries per work-group: generated contractions) is lowered, a
    quarter at a time, until they fit (an explicit --batch is refused instead)."""
    while True:
        try:
            return make(wanted), wanted
        except UsageError:
            if not default or wanted <= 1:
                raise
            wanted = max(1, wanted // 4)


def _refusal(kernel: Any, args: list, batch: int) -> str:
    """Why `batch` does not fit the arguments (the launch check's message)."""
    try:
        kernel.pack(*args, batch=batch)  # raises what the check says
    except LaunchError as err:
        return str(err)
    return f"kernel '{kernel.name}' takes at most {kernel.max_batch(*args)} work-groups with these arguments"
