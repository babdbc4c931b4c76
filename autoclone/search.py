"""Find a smallest set of clone sites that makes the script pass.

Each test runs the user's script, which costs seconds, so the search is built around
three things: guesses from the localiser are tried before any systematic search, every
outcome is cached so no configuration runs twice, and the caller can stop the search
at any moment and still get the best verified answer. Like picire's ``DD(test, cache,
stop)``, the tester is injected, which keeps this module free of torch and I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from autoclone.outcomes import Outcome, Passed

Config = frozenset[str]
Test = Callable[[frozenset[str]], Outcome]
Stop = Callable[[], bool]


@dataclass(frozen=True)
class SearchResult:
    """What the search found and what it cost.

    ``best`` is None when no configuration passed. ``minimal`` is only claimed once
    every single removal from ``best`` is known to fail, so a stopped search never
    claims it. ``tests`` counts real runs (cache misses), which is the cost the user
    waits for; ``history`` lists those runs in order for reports and benchmarks.
    """

    best: frozenset[str] | None
    minimal: bool
    tests: int
    stopped: bool
    history: tuple[tuple[frozenset[str], Outcome], ...]


class _Stopped(Exception):
    """Unwinds the search from whichever depth noticed the stop request."""


def _never() -> bool:
    return False


class _Runner:
    """The one place that runs tests, so caching, counting and stopping cannot diverge."""

    def __init__(
        self, test: Test, known: Mapping[Config, Outcome] | None, stop: Stop, jobs: int = 1
    ) -> None:
        self._test = test
        self._stop = stop
        self.jobs = max(1, jobs)
        self._cache: dict[Config, Outcome] = dict(known or {})
        self.history: list[tuple[Config, Outcome]] = []
        self.best: Config | None = None

    def outcome(self, config: Config) -> Outcome:
        """The cached outcome, or a real run when the cache has none."""
        outcome = self._cache.get(config)
        if outcome is None:
            if self._stop():
                raise _Stopped
            outcome = self._test(config)
            self._cache[config] = outcome
            self.history.append((config, outcome))
        if isinstance(outcome, Passed) and (self.best is None or len(config) < len(self.best)):
            self.best = config
        return outcome

    def prefetch(self, configs: Sequence[Config]) -> None:
        """Run the uncached configurations at once, ``jobs`` at a time, in threads: the
        test spends its time waiting for a trial process, and the caller then reads the
        outcomes in its own order, so the search takes the same path as a sequential one."""
        todo = [c for c in dict.fromkeys(configs) if c not in self._cache]
        if self.jobs < 2 or len(todo) < 2:
            return
        if self._stop():
            raise _Stopped
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            outcomes = list(pool.map(self._test, todo))
        for config, outcome in zip(todo, outcomes, strict=True):
            self._cache[config] = outcome
            self.history.append((config, outcome))
            self.outcome(config)  # keeps ``best`` up to date

    def passes(self, config: Config) -> bool:
        """Only a real Passed counts: a timeout or any failure must not shrink the patch."""
        return isinstance(self.outcome(config), Passed)

    def known_to_fail(self, config: Config) -> bool:
        """Lets callers claim minimality from evidence already paid for, without a run."""
        outcome = self._cache.get(config)
        return outcome is not None and not isinstance(outcome, Passed)

    def result(self, best: Config | None, *, minimal: bool, stopped: bool = False) -> SearchResult:
        return SearchResult(
            best=best,
            minimal=minimal,
            tests=len(self.history),
            stopped=stopped,
            history=tuple(self.history),
        )


def _split(items: list[str], n: int) -> list[list[str]]:
    """Contiguous chunks, because neighbouring sites tend to matter together."""
    return [items[len(items) * i // n : len(items) * (i + 1) // n] for i in range(n)]


def _first_passing(run: _Runner, candidates: list[list[str]]) -> list[str] | None:
    """The first candidate, in order, that passes; with ``jobs`` > 1 they run in batches."""
    for start in range(0, len(candidates), run.jobs):
        batch = candidates[start : start + run.jobs]
        run.prefetch([frozenset(c) for c in batch])
        for candidate in batch:
            if run.passes(frozenset(candidate)):
                return candidate
    return None


def _ddmin(run: _Runner, items: list[str]) -> list[str]:
    """Zeller & Hildebrandt's ddmin (2002) over a passing configuration.

    It ends at granularity ``len(items)``, where the complements are exactly the single
    removals, so its result is 1-minimal whenever it has at least two elements.
    """
    n = 2
    while len(items) >= 2:
        chunks = _split(items, n)
        reduced = _first_passing(run, chunks)
        if reduced is not None:
            items, n = reduced, 2
            continue
        complements = [[x for j, c in enumerate(chunks) if j != i for x in c] for i in range(n)]
        reduced = _first_passing(run, complements)
        if reduced is not None:
            items, n = reduced, max(n - 1, 2)
            continue
        if n >= len(items):
            break
        n = min(2 * n, len(items))
    return items


def _passing_removal(run: _Runner, items: list[str]) -> list[str] | None:
    return _first_passing(run, [items[:i] + items[i + 1 :] for i in range(len(items))])


def _minimise(run: _Runner, items: list[str]) -> list[str]:
    """ddmin, then a single-removal check that closes the gap ddmin leaves at size one.

    The check costs nothing for configurations ddmin already ran (the cache answers);
    in practice it only ever runs the empty set, and only when the caller did not
    supply that outcome. Looping makes the 1-minimality claim hold even for
    non-monotone tests.
    """
    while True:
        items = _ddmin(run, items)
        smaller = _passing_removal(run, items)
        if smaller is None:
            return items
        items = smaller


def _split_past_breakers(
    run: _Runner, items: list[str], fixed_but_wrong: Callable[[Outcome], bool]
) -> list[str] | None:
    """When every clone at once removes the error but breaks intended aliasing, some sites
    fix and others break. Halve the set breadth-first, keeping only halves whose outcome
    says the error is gone (they still hold a fixer), until a half passes."""
    queue = [items]
    while queue:
        current = queue.pop(0)
        if len(current) < 2 or not fixed_but_wrong(run.outcome(frozenset(current))):
            continue
        for half in _split(current, 2):
            if run.passes(frozenset(half)):
                return half
            queue.append(half)
    return None


def _guesses(items: list[str], priority: Sequence[str]) -> list[str]:
    """Priority ids that are real candidates, deduplicated, in the localiser's order."""
    present = set(items)
    return [p for p in dict.fromkeys(priority) if p in present]


def _prioritised(items: list[str], priority: Sequence[str]) -> list[str]:
    """Priority ids lead so ddmin's first chunks hold them and it converges fast on a near miss."""
    first = _guesses(items, priority)
    leading = set(first)
    return first + [x for x in items if x not in leading]


def _priority_hit(
    run: _Runner, items: list[str], priority: Sequence[str], max_priority: int
) -> list[str] | None:
    """A confident localiser is usually right, and one run beats a whole ddmin."""
    guesses = _guesses(items, priority)[: max(max_priority, 0)]
    return _first_passing(run, [[g] for g in guesses])


def find_minimal(
    ids: Sequence[str],
    test: Test,
    *,
    priority: Sequence[str] = (),
    known: Mapping[frozenset[str], Outcome] | None = None,
    stop: Stop = _never,
    max_priority: int = 3,
    fixed_but_wrong: Callable[[Outcome], bool] = lambda outcome: False,
    jobs: int = 1,
) -> SearchResult:
    """Return a 1-minimal passing subset of ``ids``, trying the localiser's guesses first.

    ``fixed_but_wrong`` tells apart a failure that still shows the original error from
    one where the error is gone but other edits changed the results; only the latter
    is worth splitting when the full set fails.

    ``known`` seeds the cache (typically the empty set, already seen to fail) so those
    configurations are never run again. ``stop`` is polled before every real run so a
    deadline or a user interrupt still yields the smallest configuration verified so far.
    ``jobs`` > 1 runs independent configurations at once (``test`` must be thread-safe);
    the result is the same, at the price of some runs a sequential search would skip.
    """
    run = _Runner(test, known, stop, jobs)
    items = list(dict.fromkeys(ids))
    try:
        found = _priority_hit(run, items, priority, max_priority)
        if found is None:
            found = _prioritised(items, priority)
            if not run.passes(frozenset(found)):
                found = _split_past_breakers(run, found, fixed_but_wrong)
            if found is None:
                return run.result(None, minimal=False)
        return run.result(frozenset(_minimise(run, found)), minimal=True)
    except _Stopped:
        return run.result(run.best, minimal=False, stopped=True)


def linear_elimination(
    ids: Sequence[str],
    test: Test,
    *,
    known: Mapping[frozenset[str], Outcome] | None = None,
    stop: Stop = _never,
) -> SearchResult:
    """The manual baseline (enable all, drop one at a time), kept to measure ddmin against.

    It makes a single pass, as a person would; ``minimal`` is claimed only when the
    cache already shows every single removal from the result failing, since extra runs
    would make the baseline look more expensive than the habit it models.
    """
    run = _Runner(test, known, stop)
    items = list(dict.fromkeys(ids))
    try:
        if not run.passes(frozenset(items)):
            return run.result(None, minimal=False)
        for x in list(items):
            smaller = [y for y in items if y != x]
            if run.passes(frozenset(smaller)):
                items = smaller
        best = frozenset(items)
        minimal = all(run.known_to_fail(best - {x}) for x in best)
        return run.result(best, minimal=minimal)
    except _Stopped:
        return run.result(run.best, minimal=False, stopped=True)
