"""The warm interpreter imports the script's third-party modules once, for every trial."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autoclone.trial import Runner, RunSpec
from autoclone.zygote import script_imports

# networkx comes with torch: an installed package every test machine has.
PROBE = textwrap.dedent(
    """\
    import sys
    AHEAD = sorted(m for m in ("networkx", "helpers", "threader") if m in sys.modules)
    import networkx
    import helpers
    {extra}
    raise RuntimeError(f"ahead={{AHEAD}}")
    """
)


def _ahead(tmp_path: Path, warm: bool, extra: str = "", **kwargs: object) -> str:
    (tmp_path / "train.py").write_text(PROBE.format(extra=extra))
    (tmp_path / "helpers.py").write_text("VALUE = 1\n")
    runner = Runner(root=tmp_path, script="train.py", warm=warm, **kwargs)  # type: ignore[arg-type]
    try:
        result = runner.run(RunSpec({}))
        second = runner.run(RunSpec({}))  # the same zygote serves the next trial warm too
    finally:
        runner.close()
    assert result.error is not None and second.error is not None, result.stderr
    assert result.error.message == second.error.message
    return result.error.message


def test_installed_modules_are_imported_ahead_never_the_projects_own(tmp_path: Path) -> None:
    assert _ahead(tmp_path, warm=True) == "ahead=['networkx']"
    assert _ahead(tmp_path, warm=False) == "ahead=[]"


def test_a_module_that_starts_a_thread_sends_the_zygote_back_cold(tmp_path: Path) -> None:
    """A fork keeps only the forking thread: such a module must load in each trial."""
    site = tmp_path / "site"
    (site / "threader").mkdir(parents=True)
    (site / "threader" / "__init__.py").write_text(
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
    )
    project = tmp_path / "project"
    project.mkdir()
    message = _ahead(project, warm=True, extra="import threader", env={"PYTHONPATH": str(site)})
    assert message == "ahead=[]"


def test_script_imports_reads_the_top_level_only(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """\
            import os, networkx.algorithms
            from torch import nn
            from . import sibling
            import matplotlib.pyplot as plt
            import helpers
            try:
                import numpy
            except ImportError:
                numpy = None
            def f():
                import sympy
            """
        )
    )
    (tmp_path / "helpers.py").write_text("")
    assert script_imports(str(script), str(tmp_path)) == [
        "os", "networkx.algorithms", "torch", "numpy"
    ]  # fmt: skip


@pytest.mark.parametrize("source", ["def broken(:\n", ""])
def test_script_imports_of_a_script_that_does_not_parse_is_nothing(
    tmp_path: Path, source: str
) -> None:
    (tmp_path / "train.py").write_text(source)
    assert script_imports(str(tmp_path / "train.py"), str(tmp_path)) == []


SEEN = textwrap.dedent(
    """\
    import os, sys
    import networkx
    {extra}
    print(os.getppid(), sorted(m for m in ("networkx", "jinja2", "helpers") if m in sys.modules))
    """
)


def _seen(folder: Path, extra: str = "", **kwargs: object) -> tuple[int, list[str]]:
    """The zygote a trial of a new runner in ``folder`` was forked from, and the probed
    modules it found imported."""
    folder.mkdir()
    (folder / "train.py").write_text(SEEN.format(extra=extra))
    (folder / "helpers.py").write_text("VALUE = 1\n")
    runner = Runner(root=folder, script="train.py", **kwargs)  # type: ignore[arg-type]
    try:
        result = runner.run(RunSpec({}))
    finally:
        runner.close()
    assert result.status == "completed", result.stderr
    parent, modules = result.stdout.strip().split(" ", 1)
    return int(parent), eval(modules)  # noqa: S307 - the list the probe printed


def test_a_closed_runners_zygote_serves_the_next_runner_that_would_start_the_same(
    tmp_path: Path,
) -> None:
    """The next runner of a process forks from the zygote the last one left when it would
    have started the same zygote; another script's imports or environment get their own."""
    first, ahead = _seen(tmp_path / "a", extra="import helpers")
    assert ahead == ["helpers", "networkx"]
    again, ahead = _seen(tmp_path / "b")
    assert (again, ahead) == (first, ["networkx"])  # kept, and nothing of a's trial in it
    again, ahead = _seen(tmp_path / "b2", extra="import math")  # imported by torch already
    assert (again, ahead) == (first, ["networkx"])
    other, ahead = _seen(tmp_path / "c", extra="import jinja2")
    assert other != first and ahead == ["jinja2", "networkx"]
    elsewhere, _ = _seen(tmp_path / "d", env={"AUTOCLONE_TEST_OTHER": "1", "OTHER_ENV": "1"})
    assert elsewhere not in (first, other)


KILLED = textwrap.dedent(
    """\
    import pathlib, sys
    from autoclone.trial import Runner, RunSpec
    for name in ("a", "b"):
        folder = pathlib.Path(sys.argv[1]) / name
        folder.mkdir()
        (folder / "train.py").write_text(
            "import time, pathlib\\n"
            f"pathlib.Path({sys.argv[2]!r}, {name!r}).touch()\\n"
            f"time.sleep({'0' if name == 'a' else '60'})\\n"
        )
        runner = Runner(root=folder, script="train.py")
        runner.run(RunSpec({}))
        runner.close()
    """
)


def test_kill_9_while_a_kept_zygote_serves_the_next_runner_leaves_no_session(
    tmp_path: Path, window: Path
) -> None:
    """A zygote taken up by a later runner removes that runner's session, not only the
    one it was started for, when autoclone dies."""
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path), str(window)], env=env)
    try:
        deadline = time.monotonic() + 60
        while not (window / "b").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (window / "b").exists()
        assert list(temp.glob("autoclone-*")), "the second runner's session is there"
        proc.kill()
        proc.wait(timeout=60)
    finally:
        proc.kill()
    deadline = time.monotonic() + 10
    while list(temp.glob("autoclone-*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(temp.glob("autoclone-*"))
