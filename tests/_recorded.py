"""What a fixture's expert fix prints, recorded by ``--regen-fixtures`` with a key of its inputs.

A fixture's comparison runs (the expert's fix and the trap, ``wrong.py``) read only the
fixture's own files, its options, torch and Python, never autoclone: running them on every
test run was half of the fixture tests' time. ``recorded.json`` keeps the expert's stdout
(the trap was checked to print something else when it was written) under a key of all of
those inputs. A test uses a record only when the key matches, and only to accept: a patched
run that does not print the recorded output is compared with a live run of the expert, so
a record from another machine (other float rounding) can make a test slower, never let a
wrong patch pass.
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib.metadata import version
from pathlib import Path

RECORD = "recorded.json"
#: Files that do not change what the expert or the trap print.
_NOT_READ = {"README.md", "expected.patch", RECORD}


def key(case: Path) -> str:
    """A hash of every file of the fixture the runs read, torch's version and Python's."""
    digest = hashlib.sha256(f"{version('torch')} {sys.version_info[:2]}".encode())
    for path in sorted(p for p in case.rglob("*") if p.is_file()):
        relative = path.relative_to(case).as_posix()
        if path.name in _NOT_READ or "__pycache__" in relative:
            continue
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def expert_stdout(case: Path) -> str | None:
    """The recorded stdout of the fixture's expert, or None where it is missing or stale."""
    path = case / RECORD
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    return str(record["expert_stdout"]) if record.get("key") == key(case) else None


def write(case: Path, stdout: str) -> None:
    """Record the expert's stdout (the caller has run it, and the trap, for real)."""
    text = json.dumps({"key": key(case), "expert_stdout": stdout}, indent=1) + "\n"
    (case / RECORD).write_text(text)
