"""The warm interpreter imports the script's third-party modules once, for every trial."""

from __future__ import annotations

import textwrap
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
