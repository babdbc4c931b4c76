"""Shared test configuration: one thread per torch process, opt-in regeneration."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from _warm import WarmPython

os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-fixtures",
        action="store_true",
        help="write each fixture's expected.patch from what autoclone produces now",
    )


@pytest.fixture
def window(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder the test's trials write for real (``AUTOCLONE_BIND``, bound through the
    overlays that keep everything else of the machine from them): the test's window on
    what its trials did (their pids, their output)."""
    folder = tmp_path_factory.mktemp("window")
    monkeypatch.setenv("AUTOCLONE_BIND", str(folder))
    return folder


@pytest.fixture(scope="session")
def warm_python() -> Iterator[WarmPython]:
    """``python script.py args`` forked from an interpreter that has imported torch (one
    per xdist worker, started at the first test that asks): ``warm_python.run([script,
    *args], cwd=folder, timeout=120)`` is ``subprocess.run([sys.executable, script, *args],
    cwd=folder, stdin=DEVNULL, capture_output=True, text=True, timeout=120)`` without the
    torch import (``tests/_warm.py`` says what a fork makes fresh, and what it cannot)."""
    runner = WarmPython()
    runner.start()  # imports torch while the first test does its own work
    yield runner
    runner.close()
