"""The builder's collective methods, made from the instruction classes' constructors.

`fn.gemm(alpha, A, B, beta, C, transpose_a=False, transpose_b=False, atomic=False)` and
its six siblings are not written by hand: each collective class's constructor
says its operands (alpha, the inputs, beta, the output, and any literal such
as cumsum's mode, in order) and modifiers (the transposes it takes first,
`atomic`). The method takes the operands in that order, then the modifiers
as keywords defaulting to False; numbers become constants of the types the
spec requires (alpha: the promoted type of the inputs, beta: the output's
element type) and a transpose may be given as "t"/"n". A new collective
class gets its method without a change here.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable

from tinyc.ir.core import Value

if TYPE_CHECKING:
    from tinyc.builder.function import FunctionBuilder
    from tinyc.ir.instructions import BlasInstruction


def collective_method(cls: "type[BlasInstruction]", transposed: Callable[[Any, str], bool]
                      ) -> Callable[..., None]:
    """The builder method that appends one instruction of collective class `cls`."""
    parameters = [p for name, p in inspect.signature(cls.__init__).parameters.items()
                  if name not in ("self", "span")]
    names = [p.name for p in parameters]
    first = names.index("alpha")
    modifiers = names[:first] + [n for n in names[first:] if n == "atomic"]
    operands = [n for n in names[first:] if n != "atomic"]
    output = operands[operands.index("beta") + 1]
    signature = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in operands]
        + [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=False)
           for n in modifiers], return_annotation=None)

    def method(self: "FunctionBuilder", *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        given = dict(bound.arguments)
        del given["self"]
        inputs = [given[n] for n in operands[1:operands.index("beta")] if isinstance(given[n], Value)]
        given["alpha"], given["beta"] = self._scalars(given["alpha"], given["beta"], inputs,
                                                      given[output])
        for name in modifiers:
            given[name] = transposed(given[name], name) if name != "atomic" else bool(given[name])
        self._add(cls(**given))

    method.__name__ = method.__qualname__ = cls.opname
    method.__doc__ = cls.__doc__
    method.__signature__ = signature  # type: ignore[attr-defined]
    return method
