"""Settings in ``pyproject.toml`` (``[tool.autoclone]``), as ruff, black and pytest read theirs.

The nearest ``pyproject.toml`` from the current folder upwards that has the table gives
the defaults of ``fix`` and ``explain``; anything on the command line wins (click's
``default_map``). A relative ``root`` is the pyproject's folder's, not the shell's.

    [tool.autoclone]
    timeout = 300
    steps = 3
    root = "."
    launcher = "torchrun"
    nproc = 2
    set = { EPOCHS = 2, BATCH_SIZE = 16 }   # or ["EPOCHS=2", "BATCH_SIZE=16"]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomllib

#: Setting -> the option's parameter name, for the commands that take it.
_FIX = {"timeout": "timeout", "steps": "steps", "device": "device", "set": "set_",
        "root": "root", "budget": "budget", "shrink": "shrink", "jobs": "jobs",
        "launcher": "launcher", "nproc": "nproc", "allow-network": "allow_network",
        "allow-outside-writes": "allow_outside_writes"}  # fmt: skip
_EXPLAIN = {"timeout", "device", "set", "root", "launcher", "nproc", "allow-outside-writes",
            "allow-network"}  # fmt: skip


class ConfigError(ValueError):
    """A setting autoclone does not know, or of the wrong type: one line, exit 2."""


def find(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` with a ``[tool.autoclone]``."""
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and "tool" in _read(candidate) and \
                "autoclone" in _read(candidate)["tool"]:  # fmt: skip
            return candidate
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def default_map(start: Path) -> dict[str, dict[str, Any]]:
    """``{"fix": {...}, "explain": {...}}`` for click, from the nearest table; empty without."""
    path = find(start)
    if path is None:
        return {}
    table = _read(path)["tool"]["autoclone"]
    unknown = sorted(set(table) - set(_FIX))
    if unknown:
        raise ConfigError(
            f"{path}: [tool.autoclone] has no setting {unknown[0]!r} "
            f"(settings: {', '.join(sorted(_FIX))})"
        )
    values = {key: _value(key, value, path) for key, value in table.items()}
    return {
        "fix": {_FIX[k]: v for k, v in values.items()},
        "explain": {_FIX[k]: v for k, v in values.items() if k in _EXPLAIN},
    }


def _value(key: str, value: Any, path: Path) -> Any:
    """A setting as the option takes it: ``set`` as NAME=VALUE strings, ``root`` from the
    pyproject's folder, the rest as written (click checks types and ranges)."""
    if key == "set":
        if isinstance(value, dict):
            return [f"{name}={item}" for name, item in value.items()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        raise ConfigError(f"{path}: [tool.autoclone] set is a table or a list of NAME=VALUE")
    if key == "root":
        if not isinstance(value, str):
            raise ConfigError(f"{path}: [tool.autoclone] root is a path")
        return str((path.parent / value).resolve())
    if isinstance(value, (dict, list)):
        raise ConfigError(f"{path}: [tool.autoclone] {key} is a single value")
    return value
