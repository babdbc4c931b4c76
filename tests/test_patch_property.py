"""Property: the diff autoclone prints and the files it writes are the same change.

For random multi-file edits over random encodings (UTF-8, UTF-8 with BOM, latin-1 with a
coding cookie), line endings (LF, CRLF, mixed, no final newline) and file names (spaces,
quotes, sub-folders, a name that is not valid UTF-8), ``git apply`` of the emitted diff
on one copy of the folder and ``write_files`` on another give byte-identical files, equal
to the edits applied in memory, and ``check_patch`` (the dry apply behind "fixed implies
a patch that applies") accepts the diff.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from autoclone.edits import TextEdit
from autoclone.patch import SourceFile, apply_edits, check_patch, render_diff_bytes, write_files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

NAMES = ["train.py", "sub/dir/model.py", "with space.py", 'q"uote.py',
         os.fsdecode(b"caf\xe9.py"), "pkg/__init__.py"]  # fmt: skip
ENCODINGS = {
    "utf-8": "abcxyz ()+=_.#'\"\\\téü€中",
    "utf-8-sig": "abcxyz ()+=_.#'\"\\\téü€",
    "latin-1": "abcxyz ()+=_.#'\"\\\téüß",
}
ENDINGS = ["\n", "\r\n", "mixed"]


@st.composite
def source(draw: st.DrawFn) -> tuple[str, str, str]:
    """(encoding, text with its own endings, newline style)."""
    encoding = draw(st.sampled_from(sorted(ENCODINGS)))
    alphabet = ENCODINGS[encoding]
    lines = draw(st.lists(st.text(alphabet, max_size=30), min_size=1, max_size=12))
    ending = draw(st.sampled_from(ENDINGS))
    ends = [draw(st.sampled_from(["\n", "\r\n"])) if ending == "mixed" else ending for _ in lines]
    text = "".join(line + end for line, end in zip(lines, ends, strict=True))
    if draw(st.booleans()):
        text = text[: -len(ends[-1])]  # no newline at end of file
    if encoding == "latin-1":
        text = "# -*- coding: latin-1 -*-" + ends[0] + text
    return encoding, text, ending


@st.composite
def edits_for(draw: st.DrawFn, text: str, alphabet: str) -> list[TextEdit]:
    """Edits at distinct positions, none deleting into the next one."""
    lines = text.replace("\r\n", "\n").split("\n")
    spots = draw(st.sets(st.integers(0, 10_000), min_size=1, max_size=4))
    chosen = sorted({(n % len(lines), c % (len(lines[n % len(lines)]) + 1)) for n, c in
                     ((s // 97, s % 97) for s in spots)})  # fmt: skip
    out = []
    for index, (line, col) in enumerate(chosen):
        nxt = chosen[index + 1] if index + 1 < len(chosen) else None
        room = (nxt[1] if nxt and nxt[0] == line else len(lines[line])) - col
        delete = draw(st.integers(0, max(room, 0)))
        insert = draw(st.text(alphabet + "\n", min_size=0 if delete else 1, max_size=12))
        out.append(TextEdit(line + 1, col, insert, delete))
    return out


def _write(root: Path, name: str, encoding: str, text: str) -> SourceFile:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return SourceFile.read(path)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_git_apply_of_the_diff_gives_exactly_the_written_files(data: st.DataObject) -> None:
    names = data.draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    with tempfile.TemporaryDirectory() as tmp:
        applied, written = Path(tmp, "applied"), Path(tmp, "written")
        changes, texts = [], []
        for name in names:
            encoding, text, _ = data.draw(source())
            src = _write(written, name, encoding, text)
            _write(applied, name, encoding, text)
            edits = data.draw(edits_for(src.text, ENCODINGS[encoding]))
            changes.append((src, edits))
            texts.append((src, apply_edits(src, edits)))
        diff = render_diff_bytes(changes, relative_to=written)
        edited = [(src, new) for src, new in texts if new != src.text]
        event(f"{len(edited)} file(s) edited")
        if not edited:
            assert diff == b""
            return
        assert check_patch(diff, edited, written) is None
        subprocess.run(["git", "init", "-q", str(applied)], check=True)
        proc = subprocess.run(["git", "apply", "-"], cwd=applied, input=diff, capture_output=True)
        assert proc.returncode == 0, (proc.stderr.decode(errors="replace"), diff)
        write_files(edited)
        assert _tree(applied) == _tree(written)
        for src, new in edited:
            assert src.path.read_bytes() == new.encode(src.encoding)
