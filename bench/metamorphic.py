#!/usr/bin/env python3
"""Metamorphic testing of the repair: the same program in other shapes must get the same answer.

For every fixture and every held-out case (``bench/unseen``) whose answer is one
``expert.py``, each transform below rewrites both the input and the expert into another
shape real projects use. A variant is kept only if the transformed expert prints exactly
what the original expert prints (the transform did not change the program). Then
``autoclone fix --dry-run --format json`` repairs the transformed input, and the variant
passes when the status is the case's and, for a fix, the patched script prints what the
transformed expert prints (``bench/unseen/score.py`` does the copying, patching and
comparing). Every failure is a repair that depends on the shape of the code.

Transforms (module-level "definitions" are the imports, constants, functions and classes
before the first statement that does work; the rest is the "script"):

* ``main``: the script moved into ``def main():`` called under ``if __name__ == "__main__":``.
* ``module``: the definitions moved into a local module ``shape_lib.py``, imported by name.
* ``main+module``: both.

    OMP_NUM_THREADS=1 python bench/metamorphic.py              # every case, every transform
    OMP_NUM_THREADS=1 python bench/metamorphic.py --only r6_ --transforms main

Prints one row per variant and a table per transform (variants, same outcome, wrong
patches) for bench/RESULTS.md. Always exits 0: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "unseen"))

import score  # noqa: E402 - bench/unseen/score.py: copy, repair, patch, compare

LIB = "shape_lib"
#: Expected fields a variant cannot honour as they are (line numbers move; launchers and
#: device mappings need their own runner): such cases are left out.
_SKIP_KEYS = ("launcher", "cpu_mapping", "check_set", "timeout")


_DEFINES = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)


def _is_definition(stmt: ast.stmt, index: int, started: bool) -> bool:
    """Imports, functions and classes anywhere (defining them earlier changes no number);
    the docstring; constants before the first statement that does work."""
    if isinstance(stmt, _DEFINES):
        return True
    if index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    return not started and isinstance(stmt, (ast.Assign, ast.AnnAssign)) and not any(
        isinstance(node, (ast.Call, ast.Lambda)) for node in ast.walk(stmt)
    )


def _text(lines: list[str], stmt: ast.stmt) -> list[str]:
    decorators = getattr(stmt, "decorator_list", [])
    first = min([stmt.lineno, *(d.lineno for d in decorators)])
    return lines[first - 1 : stmt.end_lineno or stmt.lineno]


def _split(source: str) -> tuple[list[str], list[str], list[ast.stmt]] | None:
    """(definition lines, script lines, definition statements), or None without a script."""
    tree = ast.parse(source)
    lines = source.splitlines()
    head: list[str] = []
    script: list[str] = []
    stmts: list[ast.stmt] = []
    started = False
    for index, stmt in enumerate(tree.body):
        if _is_definition(stmt, index, started):
            head += [*_text(lines, stmt), ""]
            stmts.append(stmt)
        else:
            started = True
            script += _text(lines, stmt)
    return (head, script, stmts) if script else None


def to_main(source: str) -> str | None:
    """The script moved into ``def main():`` under a ``__main__`` guard."""
    parts = _split(source)
    if parts is None:
        return None
    head, script, stmts = parts
    name = "main"
    while name in _bound(stmts) or name in source:  # the script's own main() stays its own
        name += "_"
    body = textwrap.indent("\n".join(script), "    ")
    return "\n".join([*head, "", f"def {name}():", body, "", "", 'if __name__ == "__main__":',
                      f"    {name}()", ""])  # fmt: skip


def _bound(stmts: list[ast.stmt]) -> list[str]:
    names: list[str] = []
    for stmt in stmts:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"]
        else:
            names += [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
                      and isinstance(n.ctx, ast.Store)]  # fmt: skip
    return list(dict.fromkeys(names))


def to_module(source: str) -> tuple[str, str] | None:
    """(the script importing the definitions by name, ``shape_lib.py`` holding them)."""
    parts = _split(source)
    if parts is None:
        return None
    head, script, stmts = parts
    names = _bound([s for s in stmts if not isinstance(s, (ast.Import, ast.ImportFrom))])
    if not any(isinstance(s, (ast.FunctionDef, ast.ClassDef)) for s in stmts):
        return None  # nothing worth a module
    imports = [ast.get_source_segment(source, s) or "" for s in stmts
               if isinstance(s, (ast.Import, ast.ImportFrom))]  # fmt: skip
    entry = [*imports, f"from {LIB} import {', '.join(names)}  # noqa: F401", "", *script, ""]
    return "\n".join(entry), "\n".join(head) + "\n"


def _main_module(source: str) -> tuple[str, str] | None:
    moved = to_module(source)
    if moved is None:
        return None
    entry = to_main(moved[0])
    return (entry, moved[1]) if entry is not None else None


#: name -> source -> {file name: text}, or None where the transform does not apply.
Transform = Callable[[str], "dict[str, str] | None"]


def _files_main(source: str) -> dict[str, str] | None:
    out = to_main(source)
    return {"input.py": out} if out is not None else None


def _files_module(source: str) -> dict[str, str] | None:
    out = to_module(source)
    return {"input.py": out[0], f"{LIB}.py": out[1]} if out is not None else None


def _files_both(source: str) -> dict[str, str] | None:
    out = _main_module(source)
    return {"input.py": out[0], f"{LIB}.py": out[1]} if out is not None else None


TRANSFORMS: dict[str, Transform] = {
    "main": _files_main,
    "module": _files_module,
    "main+module": _files_both,
}


def cases(only: str) -> list[Path]:
    """Fixtures and held-out cases answered by one ``expert.py``, with a plain expected
    status (no launcher, no device mapping, no smaller check sizes)."""
    found = []
    folders = [*sorted((ROOT / "fixtures").iterdir()), *sorted((ROOT / "bench/unseen").iterdir())]
    for folder in folders:
        spec = folder / "expected.json"
        if not (folder / "input.py").is_file() or not spec.is_file():
            continue
        if only and not folder.name.startswith(only):
            continue
        expected = json.loads(spec.read_text())
        if any(key in expected for key in _SKIP_KEYS):
            continue
        if expected["status"] == "fixed" and not (folder / "expert.py").is_file():
            continue
        found.append(folder)
    return found


def variant(case: Path, transform: Transform, dest: Path) -> Path | None:
    """The case in the transform's shape under ``dest``, or None where it does not apply."""
    try:
        files = transform((case / "input.py").read_text())
    except SyntaxError:
        return None  # a case about bad input: no shape to move it into
    if files is None:
        return None
    answers = ("expert.py", "expert", "wrong.py", "expected.patch", "README.md", "__pycache__")
    shutil.copytree(case, dest, ignore=shutil.ignore_patterns(*answers))
    for name, text in files.items():
        (dest / name).write_text(text)
    expected = json.loads((case / "expected.json").read_text())
    (dest / "expected.json").write_text(json.dumps({"status": expected["status"],
                                                    "args": expected.get("args", [])}))  # fmt: skip
    if (case / "expert.py").is_file():
        expert_files = transform((case / "expert.py").read_text())
        if expert_files is None:
            return None
        (dest / "expert").mkdir()
        for item in dest.iterdir():
            if item.name not in ("expert", "expected.json", *files):
                target = dest / "expert" / item.name
                (shutil.copytree if item.is_dir() else shutil.copy)(item, target)
        for name, text in expert_files.items():
            (dest / "expert" / name).write_text(text)
    return dest


def same_program(case: Path, moved: Path, args: list[str]) -> str:
    """'' when the transformed expert prints what the original does; else why not."""
    if not (case / "expert.py").is_file():
        return ""
    with tempfile.TemporaryDirectory(prefix="metamorphic_") as name:
        tmp = Path(name)
        script = [sys.executable, "input.py", *args]
        original = score.run(script, score.copy_expert(case, tmp / "a"), score.RUN_TIMEOUT)
        shaped = score.run(script, score.copy_expert(moved, tmp / "b"), score.RUN_TIMEOUT)
    if original.code != 0 or shaped.code != 0 or original.stdout != shaped.stdout:
        return "the transformed expert does not print the original's numbers"
    return ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="cases whose name starts with this")
    parser.add_argument("--transforms", default=",".join(TRANSFORMS))
    options = parser.parse_args(argv)
    chosen = [t for t in options.transforms.split(",") if t]
    tally = {t: {"variants": 0, "same": 0, "wrong": 0, "dropped": 0} for t in chosen}
    rows = ["| case | transform | expected | status | verdict | runs |", "| --- " * 6 + "|"]
    with tempfile.TemporaryDirectory(prefix="metamorphic_") as name:
        for case in cases(options.only):
            spec = json.loads((case / "expected.json").read_text())
            args = [str(a) for a in spec.get("args", [])]
            for t in chosen:
                moved = variant(case, TRANSFORMS[t], Path(name) / f"{case.name}__{t}")
                if moved is None:
                    continue
                if same_program(case, moved, args):
                    tally[t]["dropped"] += 1
                    continue
                print(f"{case.name} [{t}] ...", file=sys.stderr, flush=True)
                result = score.judge(moved)
                tally[t]["variants"] += 1
                tally[t]["same"] += result.verdict == "ok"
                tally[t]["wrong"] += result.verdict == "WRONG PATCH"
                rows.append(f"| {case.name} | {t} | {result.expected} | {result.status} "
                            f"| {result.verdict} | {result.runs} |")  # fmt: skip
                if result.verdict != "ok":
                    print(f"  {result.verdict}: {result.summary[:300]} {result.detail[:300]}",
                          file=sys.stderr, flush=True)  # fmt: skip
    print("\n".join(rows))
    print("\n| transform | variants | same outcome | wrong patches | not the same program |")
    print("| --- | --- | --- | --- | --- |")
    for t, n in tally.items():
        print(f"| {t} | {n['variants']} | {n['same']} | {n['wrong']} | {n['dropped']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
