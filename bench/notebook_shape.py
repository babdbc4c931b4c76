#!/usr/bin/env python3
"""The same bug as a notebook: every single-file fixture split into cells must get the
outcome, the error class and the fix kinds its ``expected.json`` names for the script.

Each top-level statement of ``input.py`` (with the comments above it) becomes a code cell
of ``input.ipynb``, the way a script pasted into Jupyter cell by cell reads; then
``autoclone fix input.ipynb --dry-run --format json`` runs on it, in a copy of the
fixture's folder without ``input.py``. A variant passes when the status (and for a
refusal the error class) is the script's and, for a fix, the kinds are too, in no more
runs than the script's ``max_runs``. The patch itself was verified by autoclone's own
judge on the program the cells make; the script shape's numbers are what
``tests/test_fixtures.py`` checks.

    OMP_NUM_THREADS=1 python bench/notebook_shape.py              # every fixture
    OMP_NUM_THREADS=1 python bench/notebook_shape.py --only kv_,sample_pool

Prints one row per fixture and a summary line. Always exits 0: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = ("expected.json", "expected.patch", "expert.py", "expert", "README.md", "wrong.py",
           "recorded.json", "input.py", "__pycache__")  # fmt: skip


def cells(source: str) -> list[str]:
    """One cell per top-level statement, with the lines above it since the last one."""
    lines = source.splitlines(keepends=True)
    out, start = [], 0
    try:
        body = ast.parse(source).body
    except SyntaxError:  # a fixture about bad input: one cell, as pasted
        return [source]
    for node in body:
        out.append("".join(lines[start : node.end_lineno]))
        start = node.end_lineno or start
    if out:
        out[-1] += "".join(lines[start:])
    return [c.strip("\n") for c in out if c.strip()]


def notebook(source: str) -> dict:
    return {
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"cell{i}",
                   "metadata": {}, "outputs": [], "source": text.splitlines(keepends=True)}
                  for i, text in enumerate(cells(source))],  # fmt: skip
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                    "name": "python3"}},  # fmt: skip
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def eligible(case: Path) -> bool:
    """A fixture answered by one script, without arguments, a launcher or a device."""
    spec = json.loads((case / "expected.json").read_text())
    others = [p for p in case.iterdir() if p.suffix == ".py" and p.name not in ANSWERS]
    return (case / "input.py").is_file() and not others and not spec.get("args") and \
        not spec.get("launcher") and not spec.get("device")  # fmt: skip


def judge(case: Path) -> tuple[str, str]:
    spec = json.loads((case / "expected.json").read_text())
    with tempfile.TemporaryDirectory(prefix="notebook_shape_") as name:
        work = Path(name) / case.name
        shutil.copytree(case, work, ignore=shutil.ignore_patterns(*ANSWERS))
        (work / "input.ipynb").write_text(json.dumps(notebook((case / "input.py").read_text())))
        done = subprocess.run([sys.executable, "-m", "autoclone", "fix", "input.ipynb",
                               "--dry-run", "--format", "json", "--timeout",
                               str(spec.get("timeout", 60))], cwd=work, capture_output=True,
                              text=True, timeout=600, check=False)  # fmt: skip
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return "crash", (done.stderr.strip().splitlines() or [""])[-1]
    kinds = sorted({e["kind"] for e in report.get("edits", [])})
    want = sorted(spec.get("kinds") or ([spec["kind"]] if spec.get("kind") else []))
    problems = []
    if report.get("status") != spec["status"]:
        problems.append(f"status {report.get('status')} (script: {spec['status']})")
    said = report.get("error_class") or (report.get("summary", "").split() or [""])[0].rstrip(":")
    if spec.get("error_class") and spec["status"] == "unfixable" and said != spec["error_class"]:
        problems.append(f"class {said}")  # only a refusal's summary names its class
    if spec["status"] == "fixed" and want and kinds != want:
        problems.append(f"kinds {kinds} (script: {want})")
    if report.get("runs", 0) > spec.get("max_runs", 99):
        problems.append(f"{report.get('runs')} runs (script: at most {spec['max_runs']})")
    return ("ok" if not problems else "differs"), "; ".join(problems)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated prefixes of fixture names")
    args = parser.parse_args(argv)
    prefixes = [p for p in args.only.split(",") if p]
    cases = [c for c in sorted((ROOT / "fixtures").iterdir())
             if c.is_dir() and (c / "expected.json").is_file() and eligible(c)
             and (not prefixes or c.name.startswith(tuple(prefixes)))]  # fmt: skip
    print("| fixture | as a notebook | detail |\n| --- | --- | --- |")
    verdicts = []
    for case in cases:
        verdict, detail = judge(case)
        verdicts.append(verdict)
        print(f"| {case.name} | {verdict} | {detail} |", flush=True)
    print(f"\nnotebook shape: {verdicts.count('ok')}/{len(verdicts)} with the script's outcome")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
