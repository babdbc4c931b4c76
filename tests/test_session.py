"""How many trials run at once: only slow trials pay for another warm interpreter."""

from __future__ import annotations

from pathlib import Path

from autoclone.session import PARALLEL_AFTER, Options, available_mb, cores, jobs_for


def test_fast_trials_run_one_at_a_time_and_slow_ones_on_every_core() -> None:
    options = Options(script=Path("train.py"))
    assert jobs_for(options, PARALLEL_AFTER / 10) == 1
    assert jobs_for(options, PARALLEL_AFTER) == cores()


def test_the_users_jobs_always_win() -> None:
    options = Options(script=Path("train.py"), jobs=3)
    assert jobs_for(options, 0.1) == jobs_for(options, 100.0) == 3


def test_memory_caps_trials_at_once_even_the_users_jobs() -> None:
    """Two copies of a model that fits once in half the free memory never run together."""
    options = Options(script=Path("train.py"), jobs=4)
    assert jobs_for(options, 100.0, peak_mb=6000, free_mb=10000) == 1
    assert jobs_for(options, 100.0, peak_mb=1000, free_mb=10000) == 4
    assert jobs_for(Options(script=Path("train.py")), 100.0, peak_mb=2000, free_mb=8000) == min(
        cores(), 2
    )
    assert jobs_for(options, 100.0, peak_mb=0.0, free_mb=10000) == 4  # peak unknown


def test_the_free_memory_is_read_from_this_machine() -> None:
    assert 0 < available_mb() < 1 << 24
