"""Which files are the user's code: the script and the local modules it imports.

Imports are looked up where the run looks for them: the script's own folder
(``sys.path[0]``; the current directory for ``-m``), the ``PYTHONPATH`` entries (relative
ones from the user's current directory, as their shell's ``python`` resolves them), the
folders an editable install's ``.pth`` file adds, then the project root (``--root`` may be
above the script); a top-level name none of those holds is asked of the import system's
other finders (an editable install's finder). A module under the project root is the
user's code, which autoclone may edit (never one in site-packages or a virtual
environment). A module found elsewhere that is no installed library (not under the
interpreter's prefixes, not in ``site-packages``) is the user's code outside the project:
read, so that a diagnosis can name its lines, and never edited.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.machinery
import os
import site
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import autoclone

SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", "site-packages"}

#: Files of the user's code outside the project read at most (they are never edited).
MAX_OUTER = 200


@dataclass
class Files:
    """The script first, then the modules under the root it reaches (``inside``, real
    paths), and those it reaches outside the root (``outer``: each as the import system
    names it, and its real path)."""

    inside: list[Path]
    outer: list[tuple[Path, Path]] = field(default_factory=list)


def pythonpath(value: str | None, cwd: Path) -> list[Path]:
    """``PYTHONPATH`` entries as the interpreter puts them on ``sys.path``: empty ones
    dropped, relative ones made absolute from ``cwd`` (where the user's shell stands)."""
    entries = (value or "").split(os.pathsep)
    return [Path(os.path.abspath(os.path.join(cwd, e))) for e in entries if e]


def search_path(first: Path, cwd: Path, value: str | None = None) -> list[Path]:
    """The folders the run imports from, libraries left out: ``first`` (its
    ``sys.path[0]``), the ``PYTHONPATH`` entries (``value``; the environment's by default)
    and the folders ``.pth`` files add."""
    value = os.environ.get("PYTHONPATH") if value is None else value
    return list(dict.fromkeys([first, *pythonpath(value, cwd), *_pth_folders()]))


@cache
def _pth_folders() -> tuple[Path, ...]:
    """Folders named by the site directories' ``.pth`` files (a src-layout editable
    install), that are no library's."""
    folders: list[Path] = []
    sites = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    with contextlib.suppress(AttributeError):
        if site.ENABLE_USER_SITE:
            sites.append(site.getusersitepackages())
    for directory in sites:
        with contextlib.suppress(OSError):
            for pth in sorted(Path(directory).glob("*.pth")):
                for line in pth.read_text(encoding="utf-8", errors="replace").splitlines():
                    line = line.rstrip()
                    if not line or line.startswith(("#", "import ", "import\t")):
                        continue
                    folder = Path(os.path.abspath(os.path.join(directory, line)))
                    if folder.is_dir() and not is_library(folder):
                        folders.append(folder)
    return tuple(folders)


@cache
def _library_roots() -> tuple[str, ...]:
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    own = os.path.dirname(os.path.realpath(autoclone.__file__))
    return tuple(sorted({os.path.realpath(p) for p in prefixes} | {own}))


def is_library(path: Path) -> bool:
    """An installed library's file or folder (or autoclone's own), not the user's code."""
    real = os.path.realpath(path)
    if {"site-packages", "dist-packages"} & set(Path(real).parts):
        return True
    return any(real == r or real.startswith(r + os.sep) for r in _library_roots())


def _module_file(bases: Sequence[Path], dotted: str) -> Path | None:
    """The file Python would load for ``dotted``, as the first base that holds it names it."""
    parts = dotted.split(".")
    for base in bases:
        for candidate in (
            base.joinpath(*parts).with_suffix(".py"),
            base.joinpath(*parts, "__init__.py"),
        ):
            if candidate.is_file():
                return candidate
    return None


def _package_of(bases: Sequence[Path], file: Path) -> list[str]:
    base = next((b for b in bases if file.is_relative_to(b)), file.parent)
    return list(file.relative_to(base).with_suffix("").parts)[:-1]


def _imported_names(bases: Sequence[Path], file: Path, tree: ast.AST) -> set[str]:
    """Dotted module names an import statement may refer to, resolved from ``file``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                names.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package_of(bases, file)
                keep = len(package) - (node.level - 1)
                base = ".".join([*package[: max(keep, 0)], *filter(None, [base])])
            if base:
                names.add(base)
            names.update(f"{base}.{a.name}" if base else a.name for a in node.names)
    return names


def _finder_base(top: str) -> Path | None:
    """Where the import system's other finders (an editable install's, which maps names
    to the user's folders) find a top-level name: the folder holding it; None for a
    library, a built-in, or a name nobody finds. Nothing is imported."""
    for finder in sys.meta_path:
        if finder in (importlib.machinery.PathFinder, importlib.machinery.BuiltinImporter,
                      importlib.machinery.FrozenImporter):  # fmt: skip
            continue
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(top, None)
        except Exception:  # noqa: BLE001, S112 - a finder's failure only means "not here"
            continue
        if spec is None or not spec.origin or not os.path.isabs(spec.origin):
            continue
        file = Path(spec.origin)
        base = file.parent.parent if spec.submodule_search_locations is not None else file.parent
        return None if is_library(file) else base
    return None


def scan(script: Path, root: Path, path: Sequence[Path] = ()) -> Files:
    """The script and every module of the user's reachable through its imports, looked
    up in ``path`` (the run's search path, ``search_path``; the script's folder if
    empty), then the root."""
    script, root = script.resolve(), root.resolve()
    bases = list(dict.fromkeys([*(path or [script.parent]), root]))
    inside: list[Path] = [script]
    outer: list[tuple[Path, Path]] = []
    seen = {script}
    queue = [script]
    asked: set[str] = set()
    while queue:
        file = queue.pop()
        try:
            tree = ast.parse(file.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue  # reported when the file is analysed for sites
        for name in sorted(_imported_names(bases, file, tree)):
            module = _module_file(bases, name)
            top = name.split(".")[0]
            if module is None and top not in asked:
                asked.add(top)
                found = _finder_base(top)
                if found is not None and found not in bases:
                    bases.append(found)
                    module = _module_file(bases, name)
            if module is None:
                continue
            real = module.resolve()
            # under the root as named (a link in the project to a file elsewhere is the
            # project's file: ``fix`` refuses to write through it), or by its real path
            mine = module if module.is_relative_to(root) else real
            if module in seen or real in seen:
                continue
            seen |= {module, real}
            if mine.is_relative_to(root):
                if SKIP_DIRS.intersection(mine.relative_to(root).parts):
                    continue
                inside.append(mine)
            elif is_library(real) or len(outer) >= MAX_OUTER:
                continue
            else:
                outer.append((module, real))
            queue.append(module)
    return Files(inside, outer)


def user_files(script: Path, root: Path, path: Sequence[Path] = ()) -> list[Path]:
    """The script first, then every local module under the root reachable through its
    imports."""
    return scan(script, root, path).inside


def module_file(name: str, path: Sequence[Path]) -> Path | None:
    """The file ``python -m name`` runs, looked up in ``path`` (its ``sys.path`` without
    the libraries): ``pkg/train.py``, or ``pkg/train/__main__.py`` for a package."""
    parts = name.split(".")
    for base in path:
        for candidate in (
            base.joinpath(*parts).with_suffix(".py"),
            base.joinpath(*parts, "__main__.py"),
        ):
            if candidate.is_file():
                return candidate
    return None


def module_name(script: Path, cwd: Path) -> tuple[str, Path] | None:
    """How ``python -m`` names a file of a package, and the folder it runs from: from
    the folder above its outermost package (``__init__.py``), or, for a folder without
    one (a namespace package), the dotted path from ``cwd``. None when it is neither."""
    script, here = script.resolve(), cwd.resolve()
    parts, base = [script.stem], script.parent
    while (base / "__init__.py").is_file():
        parts.insert(0, base.name)
        base = base.parent
    if len(parts) < 2 and script.is_relative_to(here):
        parts, base = list(script.relative_to(here).with_suffix("").parts), here
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts), base
