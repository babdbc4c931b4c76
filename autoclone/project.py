"""Which files are the user's code: the script and the local modules it imports.

Imports are looked up where Python looks first, the script's own folder (``sys.path[0]``),
then the project root (``--root`` may be above the script). Only files under the project
root count (never site-packages), so sites, diagnosis and patch stay inside what the
user owns.
"""

from __future__ import annotations

import ast
from pathlib import Path

_SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", "site-packages"}


def _module_file(bases: list[Path], root: Path, dotted: str) -> Path | None:
    parts = dotted.split(".")
    for base in bases:
        for candidate in (
            base.joinpath(*parts).with_suffix(".py"),
            base.joinpath(*parts, "__init__.py"),
        ):
            if (
                candidate.is_file()
                and candidate.is_relative_to(root)
                and not _SKIP_DIRS.intersection(candidate.relative_to(root).parts)
            ):
                return candidate
    return None


def _package_of(bases: list[Path], file: Path) -> list[str]:
    base = next(b for b in bases if file.is_relative_to(b))
    return list(file.relative_to(base).with_suffix("").parts)[:-1]


def _imported_names(bases: list[Path], file: Path, tree: ast.AST) -> set[str]:
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


def user_files(script: Path, root: Path) -> list[Path]:
    """The script first, then every local module reachable through its imports."""
    script, root = script.resolve(), root.resolve()
    bases = list(dict.fromkeys([script.parent, root]))
    found, queue = [script], [script]
    while queue:
        file = queue.pop()
        try:
            tree = ast.parse(file.read_bytes())
        except (SyntaxError, ValueError):
            continue  # reported when the file is analysed for sites
        for name in sorted(_imported_names(bases, file, tree)):
            module = _module_file(bases, root, name)
            if module is not None and module not in found:
                found.append(module)
                queue.append(module)
    return found
