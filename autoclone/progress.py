"""How progress is shown on stderr: a status line that updates in place on a terminal,
plain lines anywhere else, nothing when the result is JSON (unless ``-v``).

The library reports progress as one-line messages (``Options.progress``: "run 3: trying
...", "  -> passed"); how they look is the terminal's business, so this is the only
module that knows about ``rich``. A log file or a CI job keeps the plain
``autoclone: ...`` lines, which tools may grep; a person at a terminal gets one line that
says which run is going, what it tries and for how long, instead of a scrolling log. The
final diagnosis and summary are never part of the status: they are printed normally
(``show``) once the status line is gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import IO, Any

from rich.console import Console, Group
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

#: A message that starts a run: its number and what it tries.
RUN = re.compile(r"run (\d+): (.*)")


class Display:
    """Plain lines, ``autoclone: message`` (``autoclone: key: message`` for one script of
    several), exactly what the CLI printed before there was a status line."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write

    def say(self, message: str, key: str = "") -> None:
        """One progress message (about ``key``'s script when several run)."""
        self._write(f"autoclone: {key}: {message}" if key else f"autoclone: {message}")

    def done(self, key: str = "") -> None:
        """``key``'s work ended: plain lines have no status to clear."""

    def show(self, text: str) -> None:
        """Text that stays (a diagnosis, a summary): printed as it is."""
        self._write(text)

    def close(self) -> None:
        """Nothing to take down for plain lines."""

    def __enter__(self) -> Display:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Quiet(Display):
    """No progress at all (``--format json`` without ``-v``): stderr carries only the
    outcome, which ``show`` still prints."""

    def say(self, message: str, key: str = "") -> None:
        """Dropped: a JSON consumer reading stderr wants the outcome, not the search."""


@dataclass
class _Task:
    """What one script's status line says; ``started`` is when its first message came."""

    started: float
    run: int = 0
    what: str = ""
    spinner: Spinner = field(default_factory=lambda: Spinner("dots"))


class StatusLine(Display):
    """A ``rich`` status line per running script (one for a single script): the run
    number, what is being tried, the seconds since it started; redrawn in place four
    times a second, and erased when closed. ``note:`` messages stay, printed above it."""

    def __init__(self, console: Console, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(lambda text: console.print(Text(text), soft_wrap=True))
        self._console, self._clock = console, clock
        self._tasks: dict[str, _Task] = {}
        self._lock = threading.Lock()  # rich redraws from its own thread
        self._live: Live | None = None

    def say(self, message: str, key: str = "") -> None:
        if message.startswith("note:"):
            self.show(f"autoclone: {key}: {message}" if key else f"autoclone: {message}")
            return
        found = RUN.match(message)
        with self._lock:
            task = self._tasks.setdefault(key, _Task(self._clock()))
            if found:
                task.run, task.what = int(found[1]), found[2]
            else:
                task.what = message.strip()
        self._refresh()

    def done(self, key: str = "") -> None:
        with self._lock:
            self._tasks.pop(key, None)
        self._refresh()

    def line(self, key: str = "") -> str:
        """The status of ``key``'s script as plain text (what the terminal shows)."""
        with self._lock:
            task = self._tasks[key]
        return _line(key, task, self._clock())

    def close(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            with contextlib.suppress(OSError, ValueError):
                live.stop()

    def _render(self) -> Group:
        now = self._clock()
        with self._lock:
            tasks = list(self._tasks.items())
        rows = []
        for key, task in tasks:
            frame = task.spinner.render(now)  # a Text: the spinner has no text of its own
            frame = frame if isinstance(frame, Text) else Text("-")
            line = _line(key, task, now)
            rows.append(Text.assemble(frame, " ", line, no_wrap=True, overflow="ellipsis"))
        return Group(*rows)

    def _refresh(self) -> None:
        """Start the live region at the first message (nothing shows before), redraw."""
        if self._live is None:
            self._live = Live(
                console=self._console, get_renderable=self._render, transient=True,
                refresh_per_second=4, redirect_stdout=False, redirect_stderr=True,
            )  # fmt: skip
            self._live.start()
        with contextlib.suppress(OSError, ValueError):
            self._live.refresh()


def _line(key: str, task: _Task, now: float) -> str:
    run = f"run {task.run}" if task.run else ""
    seconds = f"{now - task.started:.0f} s"
    return "  ".join(part for part in (key, run, task.what, seconds) if part)


class _Guarded:
    """stderr for rich: a terminal that hung up must not raise in rich's refresh thread
    (a traceback from a thread is exactly the noise a status line replaces)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        with contextlib.suppress(OSError, ValueError):
            self._stream.write(text)
        return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()

    def isatty(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def is_terminal(stream: IO[str] | None) -> bool:
    """A terminal a status line can be redrawn on (not a pipe, a file, or TERM=dumb)."""
    if stream is None or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False


def for_stderr(*, enabled: bool, write: Callable[[str], None]) -> Display:
    """The display for this process's stderr: nothing when progress is off (JSON without
    ``-v``), a status line on a terminal, plain lines (through ``write``) otherwise."""
    if not enabled:
        return Quiet(write)
    if is_terminal(sys.stderr):
        console = Console(file=_Guarded(sys.stderr), force_terminal=True, highlight=False)  # type: ignore[arg-type]
        return StatusLine(console)
    return Display(write)
