"""Progress on stderr: plain ``autoclone: ...`` lines when stderr is not a terminal, none
with ``--format json`` unless ``-v``, and a ``rich`` status line on a terminal."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from autoclone import progress

FINE = "import torch\nw = torch.ones(3, requires_grad=True)\n(w * w).sum().backward()\n"
TRACING = "autoclone: running train.py with the autograd tracer"


@pytest.mark.parametrize(
    ("flags", "shown"),
    [([], True), (["--format", "json"], False), (["--format", "json", "-v"], True)],
)
def test_progress_lines_are_plain_and_json_keeps_quiet_unless_verbose(
    tmp_path: Path, flags: list[str], shown: bool
) -> None:
    (tmp_path / "train.py").write_text(FINE)
    result = subprocess.run(
        [sys.executable, "-m", "autoclone", "fix", "train.py", *flags],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert (TRACING in lines) is shown, result.stderr
    assert "\x1b[" not in result.stderr  # not a terminal: no status line, no colours
    assert lines[-1].startswith("autoclone: no_error: ")  # the outcome is always said


class Clock:
    """A clock the test moves, so the elapsed seconds are exact."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=100, color_system=None), out


def test_the_status_line_shows_the_run_what_is_tried_and_the_seconds() -> None:
    console, out = _terminal()
    clock = Clock()
    with progress.StatusLine(console, clock) as status:
        status.say("running train.py with the autograd tracer")
        assert status.line() == "running train.py with the autograd tracer  0 s"
        clock.now += 4.2
        status.say("run 3: trying `e = e.clone()` at train.py:11")
        assert status.line() == "run 3  trying `e = e.clone()` at train.py:11  4 s"
        status.say("  -> passed")
        assert status.line() == "run 3  -> passed  4 s"
        status.say("note: trials run without data.bin: not copied")
    shown = out.getvalue()
    assert "run 3  trying `e = e.clone()` at train.py:11  4 s" in shown  # drawn in place
    assert "\r" in shown or "\x1b[" in shown
    assert "autoclone: note: trials run without data.bin: not copied\n" in shown  # stays


def test_several_scripts_have_a_status_line_each_until_done() -> None:
    console, out = _terminal()
    clock = Clock()
    with progress.StatusLine(console, clock) as status:
        status.say("run 1: tracing", key="a.py")
        clock.now += 2
        status.say("run 2: trying x", key="b.py")
        assert status.line("a.py") == "a.py  run 1  tracing  2 s"
        assert status.line("b.py") == "b.py  run 2  trying x  0 s"
        status.done("a.py")
        with pytest.raises(KeyError):
            status.line("a.py")
        status.show("autoclone: a.py: fixed: ...")
    assert "a.py  run 1  tracing" in out.getvalue() and "b.py  run 2  trying x" in out.getvalue()
    assert "autoclone: a.py: fixed: ...\n" in out.getvalue()


def test_the_display_follows_stderr_and_the_format(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[str] = []

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    plain = progress.for_stderr(enabled=True, write=written.append)
    assert type(plain) is progress.Display
    plain.say("run 2: trying x")
    plain.say("run 1: tracing", key="a.py")
    quiet = progress.for_stderr(enabled=False, write=written.append)
    quiet.say("run 3: dropped")
    quiet.show("kept")
    assert written == ["autoclone: run 2: trying x", "autoclone: a.py: run 1: tracing", "kept"]
    monkeypatch.setattr(sys, "stderr", Terminal())
    monkeypatch.delenv("TERM", raising=False)
    assert isinstance(progress.for_stderr(enabled=True, write=written.append), progress.StatusLine)
    monkeypatch.setenv("TERM", "dumb")
    assert type(progress.for_stderr(enabled=True, write=written.append)) is progress.Display
