"""Outcomes are values, not exceptions: the search and the CLI branch on them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Passed:
    """The trial ran its steps without an autograd error and matched the reference."""


@dataclass(frozen=True)
class Failed:
    """The trial did not pass; ``kind`` is a short machine word, ``message`` for humans."""

    kind: str
    message: str = ""


@dataclass(frozen=True)
class TimedOut:
    """The trial exceeded its per-run time limit and was killed with its process group."""

    seconds: float = 0.0


Outcome = Passed | Failed | TimedOut
