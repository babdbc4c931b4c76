"""Benchmark: repair every fixture and the large scripts, and print tables of runs and seconds.

Usage (from the repository root, one thread per torch process as on CI):

    OMP_NUM_THREADS=1 python bench/run.py                 # autoclone's own strategy
    OMP_NUM_THREADS=1 python bench/run.py --baselines     # plus plain ddmin and linear elimination
    OMP_NUM_THREADS=1 python bench/run.py --fixed-cost    # cost of a trial beyond the script's work

Cases are ``fixtures/*``, ``bench/large/*`` (scripts made large on purpose: 1000+
epochs, 2048-wide layers, 200+ lines with 300+ candidate sites) and ``bench/unseen/*``
(held-out scripts written without reading autoclone's code). "one run" is a single
fresh, unshrunk run of the original script up to its error (or its end), the unit a
person pays for each manual retry, capped by ``--cap`` seconds; "ratio" is seconds / one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autoclone.repair import repair  # noqa: E402
from autoclone.session import Options, load_project, make_runner  # noqa: E402
from autoclone.shrink import Plan  # noqa: E402
from autoclone.trial import RunSpec  # noqa: E402

FIXTURES = ROOT / "fixtures"
LARGE = ROOT / "bench" / "large"
UNSEEN = ROOT / "bench" / "unseen"


def _copy(case: Path, into: Path) -> Path:
    work = into / case.name
    skip = {"expected.json", "expected.patch", "expert.py", "expert", "README.md", "wrong.py"}
    shutil.copytree(case, work, ignore=lambda _d, names: [n for n in names if n in skip])
    return work


def _one_run(options: Options, cap: float) -> str:
    project = load_project(options)
    runner = make_runner(options, project)
    runner.warm = False  # what one manual retry costs: a fresh interpreter
    result = runner.run(RunSpec(project.texts(plan=Plan()), timeout=cap))
    return f">{cap:.0f}" if result.status == "timeout" else f"{result.seconds:.1f}"


_ONE_RUN: dict[str, str] = {}


def _ratio(seconds: float, one: str) -> str:
    if one.startswith(">"):
        return f"<{seconds / float(one[1:]):.2f}"
    return f"{seconds / float(one):.1f}" if one != "nan" else "nan"


def _launcher(expected: dict[str, object]) -> dict[str, object]:
    """A fixture that needs torchrun (``"launcher": ["torchrun", 2]``) is repaired with it."""
    launcher = expected.get("launcher")
    if not isinstance(launcher, list):
        return {}
    return {"launcher": str(launcher[0]), "nproc": int(launcher[1])}


def _row(case: Path, strategy: str, tmp: Path, cap: float) -> list[str]:
    expected = json.loads((case / "expected.json").read_text())
    work = _copy(case, tmp / strategy)
    options = Options(
        script=work / "input.py",
        args=tuple(expected.get("args", [])),
        cwd=work,
        timeout=float(expected.get("timeout", 60)),
        strategy=strategy,
        **_launcher(expected),
    )
    if expected["status"] == "bad_input":
        return []
    report = repair(options)
    if case.name not in _ONE_RUN:  # the same for every strategy: measured once per case
        _ONE_RUN[case.name] = _one_run(options, cap) if expected["status"] != "timeout" else "nan"
    one = _ONE_RUN[case.name]
    edits = "; ".join(e.code for e in report.edits)
    shrunk = ", ".join(f"{k['name']} {k['from']}->{k['to']}" for k in report.shrunk)
    return [
        case.name,
        strategy,
        report.status,
        str(report.candidates),
        str(report.runs),
        f"{report.seconds:.1f}",
        one,
        _ratio(report.seconds, one),
        shrunk or "-",
        edits,
    ]


def _fixed_cost(case: Path, tmp: Path, repeat: int) -> list[str]:
    """Wall time of a plain trial minus the script's own work, forked from the warm zygote
    and in a fresh interpreter. The script's work is its time as the child measured it in a
    forked trial, where torch is already imported: a fresh run pays the imports on top."""
    expected = json.loads((case / "expected.json").read_text())
    if expected["status"] in ("bad_input", "timeout"):
        return []
    work = _copy(case, tmp / "fixed")
    options = Options(script=work / "input.py", args=tuple(expected.get("args", [])), cwd=work)
    project = load_project(options)
    walls, own = [], 0.0
    for warm in (True, False):
        runner = make_runner(options, project)
        runner.warm = warm
        runner.run(RunSpec(project.texts(), limit=1))  # starts the zygote, warms the caches
        runs = [runner.run(RunSpec(project.texts(), limit=1)) for _ in range(repeat)]
        runner.close()
        walls.append(statistics.median(r.seconds for r in runs))
        own = own or statistics.median(r.script_seconds for r in runs)
    forked, fresh = walls
    return [case.name, f"{own:.2f}", f"{forked:.2f}", f"{forked - own:.2f}", f"{fresh:.2f}",
            f"{fresh - own:.2f}"]  # fmt: skip


def _table(header: list[str], rows: Iterator[list[str]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        if row:
            print("| " + " | ".join(row) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baselines", action="store_true", help="also run ddmin and linear")
    parser.add_argument("--fixed-cost", action="store_true", help="trial cost, forked vs fresh")
    parser.add_argument("--cap", type=float, default=900.0, help="seconds for one unshrunk run")
    parser.add_argument("--repeat", type=int, default=3, help="trials per fixed-cost figure")
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    strategies = ["predict", "ddmin", "linear"] if args.baselines else ["predict"]
    found = [p for root in (FIXTURES, LARGE, UNSEEN) for p in sorted(root.iterdir())]
    cases = [c for c in found if (c / "input.py").is_file()]
    cases = [c for c in cases if not args.cases or c.name in args.cases]
    with tempfile.TemporaryDirectory() as tmp:
        if args.fixed_cost:
            header = ["case", "script's work", "forked trial", "fixed (forked)", "fresh trial",
                      "fixed (fresh)"]  # fmt: skip
            _table(header, (_fixed_cost(c, Path(tmp) / c.name, args.repeat) for c in cases))
            return
        header = ["case", "strategy", "status", "candidates", "runs", "seconds", "one run",
                  "ratio", "shrunk for trials", "edits"]  # fmt: skip
        rows = (_row(c, s, Path(tmp), args.cap) for c in cases for s in strategies)
        _table(header, rows)


if __name__ == "__main__":
    main()
