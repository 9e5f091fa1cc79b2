"""Why the reference interpreter stops instead of answering.

The interpreter is an oracle: it must never hand back a plausible but wrong
result. It either emulates an instruction exactly as the spec says, or it
raises one of these with a message that names the instruction.
"""

from __future__ import annotations


class ReferenceUnsupported(NotImplementedError):
    """The kernel uses something the reference does not emulate (e.g. coopmatrix)."""


class ReferenceFault(RuntimeError):
    """The kernel did something the spec leaves undefined for these inputs.

    Examples: an out-of-bounds load or store, a subview outside its memref, an
    integer division by zero, a float-to-integer cast of NaN, a barrier that
    not all work-items reach. The device result would be meaningless, so the
    reference refuses to produce one.
    """
