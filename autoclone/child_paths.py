"""Where a trial's imports come from: its own search path, and the user's modules loaded
from the trial's copy.

Split out of ``autoclone.child`` (which runs inside the user's process) to keep that
module short. A forked trial inherits the zygote's ``sys.path``, made from the first
trial's ``PYTHONPATH``; this puts the trial's own in its place, and sends imports that
would load the user's files to the copy that holds the edits being tried. Standard
library only: it is imported in every trial, before the script runs.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import Any

#: The interpreter's search path and ``PYTHONPATH`` as it started (the zygote's, for a
#: forked trial): what a trial's own ``PYTHONPATH`` replaces
_STARTED: tuple[list[str], str] | None = None


def remember_search_path() -> None:
    """Note the search path this interpreter started with (the zygote calls it first)."""
    global _STARTED
    if _STARTED is None:
        _STARTED = (list(sys.path), os.environ.get("PYTHONPATH", ""))


def _entries(value: str) -> list[str]:
    return [os.path.abspath(e) for e in value.split(os.pathsep) if e]


def search_path(started: Sequence[str], was: str, now: str) -> list[str]:
    """``sys.path`` as an interpreter started with ``PYTHONPATH=now`` would have it, from
    one that started with ``was`` (a forked trial's zygote started with the first trial's
    entries, its copies of the project's folders)."""
    old, new, path = _entries(was), _entries(now), list(started)
    if old == new or not path:
        return path
    if path[1 : 1 + len(old)] == old:
        return [path[0], *new, *path[1 + len(old) :]]
    return [path[0], *new, *(p for p in path[1:] if p not in old)]


#: Folders whose modules are never the user's own, wherever they are
_LIBRARY_DIRS = frozenset({"site-packages", "dist-packages", ".venv", "venv", ".git"})


class _IntoCopy(importlib.abc.MetaPathFinder):
    """A module the import system finds in the user's project (an editable install's
    finder or ``.pth``, an absolute ``sys.path`` entry) is loaded from the trial's copy
    of that file instead: the copy holds the edits being tried, the user's file never.
    Libraries stay where they are (a virtual environment inside the project, autoclone
    itself)."""

    def __init__(self, user: str, copy: str) -> None:
        self.user, self.copy = user.rstrip(os.sep) + os.sep, copy.rstrip(os.sep) + os.sep
        own = os.path.dirname(os.path.abspath(__file__))  # autoclone's package
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, own}
        self.kept = tuple(os.path.realpath(p) + os.sep for p in prefixes)

    def _moved(self, path: str) -> str | None:
        if not path.startswith(self.user) or os.path.realpath(path).startswith(self.kept):
            return None
        rel = path[len(self.user) :]
        if _LIBRARY_DIRS.intersection(rel.split(os.sep)):
            return None
        moved = self.copy + rel
        return moved if os.path.exists(moved) else None

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        origin = getattr(spec, "origin", None)
        moved = self._moved(origin) if isinstance(origin, str) else None
        if spec is None or moved is None:
            return spec
        places = spec.submodule_search_locations
        if places is not None:
            places = [self._moved(p) or p for p in places]
        return importlib.util.spec_from_file_location(
            name, moved, submodule_search_locations=places
        )


def trial_search_path(pythonpath: str) -> list[str]:
    """``sys.path`` as a fresh interpreter with ``PYTHONPATH=pythonpath`` would start."""
    remember_search_path()
    assert _STARTED is not None
    return search_path(_STARTED[0], _STARTED[1], pythonpath)


def set_search_path(env: os._Environ[str]) -> None:
    """The trial's ``PYTHONPATH`` on ``sys.path``, and modules of the user's project
    loaded from the trial's copy whichever finder finds them."""
    sys.path[:] = trial_search_path(env.get("PYTHONPATH", ""))
    user, copy = env.get("AUTOCLONE_USER_ROOT", ""), env.get("AUTOCLONE_ROOT", "")
    if user and copy and user != copy:
        sys.meta_path.insert(0, _IntoCopy(user, copy))
