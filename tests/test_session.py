"""How many trials run at once: only slow trials pay for another warm interpreter."""

from __future__ import annotations

from pathlib import Path

from autoclone.session import PARALLEL_AFTER, Options, cores, jobs_for


def test_fast_trials_run_one_at_a_time_and_slow_ones_on_every_core() -> None:
    options = Options(script=Path("train.py"))
    assert jobs_for(options, PARALLEL_AFTER / 10) == 1
    assert jobs_for(options, PARALLEL_AFTER) == cores()


def test_the_users_jobs_always_win() -> None:
    options = Options(script=Path("train.py"), jobs=3)
    assert jobs_for(options, 0.1) == jobs_for(options, 100.0) == 3
