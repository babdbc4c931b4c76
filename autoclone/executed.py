"""The lines of the user's files a traced run executed, up to where it failed.

An edit on none of those lines cannot change what the run did before it failed, so
without the edit that answered that conflict the conflict comes back just the same: the
repair's check that every edit of a multi-conflict patch is needed can skip the run that
would show it (``autoclone.repair``). Read by ``sys.settrace`` in traced runs only, and only
for frames of the user's files: a library frame is declined at its first event.
"""

from __future__ import annotations

import sys
import threading
from types import FrameType
from typing import Any

Line = tuple[str, int]


class Executed:
    """Every (file, line) of the user's files a frame of this process reached."""

    def __init__(self, own: str | tuple[str, ...]) -> None:
        self.own = own  # prefixes, for ``str.startswith``
        self.lines: set[Line] = set()
        self._mine: dict[str, bool] = {}

    def call(self, frame: FrameType, event: str, arg: Any) -> Any:
        """The global trace function: a frame of the user's gets the line tracer."""
        name = frame.f_code.co_filename
        mine = self._mine.get(name)
        if mine is None:
            mine = self._mine[name] = name.startswith(self.own)
        if not mine:
            return None
        self.lines.add((name, frame.f_lineno))
        return self.line

    def line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            self.lines.add((frame.f_code.co_filename, frame.f_lineno))
        return self.line

    def snapshot(self) -> list[Line]:
        return sorted(self.lines)


def install(own: str | tuple[str, ...]) -> Executed:
    """Trace this thread's new frames and every thread started from now on."""
    executed = Executed(own)
    sys.settrace(executed.call)
    threading.settrace(executed.call)
    return executed
