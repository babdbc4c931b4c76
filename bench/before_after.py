"""Issue 12's table: every case's repair before and after the two-run work, side by side.

For every fixture and ``bench/large``/``bench/unseen`` case tracked by git:

- before: ``bench/run.py`` of the code at ``--before`` (default ``d0e3e99``, the commit
  before the warm imports, the first-run reference and the memory cap), run in a git
  worktree on today's cases, with its own package first on ``PYTHONPATH`` (trial
  processes import it too);
- after: the same repair with the code in this checkout, plus:
  - "one run": a fresh, unshrunk run of the original (the ratio's unit for both columns);
  - peak resident memory of the first, traced run (it goes ``--steps`` backward calls
    past its conflict, keeping saved values) against a plain run, each a fresh
    interpreter capped at ``--steps`` backward calls (``bench/memory.py``'s measure);
  - a trial's fixed cost (wall time minus the script's own work) forked from a warm
    interpreter that imported only torch, and one that also imported the script's
    top-level third-party modules (``zygote.COLD`` off and on).

    OMP_NUM_THREADS=1 python bench/before_after.py [--cap 60] [case ...]

Prints a Markdown table and a summary; a benchmark, not a test (always exits 0).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import memory  # noqa: E402
import run as bench  # noqa: E402

from autoclone import zygote  # noqa: E402
from autoclone.session import Options, load_project, make_runner  # noqa: E402
from autoclone.trial import RunSpec  # noqa: E402

ROOT = HERE.parent
HOMES = ("fixtures", "bench/large", "bench/unseen")


def tracked_cases(names: list[str]) -> list[Path]:
    """Case folders git knows (a round being written next to them is left out)."""
    out = subprocess.run(["git", "ls-files", *HOMES], cwd=ROOT, capture_output=True, text=True)
    found = {ROOT / Path(f).parent for f in out.stdout.split() if f.endswith("/input.py")}
    cases = sorted(c for c in found if c.parent in {ROOT / h for h in HOMES})
    return [c for c in cases if not names or c.name in names]


def before_rows(commit: str, cases: list[Path]) -> dict[str, list[str]]:
    """``bench/run.py``'s rows as the code at ``commit`` repairs today's cases."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), commit],
                       cwd=ROOT, check=True)  # fmt: skip
        try:
            for home in HOMES:
                shutil.rmtree(tree / home, ignore_errors=True)
                (tree / home).mkdir(parents=True)
            for case in cases:
                shutil.copytree(case, tree / case.relative_to(ROOT))
            env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
            names = [c.name for c in cases]
            out = subprocess.run([sys.executable, "bench/run.py", "--cap", "1", *names],
                                 cwd=tree, env=env, capture_output=True, text=True)  # fmt: skip
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT)
    if out.returncode:
        print(f"before: bench/run.py failed: {out.stderr.strip()[-2000:]}", file=sys.stderr)
    rows = [line.strip("| \n").split(" | ") for line in out.stdout.splitlines()]
    return {r[0]: r for r in rows if len(r) >= 8 and r[1] == "predict"}


def fixed_costs(case: Path, tmp: Path, repeat: int) -> tuple[float, float]:
    """A trial's wall time minus the script's own work, without and with warm imports."""
    work = bench._copy(case, tmp / "fixed")
    options = Options(script=work / "input.py", cwd=work)
    project = load_project(options)
    costs = []
    for cold in (True, False):
        if cold:
            os.environ[zygote.COLD] = "1"
        runner = make_runner(options, project)
        runner.run(RunSpec(project.texts(), limit=1))  # starts the zygote
        runs = [runner.run(RunSpec(project.texts(), limit=1)) for _ in range(repeat)]
        runner.close()
        os.environ.pop(zygote.COLD, None)
        costs.append(statistics.median(r.seconds - r.script_seconds for r in runs))
    return costs[0], costs[1]


def peaks(case: Path, steps: int) -> tuple[float, float]:
    """Peak MB of a plain run and of the first, traced run, both to ``steps`` calls."""
    plain = memory.peak(case, "input.py", "plain", steps, timeout=120)
    traced = memory.peak(case, "input.py", "locate", steps, past=steps, timeout=120)
    return float(plain["peak_mb"]), float(traced["peak_mb"])  # type: ignore[arg-type]


HEADER = ["case", "status before", "status", "runs before", "runs after", "s before",
          "s after", "one run", "ratio before", "ratio after", "peak plain MB", "peak traced MB",
          "traced/plain",
          "fixed cost, torch only", "fixed cost, warm imports"]  # fmt: skip


def after_row(case: Path, tmp: Path, args: argparse.Namespace, before: list[str] | None) -> dict:
    """One case's measurements with this checkout's code (``{}`` for a bad-input case)."""
    row = bench._row(case, "predict", tmp, args.cap)
    if not row:
        return {}
    expected = bench.json.loads((case / "expected.json").read_text())
    plain = traced = cold = warm = float("nan")
    if expected["status"] not in ("timeout", "bad_input") and "launcher" not in expected:
        plain, traced = peaks(case, args.steps)
        cold, warm = fixed_costs(case, tmp, args.repeat)
    one = row[6]
    return {
        "case": case.name, "status": row[2], "runs": int(row[4]), "seconds": float(row[5]),
        "one": one, "ratio": bench._ratio(float(row[5]), one),
        "status_before": before[2] if before else "-",
        "runs_before": int(before[4]) if before else None,
        "s_before": float(before[5]) if before else None,
        "ratio_before": bench._ratio(float(before[5]), one) if before else "-",
        "plain": plain, "traced": traced, "cold": cold, "warm": warm,
    }  # fmt: skip


def cells(r: dict) -> list[str]:
    ratio = r["traced"] / r["plain"] if r["plain"] == r["plain"] else float("nan")
    return [r["case"], r["status_before"], r["status"], str(r["runs_before"] or "-"),
            str(r["runs"]),
            f"{r['s_before']:.1f}" if r["s_before"] is not None else "-", f"{r['seconds']:.1f}",
            r["one"], r["ratio_before"], r["ratio"], f"{r['plain']:.0f}", f"{r['traced']:.0f}",
            f"{ratio:.2f}x", f"{r['cold']:.2f}", f"{r['warm']:.2f}"]  # fmt: skip


def summary(rows: list[dict]) -> list[str]:
    """The issue's goals, measured: medians over the fixed repairs, worst memory ratio."""
    fixed = [r for r in rows if r["status"] == "fixed"]
    both = [r for r in fixed if r["status_before"] == "fixed"]
    worse = [f"{r['case']} ({r['runs_before']} -> {r['runs']})" for r in both
             if r["runs"] > r["runs_before"]]  # fmt: skip
    ratios = [r["traced"] / r["plain"] for r in rows if r["plain"] == r["plain"]]

    def med(values: list[float]) -> str:
        return f"{statistics.median(values):.2f}" if values else "-"

    def num(text: str) -> float:
        return float(text.lstrip("<>")) if text not in ("-", "nan") else float("nan")

    cold = [r["cold"] for r in rows if r["cold"] == r["cold"]]
    warm = [r["warm"] for r in rows if r["warm"] == r["warm"]]
    ok = [num(r["ratio"]) for r in fixed if num(r["ratio"]) == num(r["ratio"])]
    okb = [num(r["ratio_before"]) for r in both if num(r["ratio_before"]) == num(r["ratio_before"])]
    return [
        f"fixed repairs: {len(fixed)}; fixed before too (the runs compared): {len(both)}",
        f"runs per repair, median: before {med([r['runs_before'] for r in both])}, "
        f"after {med([r['runs'] for r in fixed])}; more runs than before: {worse or 'none'}",
        f"ratio to one fresh run, median: before {med(okb)}, after {med(ok)}",
        f"peak memory traced/plain: median {med(ratios)}, max {max(ratios, default=0):.2f}x",
        f"fixed cost per trial, median: torch only {med(cold)} s, warm imports {med(warm)} s",
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="d0e3e99", help="the commit to compare with")
    parser.add_argument("--cap", type=float, default=60.0, help="seconds for one unshrunk run")
    parser.add_argument("--steps", type=int, default=8, help="backward calls per memory run")
    parser.add_argument("--repeat", type=int, default=2, help="trials per fixed-cost figure")
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cases = tracked_cases(args.cases)
    before = before_rows(args.before, cases)
    print(f"before: {args.before}, {len(before)} cases repaired", flush=True)
    print("| " + " | ".join(HEADER) + " |\n|" + "---|" * len(HEADER), flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            row = after_row(case, Path(tmp) / case.name, args, before.get(case.name))
            if row:
                rows.append(row)
                print("| " + " | ".join(cells(row)) + " |", flush=True)
    print("\n" + "\n".join(f"- {line}" for line in summary(rows)))


if __name__ == "__main__":
    main()
