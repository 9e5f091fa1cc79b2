"""`Program`: the functions built from Python, as IR and as text.

    prog = Program()
    fn = prog.function("scale", A=memref(f32, 16, None))
    ...
    tinyc.compile(prog)      # verified first; errors point at the Python lines
    print(prog)              # tensor-language text that parses back to the same IR
"""

from __future__ import annotations

from typing import Any, Iterable

from tinyc.builder import location
from tinyc.builder.function import FunctionBuilder
from tinyc.ir.core import Function
from tinyc.ir.core import Program as IRProgram
from tinyc.ir.printer import print_program
from tinyc.ir.types import Type
from tinyc.std import Std, Version


class Program:
    """A translation unit under construction; `tinyc.compile` accepts it."""

    def __init__(self, name: str = "<builder>", std: str | Std | None = None):
        self.name = name
        self.std = None if std is None else Std(std) if isinstance(std, str) else std
        self.ir = IRProgram([])
        self._builders: dict[str, FunctionBuilder] = {}

    def function(self, name: str, params: dict[str, Type] | Iterable[tuple[str, Type]] | None = None,
                 attributes: dict[str, Any] | None = None, **kw_params: Type) -> FunctionBuilder:
        """A new function `@name`; parameters in order, as a dict, (name, type) pairs or keywords."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a function needs a name, got {name!r}")
        if name in self._builders:
            raise ValueError(f"function '@{name}' is already defined")
        fn = Function(name, [], span=location.caller_span())
        for key, value in (attributes or {}).items():
            fn.attrs[key] = list(value) if isinstance(value, tuple) else value
        builder = FunctionBuilder(fn, set())
        pairs = list(params.items()) if isinstance(params, dict) else list(params or [])
        for param_name, param_type in pairs + list(kw_params.items()):
            builder.param(param_name, param_type)
        self.ir.functions.append(fn)
        self._builders[name] = builder
        return builder

    def __getitem__(self, name: str) -> FunctionBuilder:
        return self._builders[name]

    @property
    def functions(self) -> list[FunctionBuilder]:
        return list(self._builders.values())

    def version(self) -> Std:
        """The language version: the one given, else the newest if an instruction exists only
        there (`foreach_tile`, `associated`), else the seed (tinyc.std)."""
        if self.std is not None:
            return self.std
        for fn in self.ir.functions:
            for inst in fn.walk():
                keywords = type(inst).keywords
                if keywords and all(type(inst).versions.get(k) is Std.NEWEST for k in keywords):
                    return Std.NEWEST
        return Std.SEED

    def _with_version(self) -> IRProgram:
        std = self.version()
        self.ir.version = Version(std, "given")
        return self.ir

    def verify(self) -> None:
        """Check the built IR; raises CompilationError located at the Python lines."""
        from tinyc.ir.verifier import verify

        verify(self._with_version())

    def text(self) -> str:
        """The program as tensor-language source (declaring `; std: newest` when it is)."""
        ir = self._with_version()
        return print_program(ir, declare=ir.std is Std.NEWEST)

    def checked_source(self) -> str:
        """Verify, then print: what `tinyc.compile` does with a built program."""
        self.verify()
        return self.text()

    def __str__(self) -> str:
        return self.text()

    def relocate(self, error: Any, text: str, name: str) -> Any:
        """A CompilationError about this program's printed `text` (compiled as `name`), located
        at the Python lines that built it instead (relocate.py); the error itself otherwise."""
        from tinyc.builder.relocate import relocate_error

        return relocate_error(error, self.ir, text, name)

    def relocate_diagnostics(self, diagnostics: list, text: str, name: str) -> list:
        """Warnings about the printed `text`, located at the Python lines (as `relocate`)."""
        from tinyc.builder.relocate import line_map, relocated

        lines = line_map(self.ir, text, name)
        return relocated(diagnostics, lines, name) if lines else list(diagnostics)

    def __repr__(self) -> str:
        return f"<tinyc.builder.Program {', '.join('@' + n for n in self._builders) or '(empty)'}>"
