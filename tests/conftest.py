"""Shared test configuration: one thread per torch process, opt-in regeneration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
