"""Schedules: how each kernel is lowered, apart from what it computes.

- `knobs.py`: every lowering decision as a named knob with its range, its
  default and the tuner's search space;
- `program.py`: schedules kept apart from the source (`schedule={...}`,
  `--schedule s.json`), keyed by kernel and instruction;
- `defaults.py`: the heuristics for knobs a schedule leaves unset;
- `resolve.py`: a collective's complete schedule and whether it fits the device.

The passes `apply-schedule` and `verify-schedule` (tinyc/passes/) put a
schedule on the IR and check it; the autotuner lives in tinyc/tune/.
docs/schedules.md is the user's guide.
"""

from tinyc.schedule.program import Schedule

__all__ = ["Schedule"]
