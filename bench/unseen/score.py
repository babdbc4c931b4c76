#!/usr/bin/env python3
"""Black-box scorer for the held-out cases in bench/unseen/.

For every case folder whose name starts with the optional prefix, the case is copied to a
temporary directory without the answers (expert.py, expert/, expected.json, README.md),
`autoclone fix input.py --format json --dry-run` is run there, and the JSON patch is applied
with `git apply`. A notebook case (``"notebook"`` in expected.json) is fixed in its copy
without `--dry-run`, since a notebook's patch is shown per cell, and notebooks are run as
their code cells joined into one script. The patched script and the expert's version are
run and their stdout compared: identical output is `ok`, different output is `WRONG PATCH`;
a status other than the expected one is a `miss`. Only the CLI and the standard library are used.

    python bench/unseen/score.py            # every case
    python bench/unseen/score.py r3_        # the cases whose name starts with r3_
    python bench/unseen/score.py --patches  # also print the patches of the cases that passed

Always exits 0: it is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ANSWERS = ("expert.py", "expert.ipynb", "expert", "expected.json", "README.md", "__pycache__")
NOTEBOOK_SCRIPT = "notebook_cells.py"
FIX_TIMEOUT = 1800
RUN_TIMEOUT = 300


@dataclass
class Result:
    case: str
    expected: str
    status: str = "-"
    verdict: str = "-"
    runs: str = "-"
    seconds: str = "-"
    edits: list[str] = field(default_factory=list)
    summary: str = ""
    patch: str = ""
    detail: str = ""


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"
    return env


def run(cmd: list[str], cwd: Path, timeout: int) -> Run:
    try:
        done = subprocess.run(
            cmd, cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return Run(-1, "", f"timed out after {timeout} s")
    return Run(done.returncode, done.stdout, done.stderr)


def find_cases(prefix: str) -> list[Path]:
    return sorted(
        d
        for d in HERE.iterdir()
        if d.is_dir() and d.name.startswith(prefix) and (d / "expected.json").is_file()
    )


def load_expected(case: Path) -> tuple[str, list[str]]:
    spec = json.loads((case / "expected.json").read_text())
    return spec["status"], [str(a) for a in spec.get("args", [])]


def load_entry(case: Path) -> list[str]:
    """What follows ``autoclone fix``: ``input.py``, ``-m pkg.train`` for a package run as a
    module (``"module"``), or the notebook (``"notebook"``)."""
    spec = json.loads((case / "expected.json").read_text())
    if spec.get("notebook"):
        return [spec["notebook"]]
    return ["-m", spec["module"]] if spec.get("module") else ["input.py"]


def notebook_of(case: Path) -> str | None:
    return json.loads((case / "expected.json").read_text()).get("notebook")


def script_entry(case: Path, work: Path) -> list[str]:
    """What follows ``python`` to run the case in ``work``: a notebook's code cells are
    written, joined in order, to one script first."""
    notebook = notebook_of(case)
    if not notebook:
        return load_entry(case)
    cells = json.loads((work / notebook).read_text())["cells"]
    code = [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in cells
        if c.get("cell_type") == "code"
    ]
    (work / NOTEBOOK_SCRIPT).write_text("\n".join(code) + "\n")
    return [NOTEBOOK_SCRIPT]


def copy_case(case: Path, dest: Path) -> Path:
    shutil.copytree(case, dest, ignore=shutil.ignore_patterns(*ANSWERS))
    return dest


def copy_expert(case: Path, dest: Path) -> Path:
    copy_case(case, dest)
    if (case / "expert").is_dir():
        shutil.copytree(case / "expert", dest, dirs_exist_ok=True)
    elif notebook_of(case):
        shutil.copy(case / "expert.ipynb", dest / str(notebook_of(case)))
    else:
        shutil.copy(case / "expert.py", dest / "input.py")
    return dest


def autoclone_cmd() -> str:
    return shutil.which("autoclone") or str(Path(sys.executable).parent / "autoclone")


def repair(
    work: Path, args: list[str], entry: tuple[str, ...] = ("input.py",), write: bool = False
) -> dict:
    """``autoclone fix``'s JSON report; with ``write`` the fix is written into ``work``."""
    cmd = [autoclone_cmd(), "fix", *entry, "--format", "json", *([] if write else ["--dry-run"])]
    done = run([*cmd, "--", *args] if args else cmd, work, FIX_TIMEOUT)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = (done.stderr.strip().splitlines() or [""])[-1]
        return {"status": f"crash (exit {done.code})", "summary": tail}


def apply_patch(work: Path, patch: str) -> str:
    patch_file = work.parent / "fix.patch"
    patch_file.write_text(patch)
    done = run(["git", "apply", str(patch_file)], work, 60)
    return "" if done.code == 0 else f"git apply failed: {done.stderr.strip()}"


def first_difference(got: str, want: str) -> str:
    got_lines, want_lines = got.splitlines(), want.splitlines()
    for i in range(max(len(got_lines), len(want_lines))):
        g = got_lines[i] if i < len(got_lines) else "<no line>"
        w = want_lines[i] if i < len(want_lines) else "<no line>"
        if g != w:
            return f"line {i + 1}: patched `{g}` vs expert `{w}`"
    return ""


def patched_copy(case: Path, tmp: Path, patch: str) -> tuple[Path, str]:
    """A fresh copy with the patch applied (a notebook: the copy ``fix`` wrote), or why not."""
    work = copy_case(case, tmp / "patched")
    if not patch.strip():
        return work, "status fixed but the patch is empty"
    notebook = notebook_of(case)
    if notebook:
        shutil.copy(tmp / "work" / notebook, work / notebook)
        return work, ""
    return work, apply_patch(work, patch)


def compare_with_expert(case: Path, tmp: Path, patch: str, args: list[str]) -> tuple[str, str]:
    """Apply the patch to a fresh copy, run it and the expert; return (verdict, detail)."""
    work, problem = patched_copy(case, tmp, patch)
    if problem:
        return "WRONG PATCH", problem
    expert_dir = copy_expert(case, tmp / "expert")
    expert = run([sys.executable, *script_entry(case, expert_dir), *args], expert_dir, RUN_TIMEOUT)
    if expert.code != 0:
        return "BAD CASE", f"the expert run failed: {expert.stderr.strip()[-300:]}"
    patched = run([sys.executable, *script_entry(case, work), *args], work, RUN_TIMEOUT)
    if patched.code != 0:
        tail = (patched.stderr.strip().splitlines() or [""])[-1]
        return "WRONG PATCH", f"the patched script fails: {tail}"
    difference = first_difference(patched.stdout, expert.stdout)
    return ("WRONG PATCH", difference) if difference else ("ok", "")


def describe_edits(report: dict) -> list[str]:
    return [f"{e.get('file')}:{e.get('line')} {e.get('kind')}" for e in report.get("edits") or []]


def judge(case: Path) -> Result:
    expected, args = load_expected(case)
    result = Result(case.name, expected)
    with tempfile.TemporaryDirectory(prefix=f"score_{case.name}_") as name:
        tmp = Path(name)
        work = copy_case(case, tmp / "work")
        report = repair(work, args, tuple(load_entry(case)), write=bool(notebook_of(case)))
        result.status = str(report.get("status"))
        result.runs = str(report.get("runs", "-"))
        result.seconds = str(report.get("seconds", "-"))
        result.edits = describe_edits(report)
        result.summary = str(report.get("summary", ""))
        result.patch = report.get("patch") or ""
        result.verdict, result.detail = verdict_for(case, tmp, result, args)
    return result


def verdict_for(case: Path, tmp: Path, result: Result, args: list[str]) -> tuple[str, str]:
    """ok / WRONG PATCH / miss; a miss with a patch still says how the patch compares."""
    if result.status != "fixed":
        return ("ok", "") if result.status == result.expected else ("miss", "")
    verdict, detail = compare_with_expert(case, tmp, result.patch, args)
    if result.expected != "fixed":
        return "miss", f"patch vs expert: {verdict} {detail}".strip()
    return verdict, detail


def table(results: list[Result]) -> str:
    rows = [
        "| case | expected | status | verdict | runs | seconds | edits |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        edits = "<br>".join(r.edits) or "-"
        rows.append(
            f"| {r.case} | {r.expected} | {r.status} | {r.verdict} | {r.runs} | {r.seconds} "
            f"| {edits} |"
        )
    return "\n".join(rows)


def details(results: list[Result], every: bool) -> str:
    parts = []
    for r in results:
        if r.verdict == "ok" and not (every and r.patch):
            continue
        parts.append(f"### {r.case}: {r.verdict}\n\nsummary: {r.summary}")
        if r.detail:
            parts.append(r.detail)
        if r.patch:
            parts.append(f"```diff\n{r.patch.rstrip()}\n```")
    return "\n\n".join(parts)


def summary_line(results: list[Result]) -> str:
    passed = sum(r.verdict == "ok" for r in results)
    wrong = sum(r.verdict == "WRONG PATCH" for r in results)
    misses = sum(r.verdict == "miss" for r in results)
    return f"passed {passed}/{len(results)}, wrong patches {wrong}, misses {misses}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Score autoclone on bench/unseen/ (black box).")
    parser.add_argument("prefix", nargs="?", default="", help="only cases whose name starts so")
    parser.add_argument("--patches", action="store_true", help="print every patch, not only misses")
    options = parser.parse_args(argv)
    results = []
    for case in find_cases(options.prefix):
        print(f"scoring {case.name} ...", file=sys.stderr, flush=True)
        results.append(judge(case))
        print(f"  {results[-1].status}: {results[-1].verdict}", file=sys.stderr, flush=True)
    print(table(results))
    notes = details(results, options.patches)
    if notes:
        title = "Patches and misses" if options.patches else "Not passed"
        print(f"\n## {title}\n\n{notes}")
    print(f"\n{summary_line(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
