"""Shared test configuration: one thread per torch process, opt-in regeneration."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-fixtures",
        action="store_true",
        help="write each fixture's expected.patch from what autoclone produces now",
    )
