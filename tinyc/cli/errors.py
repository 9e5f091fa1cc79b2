"""The command line's own error type (defined with the others in tinyc/diagnostics.py, so that
tinyc/harness/ and the tuner below the command line raise it too)."""

from tinyc.diagnostics import UsageError  # noqa: F401 (the command line's name for it)
