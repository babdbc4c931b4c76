"""Which files are the user's code: the script and the local modules it imports.

Only files under the project root count (never site-packages), so sites, diagnosis and
patch stay inside what the user owns.
"""

from __future__ import annotations

import ast
from pathlib import Path

_SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", "site-packages"}


def _module_file(root: Path, dotted: str) -> Path | None:
    parts = dotted.split(".")
    for candidate in (
        root.joinpath(*parts).with_suffix(".py"),
        root.joinpath(*parts, "__init__.py"),
    ):
        if candidate.is_file() and not _SKIP_DIRS.intersection(candidate.parts):
            return candidate
    return None


def _package_of(root: Path, file: Path) -> list[str]:
    rel = file.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    return parts[:-1] if parts[-1] != "__init__" else parts[:-1]


def _imported_names(root: Path, file: Path, tree: ast.AST) -> set[str]:
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
                package = _package_of(root, file)
                keep = len(package) - (node.level - 1)
                base = ".".join([*package[: max(keep, 0)], *filter(None, [base])])
            if base:
                names.add(base)
            names.update(f"{base}.{a.name}" if base else a.name for a in node.names)
    return names


def user_files(script: Path, root: Path) -> list[Path]:
    """The script first, then every local module reachable through its imports."""
    script, root = script.resolve(), root.resolve()
    found, queue = [script], [script]
    while queue:
        file = queue.pop()
        try:
            tree = ast.parse(file.read_bytes())
        except (SyntaxError, ValueError):
            continue  # reported when the file is analysed for sites
        for name in sorted(_imported_names(root, file, tree)):
            module = _module_file(root, name)
            if module is not None and module not in found:
                found.append(module)
                queue.append(module)
    return found
