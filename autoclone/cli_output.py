"""The command line's two streams: the result on stdout, everything else on stderr.

Split out of ``autoclone.cli`` to keep that module short. A closed, full or broken
stream must end a run in one line and an exit code, never in a traceback: stdout's
failures become an ``OutputError``, stderr's are dropped.
"""

from __future__ import annotations

import contextlib
import os
import sys


def err(message: str) -> None:
    """One line on stderr; a closed or hung-up terminal must not turn it into a crash."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        print(message, file=sys.stderr, flush=True)


class OutputError(Exception):
    """stdout is closed, full or gone: the result could not be delivered."""


def need_stdout() -> None:
    """The result goes to stdout: refuse to work for minutes only to lose it."""
    if sys.stdout is None:
        raise OutputError("stdout is closed; there is nowhere to print the result")


def out(text: str | bytes) -> None:
    """Write the result; a closed, full or broken stdout becomes an ``OutputError``."""
    try:
        if sys.stdout is None:
            raise OSError("stdout is closed")
        if isinstance(text, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(text)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    except (OSError, ValueError) as exc:
        _silence_stdout()
        raise OutputError(f"cannot write the result to stdout: {exc}") from exc


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush cannot fail again."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit


def hold_standard_fds() -> None:
    """A standard descriptor closed by the caller (``>&-``) would be handed to the next
    file or pipe opened; hold it with /dev/null (``sys.stdout`` stays None: refused)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            with contextlib.suppress(OSError):
                devnull = os.open(os.devnull, os.O_RDWR)
                if devnull != fd:
                    os.dup2(devnull, fd)
                    os.close(devnull)
