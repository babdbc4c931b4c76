"""The search is tested against pure-Python predicates, so its cost can be counted exactly."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import pytest

from autoclone.outcomes import Failed, Outcome, Passed, TimedOut
from autoclone.search import SearchResult, find_minimal, linear_elimination

try:
    from hypothesis import given
    from hypothesis import strategies as st

    HAVE_HYPOTHESIS = True
except ImportError:  # the property test is optional; the rest must still run
    HAVE_HYPOTHESIS = False

EMPTY_FAILS: dict[frozenset[str], Outcome] = {frozenset(): Failed("autograd", "in-place")}
IDS_100 = [f"s{i:02d}" for i in range(100)]


class Counting:
    """Wraps a predicate to record every real call, so cache hits are observable."""

    def __init__(self, passes: Callable[[frozenset[str]], bool | Outcome]) -> None:
        self._passes = passes
        self.calls: list[frozenset[str]] = []

    def __call__(self, config: frozenset[str]) -> Outcome:
        self.calls.append(config)
        verdict = self._passes(config)
        if isinstance(verdict, bool):
            return Passed() if verdict else Failed("autograd")
        return verdict


def needs_all(target: Iterable[str]) -> Counting:
    wanted = frozenset(target)
    return Counting(lambda config: wanted <= config)


def needs_any(target: Iterable[str]) -> Counting:
    wanted = frozenset(target)
    return Counting(lambda config: bool(wanted & config))


def assert_one_minimal(result: SearchResult, test: Callable[[frozenset[str]], Outcome]) -> None:
    assert result.best is not None
    assert result.minimal
    assert isinstance(test(result.best), Passed)
    for site in result.best:
        assert not isinstance(test(result.best - {site}), Passed), site


def assert_consistent(result: SearchResult, test: Counting) -> None:
    """Every call is counted, recorded, and made once."""
    assert result.tests == len(test.calls) == len(result.history)
    assert [config for config, _ in result.history] == test.calls
    assert len(set(test.calls)) == len(test.calls)


def test_conjunction_is_found_and_one_minimal() -> None:
    test = needs_all({"b", "e"})
    result = find_minimal(list("abcdefgh"), test, known=EMPTY_FAILS)
    assert result.best == {"b", "e"}
    assert not result.stopped
    assert_consistent(result, test)
    assert_one_minimal(result, needs_all({"b", "e"}))


def test_disjunction_gives_a_single_site() -> None:
    test = needs_any({"x", "y"})
    result = find_minimal(list("abxcdyef"), test, known=EMPTY_FAILS)
    assert result.best in ({"x"}, {"y"})
    assert_consistent(result, test)
    assert_one_minimal(result, needs_any({"x", "y"}))


def test_full_set_failing_gives_none() -> None:
    test = Counting(lambda c: "k" in c and "bad" not in c)
    result = find_minimal(["a", "k", "bad", "z"], test, known=EMPTY_FAILS)
    assert result == SearchResult(None, False, 1, False, result.history)
    assert test.calls == [frozenset({"a", "k", "bad", "z"})]


def test_non_monotone_result_is_still_one_minimal() -> None:
    """Passes with two or three of {a, b, c} but not one: ddmin must still end 1-minimal."""

    def two_or_three(config: frozenset[str]) -> bool:
        return len(config & {"a", "b", "c"}) in (2, 3)

    test = Counting(two_or_three)
    result = find_minimal(list("pabqcr"), test, known=EMPTY_FAILS)
    assert result.best is not None and len(result.best) == 2
    assert_consistent(result, test)
    assert_one_minimal(result, Counting(two_or_three))


@pytest.mark.parametrize("culprit", IDS_100)
def test_one_culprit_in_100_beats_linear_elimination(culprit: str) -> None:
    """ddmin halves at n=2: per level at most the two halves run (complements are cached).

    Halving 100 with ceil takes ceil(log2(100)) = 7 levels, plus the full-set run:
    at most 1 + 2 * 7 = 15 runs. Linear elimination runs the full set plus 100 removals
    (the last one hits the known empty set when the culprit is last): 100 or 101 runs.
    """
    bound = 1 + 2 * math.ceil(math.log2(len(IDS_100)))
    test = needs_all({culprit})
    result = find_minimal(IDS_100, test, known=EMPTY_FAILS)
    assert result.best == {culprit} and result.minimal
    assert_consistent(result, test)
    assert result.tests <= bound == 15

    baseline = linear_elimination(IDS_100, needs_all({culprit}), known=EMPTY_FAILS)
    assert baseline.best == {culprit} and baseline.minimal
    assert baseline.tests == (100 if culprit == IDS_100[-1] else 101)
    assert result.tests < baseline.tests


def test_linear_elimination_without_known_runs_the_empty_set() -> None:
    test = needs_all({"c"})
    result = linear_elimination(list("abc"), test)
    assert result.best == {"c"} and result.minimal
    assert result.tests == 4
    assert_consistent(result, test)


def test_priority_hit_costs_exactly_one_test() -> None:
    test = needs_all({"s42"})
    result = find_minimal(IDS_100, test, priority=["s42", "s07"], known=EMPTY_FAILS)
    assert result.best == {"s42"} and result.minimal
    assert result.tests == 1
    assert test.calls == [frozenset({"s42"})]


def test_priority_hit_without_known_empty_verifies_the_empty_set() -> None:
    test = needs_all({"s42"})
    result = find_minimal(IDS_100, test, priority=["s42"])
    assert result.best == {"s42"} and result.minimal
    assert test.calls == [frozenset({"s42"}), frozenset()]


def test_priority_is_capped_and_ignores_unknown_ids() -> None:
    test = needs_all({"d"})
    result = find_minimal(list("abcd"), test, priority=["zz", "a", "b", "c", "d"], max_priority=2)
    assert test.calls[:3] == [frozenset("a"), frozenset("b"), frozenset("abcd")]
    assert result.best == {"d"} and result.minimal


def test_near_miss_priority_converges_faster() -> None:
    target = {"s42", "s77"}
    guided = find_minimal(IDS_100, needs_all(target), priority=["s42", "s77"], known=EMPTY_FAILS)
    blind = find_minimal(IDS_100, needs_all(target), known=EMPTY_FAILS)
    assert guided.best == blind.best == target
    assert guided.tests < blind.tests


def test_cache_prevents_retesting_known_configs() -> None:
    known = dict(EMPTY_FAILS)
    known[frozenset("abcdefgh")] = Passed()
    known[frozenset("abcd")] = Failed("autograd")
    test = needs_all({"f"})
    result = find_minimal(list("abcdefgh"), test, known=known)
    assert result.best == {"f"} and result.minimal
    assert not set(test.calls) & set(known)
    assert_consistent(result, test)


def test_stop_returns_best_so_far() -> None:
    test = needs_all({"s13"})
    result = find_minimal(IDS_100, test, known=EMPTY_FAILS, stop=lambda: len(test.calls) >= 4)
    assert result.stopped and not result.minimal
    assert result.tests == 4
    passing = [config for config, outcome in result.history if isinstance(outcome, Passed)]
    assert result.best == min(passing, key=len)
    assert "s13" in result.best


def test_stop_before_anything_passed_gives_none() -> None:
    test = needs_all({"s13"})
    result = find_minimal(IDS_100, test, known=EMPTY_FAILS, stop=lambda: True)
    assert result == SearchResult(None, False, 0, True, ())
    assert test.calls == []


def test_timeout_is_not_passing() -> None:
    """{a} alone times out; the search must neither accept it nor retry it."""

    def verdict(config: frozenset[str]) -> Outcome:
        if config == {"a"}:
            return TimedOut(5.0)
        return Passed() if {"a", "b"} <= config else Failed("autograd")

    test = Counting(verdict)
    result = find_minimal(list("abcd"), test, priority=["a"], known=EMPTY_FAILS)
    assert result.best == {"a", "b"} and result.minimal
    assert result.history[0] == (frozenset({"a"}), TimedOut(5.0))
    assert_consistent(result, test)


def test_timeout_on_full_set_gives_none() -> None:
    test = Counting(lambda c: TimedOut(1.0) if "slow" in c else "a" in c)
    result = find_minimal(["a", "slow"], test, known=EMPTY_FAILS)
    assert result.best is None and not result.minimal


def test_empty_ids() -> None:
    result = find_minimal([], needs_all(set()), known={})
    assert result.best == frozenset() and result.minimal and result.tests == 1


if HAVE_HYPOTHESIS:

    @st.composite
    def monotone_cases(draw: st.DrawFn) -> tuple[list[str], frozenset[str], list[str]]:
        ids = [f"s{i}" for i in range(draw(st.integers(1, 40)))]
        target = draw(st.sets(st.sampled_from(ids), min_size=1))
        priority = draw(st.lists(st.sampled_from(ids), max_size=5))
        return ids, frozenset(target), priority

    @given(monotone_cases())
    def test_monotone_target_is_recovered_exactly(
        case: tuple[list[str], frozenset[str], list[str]],
    ) -> None:
        ids, target, priority = case
        test = needs_all(target)
        result = find_minimal(ids, test, priority=priority, known=EMPTY_FAILS)
        assert result.best == target and result.minimal and not result.stopped
        assert_consistent(result, test)

else:

    @pytest.mark.skip(reason="hypothesis is not installed")
    def test_monotone_target_is_recovered_exactly() -> None:
        """Placeholder so the missing property test shows up as skipped, not absent."""


def test_full_set_that_breaks_numbers_is_split_until_a_fixer_passes_alone() -> None:
    """All clones remove the error but one breaks intended aliasing: split past it."""
    ids = [f"s{i}" for i in range(40)]

    def test(config: frozenset[str]) -> Outcome:
        if "s23" not in config:
            return Failed("inplace_version", "original error")
        return Failed("numbers", "aliasing broken") if "s7" in config else Passed()

    result = find_minimal(
        ids,
        test,
        known={frozenset(): Failed("original")},
        fixed_but_wrong=lambda o: isinstance(o, Failed) and o.kind == "numbers",
    )
    assert result.best == frozenset({"s23"})
    assert result.minimal
    assert result.tests <= 2 + 2 * math.ceil(math.log2(40)) * 2


def test_full_set_failing_without_the_hint_gives_up() -> None:
    ids = ["a", "b"]
    result = find_minimal(ids, lambda c: Passed() if c == {"a"} else Failed("numbers"))
    assert result.best is None


@pytest.mark.parametrize("jobs", [2, 3])
def test_parallel_search_finds_what_the_sequential_one_finds(jobs: int) -> None:
    """Runs in threads change only how many configurations run, never the answer."""
    needed = {"s3", "s11"}
    ids = [f"s{i}" for i in range(16)]

    def test(config: frozenset[str]) -> Outcome:
        return Passed() if needed <= config else Failed("original")

    sequential = find_minimal(ids, test)
    parallel = find_minimal(ids, test, jobs=jobs)
    assert parallel.best == sequential.best == frozenset(needed)
    assert parallel.minimal
    assert parallel.tests >= sequential.tests
