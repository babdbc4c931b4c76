"""Trials never change anything outside their own copy (issue 17).

A real training script with a real autograd bug writes where real scripts write: an
absolute output folder it clears at start-up, a checkpoint it resumes from, a sqlite
database (written by C code), a log under ``$HOME``, a ``checkpoints`` link inside the
project that points outside. After ``fix --dry-run``, ``fix --check``, ``explain`` and
``fix``, every file outside the project is byte-identical, the bug is still found and
fixed, and the report names what the trials wrote outside, with the lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autoclone import isolation

SCRIPT = textwrap.dedent(
    """\
    import os, shutil, sqlite3
    import torch

    OUT = os.environ["OUT_DIR"]
    CKPT = os.path.join(OUT, "ckpt.pt")
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    start = 0
    if os.path.exists(CKPT):
        state = torch.load(CKPT)
        model.load_state_dict(state["model"])
        start = state["epoch"] + 1
    shutil.rmtree(os.path.join(OUT, "runs"), ignore_errors=True)
    os.makedirs(os.path.join(OUT, "runs"))
    db = sqlite3.connect(os.path.join(OUT, "metrics.db"))
    db.execute("create table if not exists m (epoch int, loss real)")
    log = open(os.path.expanduser("~/train.log"), "a")
    torch.save(model.state_dict(), "checkpoints/init.pt")
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for epoch in range(start, 4):
        out = torch.sigmoid(model(x))
        out *= 2
        loss = ((out - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")
        db.execute("insert into m values (?, ?)", (epoch, loss.item()))
        db.commit()
        log.write(f"{epoch},{loss.item()}\\n")
        torch.save({"model": model.state_dict(), "epoch": epoch}, CKPT)
    """
)


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under a folder, with its bytes (a folder, its name only)."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        out[rel] = path.read_bytes() if path.is_file() and not path.is_symlink() else "entry"
    return out


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """A project and, outside it, files with known contents the script would change."""
    project, out, home, scratch = (tmp_path / n for n in ("proj", "out", "home", "scratch"))
    for folder in (project, out / "runs", home, scratch):
        folder.mkdir(parents=True)
    (project / "train.py").write_text(SCRIPT)
    (project / "checkpoints").symlink_to(scratch)
    (scratch / "init.pt").write_text("weights of a three-day run")
    (out / "runs" / "NOTES.txt").write_text("my notes, never written by the script")
    (out / "ckpt.pt").write_bytes(b"")  # no checkpoint yet: torch.load of it would fail
    (out / "ckpt.pt").unlink()
    (home / "train.log").write_text("epoch,loss\n")
    return {"project": project, "out": out, "home": home, "scratch": scratch}


def _autoclone(world: dict[str, Path], *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "OUT_DIR": str(world["out"]), "HOME": str(world["home"]), **env}
    return subprocess.run(
        [sys.executable, "-m", "autoclone", *args], cwd=world["project"], env=environ,
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _outside(world: dict[str, Path]) -> dict[str, dict[str, bytes | str]]:
    return {name: _tree(world[name]) for name in ("out", "home", "scratch")}


needs_namespaces = pytest.mark.skipif(
    bool(isolation.available()), reason=f"no isolation here: {isolation.available()}"
)


@needs_namespaces
def test_no_command_changes_a_file_outside_the_copy_and_the_bug_is_still_fixed(
    world: dict[str, Path],
) -> None:
    before = _outside(world)
    dry = _autoclone(world, "fix", "train.py", "--dry-run", "--format", "json")
    report = json.loads(dry.stdout)
    assert report["status"] == "fixed", dry.stderr
    assert _outside(world) == before
    named = {entry["path"]: entry for entry in report["outside"]}
    out = world["out"]
    assert named[str(out / "runs")]["action"] == "replaced"
    assert named[str(out / "metrics.db")]["line"] == "train.py:16"
    assert named[str(world["home"] / "train.log")]["line"] == "train.py:18"
    assert named[str(world["scratch"] / "init.pt")] == {
        "path": str(world["scratch"] / "init.pt"), "action": "wrote", "line": "train.py:19",
    }  # fmt: skip
    assert any("scratch copy" in note for note in report["notes"])
    for command in (["fix", "train.py", "--check"], ["fix", "train.py", "--check"]):
        checked = _autoclone(world, *command)  # twice: the same verdict, no false pass
        assert checked.returncode == 1, checked.stderr
        assert _outside(world) == before
    explained = _autoclone(world, "explain", "train.py", "--format", "json")
    assert json.loads(explained.stdout)["status"] == "explained", explained.stderr
    assert _outside(world) == before
    fixed = _autoclone(world, "fix", "train.py")
    assert fixed.returncode == 0, fixed.stderr
    assert _outside(world) == before
    assert "out *= 2" not in (world["project"] / "train.py").read_text()


def test_the_guard_stops_at_the_first_write_outside_and_names_it(
    world: dict[str, Path],
) -> None:
    """Where trials cannot be isolated, a Python-level write outside the copy is refused
    before it happens and autoclone stops: one line, the path, the line, the option."""
    before = _outside(world)
    result = _autoclone(world, "fix", "train.py", "--dry-run", AUTOCLONE_ISOLATION="guard")
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert "train.py:14" in last and str(world["out"] / "runs") in last, last
    assert "--allow-outside-writes" in last
    assert _outside(world) == before
    allowed = _autoclone(
        world, "fix", "train.py", "--dry-run", "--allow-outside-writes", "--format", "json",
        AUTOCLONE_ISOLATION="guard",
    )  # fmt: skip
    report = json.loads(allowed.stdout)  # the risk accepted: trials run, writing for real
    assert report["status"] != "bad_input", allowed.stderr
    assert not (world["out"] / "runs" / "NOTES.txt").exists()
    assert any("it is real" in note for note in report["notes"])


def test_fix_never_writes_through_a_link_to_a_file_outside_the_project(tmp_path: Path) -> None:
    """repro symlink_write_through: the verified patch edits ``model.py``, a link to a
    module shared from outside the project; ``fix`` refuses in one line naming the real
    file and writes nothing."""
    project, elsewhere = tmp_path / "proj", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    module = textwrap.dedent(
        """\
        import torch

        def head(h):
            out = torch.sigmoid(h)
            out *= 2
            return out
        """
    )
    (elsewhere / "model.py").write_text(module)
    (project / "model.py").symlink_to(elsewhere / "model.py")
    (project / "train.py").write_text(
        "import torch\nfrom model import head\ntorch.manual_seed(0)\n"
        "w = torch.randn(4, 1, requires_grad=True)\n"
        "for step in range(4):\n    loss = head(torch.randn(8, 4) @ w).sum()\n    loss.backward()\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "autoclone", "fix", "train.py"], cwd=project,
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert f"a link to {elsewhere / 'model.py'}" in last and "nothing was written" in last, last
    assert (elsewhere / "model.py").read_text() == module
