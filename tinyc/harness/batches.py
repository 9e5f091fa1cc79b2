"""The batch `tinyc run`, `bench` and `tune` launch: one the kernel can take with its arguments.

The random arguments are made for the wanted batch (arguments.py, sizes.py: `?`
modes the batch reaches are sized for it). The kernel's launch conditions
then say how many work-groups those arguments take (`Kernel.max_batch`):
an explicit `--batch` beyond that is a usage error (exit 2) that names the
argument, the mode and the largest batch that fits; a default batch beyond
it is lowered to it, and the arguments are made again for that batch.
"""

from __future__ import annotations

from typing import Any, Callable

from tinyc.diagnostics import LaunchError, UsageError

Make = Callable[[int], Any]
"""Random arguments for a batch (what make_arguments returns)."""


def fitting(kernel: Any, make: Make, given: int | None, default: int,
            args_of: Callable[[Any], list] = lambda made: made[0]) -> tuple[Any, int]:
    """(what `make` made, the batch to launch) for `--batch given` (None: the default)."""
    wanted = given if given is not None else default
    made = make(wanted)
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


def _refusal(kernel: Any, args: list, batch: int) -> str:
    """Why `batch` does not fit the arguments (the launch check's message)."""
    try:
        kernel.pack(*args, batch=batch)  # raises what the check says
    except LaunchError as err:
        return str(err)
    return f"kernel '{kernel.name}' takes at most {kernel.max_batch(*args)} work-groups with these arguments"
