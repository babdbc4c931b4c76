"""Benchmark: repair every fixture and print a table of runs and seconds.

Usage (from the repository root, one thread per torch process as on CI):

    OMP_NUM_THREADS=1 python bench/run.py                 # autoclone's own strategy
    OMP_NUM_THREADS=1 python bench/run.py --baselines     # plus plain ddmin and linear elimination

"one run" is a single plain run of the original script up to its error (or its end),
the unit a person pays for each manual retry; "ratio" is seconds / one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autoclone.repair import Options, load_project, make_runner, repair  # noqa: E402
from autoclone.trial import RunSpec  # noqa: E402

FIXTURES = ROOT / "fixtures"


def _copy(case: Path, into: Path) -> Path:
    work = into / case.name
    skip = {"expected.json", "expected.patch", "expert.py", "expert", "README.md", "wrong.py"}
    shutil.copytree(case, work, ignore=lambda _d, names: [n for n in names if n in skip])
    return work


def _one_run(options: Options) -> float:
    project = load_project(options)
    runner = make_runner(options, project)
    runner.warm = False  # what one manual retry costs: a fresh interpreter
    started = time.monotonic()
    runner.run(RunSpec(project.texts()))
    return time.monotonic() - started


def _row(case: Path, strategy: str, tmp: Path) -> list[str]:
    import json

    expected = json.loads((case / "expected.json").read_text())
    work = _copy(case, tmp / strategy)
    options = Options(
        script=work / "input.py",
        args=tuple(expected.get("args", [])),
        cwd=work,
        timeout=float(expected.get("timeout", 60)),
        strategy=strategy,
    )
    if expected["status"] == "bad_input":
        return []
    report = repair(options)
    one = _one_run(options) if expected["status"] != "timeout" else float("nan")
    edits = "; ".join(e.code for e in report.edits)
    return [
        case.name,
        strategy,
        report.status,
        str(report.candidates),
        str(report.runs),
        f"{report.seconds:.1f}",
        f"{one:.1f}",
        f"{report.seconds / one:.1f}",
        edits,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baselines", action="store_true", help="also run ddmin and linear")
    parser.add_argument("cases", nargs="*", help="fixture names (default: all)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    strategies = ["predict", "ddmin", "linear"] if args.baselines else ["predict"]
    cases = sorted(p for p in FIXTURES.iterdir() if (p / "input.py").is_file())
    cases = [c for c in cases if not args.cases or c.name in args.cases]
    header = [
        "fixture",
        "strategy",
        "status",
        "candidates",
        "runs",
        "seconds",
        "one run",
        "ratio",
        "edits",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            for strategy in strategies:
                row = _row(case, strategy, Path(tmp))
                if row:
                    print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
