"""How a trial reports the error that ended the user's script.

Split out of ``autoclone.child`` (which runs inside the user's process) to keep that
module short: the error's type, message and frames as the result file records them,
a spawned worker's error told as its own, and where a module that was not found
would be found from the user's folder. Standard library only: it is imported in
every trial, before the script runs.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import os
import re
import sys
import traceback
from typing import Any

#: One frame of a traceback printed as text (anomaly mode's warning, a spawned worker's)
FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def error_info(exc: BaseException) -> dict[str, Any]:
    """The failure as the result file records it: the frames the parent blames a line
    by (a spawned worker's own), and for a missing module where the user's folder has it."""
    frames = [(f.filename, f.lineno or 0) for f in traceback.extract_tb(exc.__traceback__)]
    info: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc), "frames": frames}
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        info["found"] = _found_beside_user(exc.name)
    torch = sys.modules.get("torch")
    if torch is not None and not getattr(torch, "is_grad_enabled", lambda: True)():
        # still off once the error left every ``with`` block: a global switch never undone
        info["grad_off"] = True
    return _spawned(info) or info


def _found_beside_user(name: str) -> str:
    """The folder beside the user's project that holds ``name``, where a search path the
    script made from its copy (``sys.path.insert(0, '../lib')``, ``__file__/../lib``)
    points above the copy: what the same entry means from the user's own folder; "" if
    no such folder holds it."""
    env = os.environ
    copy, user = env.get("AUTOCLONE_ROOT", ""), env.get("AUTOCLONE_USER_ROOT", "")
    session = env.get("AUTOCLONE_SESSION", "")
    if not (copy and user and session):
        return ""
    top = name.split(".")[0]
    for entry in list(sys.path):
        if not isinstance(entry, str) or not entry:
            continue
        full = os.path.normpath(os.path.join(os.getcwd(), entry))
        rel = os.path.relpath(full, copy)
        if not rel.startswith(os.pardir) or not full.startswith(session + os.sep):
            continue  # inside the copy (the user's folder is the same), or a real path
        there = os.path.normpath(os.path.join(user, rel))
        with contextlib.suppress(Exception):
            if importlib.machinery.PathFinder.find_spec(top, [there]) is not None:
                return there
    return ""


#: ``torch.multiprocessing.spawn`` re-raises a worker's error in the parent as
#: ``ProcessRaisedException`` whose message is the worker's whole traceback, as text.
_SPAWNED = re.compile(
    r"-- Process \d+ terminated with the following error:\n(?P<tb>Traceback.*)", re.S
)
_LAST_ERROR = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning)?): (?P<msg>.*)$")


def _spawned(info: dict[str, Any]) -> dict[str, Any] | None:
    """A spawned worker's error as if raised here: its type, its message and its frames
    (after the spawning line's), so the worker's own line is blamed, not ``mp.spawn``."""
    found = _SPAWNED.search(info["message"])
    if not found:
        return None
    lines = found["tb"].rstrip().splitlines()
    for n in range(len(lines) - 1, 0, -1):
        last = _LAST_ERROR.match(lines[n])
        if last and not lines[n].startswith(" "):
            message = "\n".join([last["msg"], *lines[n + 1 :]])
            frames = [(m["file"], int(m["line"])) for m in FRAME.finditer("\n".join(lines[:n]))]
            name = last["type"].rsplit(".", 1)[-1]
            return {"type": name, "message": message, "frames": info["frames"] + frames}
    return None
