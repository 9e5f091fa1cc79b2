"""apply-schedule: put a schedule kept apart from the source onto the IR.

Knobs come from three places; for each knob the strongest one wins:

1. the schedule given to the compiler (`tinyc.compile(schedule=...)`,
   `tinyc compile --schedule s.json`): kept apart from the algorithm, it
   overrides the source, as a command-line flag overrides a file;
2. attributes in the source (`attributes {...}` on a collective, the
   function's `subgroup_size` / `work_group_size`);
3. a schedule the autotuner found for this kernel on this device (cached on
   disk, tinyc/tune/cache.py); the tuner never changes knobs that 1 or 2 fix.

Function knobs become the function's attributes, instruction knobs the
collective's attributes, so `--print-after apply-schedule` shows them in the
source syntax. Unset knobs are filled in by verify-schedule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinyc.ir.core import Function
from tinyc.schedule.program import function_knobs, instruction_knobs, scheduled_instructions

if TYPE_CHECKING:
    from tinyc.passes import PassOptions


def apply_schedule(fn: Function, options: "PassOptions") -> None:
    """Merge the given and the tuned schedule of `fn` into its attributes."""
    given = options.schedule.for_kernel(fn.name) if options.schedule else {}
    tuned = (options.tuned or {}).get(fn.name, {})
    if not given and not tuned:
        return
    fn.attrs = {**function_knobs(tuned), **fn.attrs, **function_knobs(given)}
    for key, inst in scheduled_instructions(fn):
        inst.attrs = {**instruction_knobs(tuned, key), **inst.attrs, **instruction_knobs(given, key)}
