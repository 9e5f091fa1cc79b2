"""The command line's own error type."""


class UsageError(Exception):
    """A command was asked for something its options cannot give: exit code 2.

    Raised by command bodies (a malformed `--size`, a kernel name that does
    not exist). Only this type becomes a usage error; any other exception
    from a command body is a bug and is not disguised as bad input.
    """
