"""Odd folders, odd files, odd requests: one test per reproduction of issue 10.

Each runs the real command on a real folder (real torch, real processes, real ``git
apply``); where the case needs a system tool (strace to land a signal inside the write,
setpriv to drop root's file-permission override) the test says so and is skipped
without it. Signals and orphans are in ``test_signals.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BROKEN = textwrap.dedent(
    """\
    import torch

    EPOCHS = 20
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    for step in range(EPOCHS):
        e = (2 * w).exp()
        loss = e.sum()
        e[0] = 0.0
        opt.zero_grad()
        loss.backward()
        opt.step()
    """
)
READS_DATA = BROKEN.replace(
    "torch.manual_seed(0)\n", "torch.manual_seed(0)\nSCALE = float(open('data/scale.txt').read())\n"
)
#: Two files, two conflicts: the patch must be written to both or to neither.
TWO_FILES = {
    "helper.py": "import torch\n\n\ndef head(h):\n    out = torch.sigmoid(h)\n"
    "    out.mul_(2)\n    return out.sum()\n",
    "main.py": "import torch\nfrom helper import head\n\ntorch.manual_seed(0)\n"
    "w = torch.randn(4, 3, requires_grad=True)\nx = torch.randn(8, 4)\nfor step in range(5):\n"
    "    h = (x @ w).exp()\n    h += 1\n    loss = head(h)\n    loss.backward()\n",
}
#: Drops root's override of file permissions, so root meets permissions as a user does.
AS_A_USER = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner",
             "--inh-caps", "-dac_override,-dac_read_search,-fowner"]  # fmt: skip
needs_setpriv = pytest.mark.skipif(
    shutil.which("setpriv") is None or os.geteuid() != 0, reason="needs root and setpriv"
)
needs_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")


def autoclone(
    *args: str, cwd: Path, prefix: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "autoclone", *args],
        cwd=cwd, capture_output=True, timeout=300, env={**os.environ, **(env or {})},
    )  # fmt: skip


def last_line(result: subprocess.CompletedProcess[bytes]) -> str:
    text = result.stderr.decode(errors="replace")
    assert "Traceback" not in text and "internal error" not in text, text
    return text.strip().splitlines()[-1]


def _git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


# ------------------------------------------------------------------ all files or none


def _two_files(tmp_path: Path) -> dict[str, bytes]:
    for name, text in TWO_FILES.items():
        (tmp_path / name).write_text(text)
    return {name: (tmp_path / name).read_bytes() for name in TWO_FILES}


def _strace(*inject: str) -> tuple[str, ...]:
    return ("strace", "-o", os.devnull, *inject)


@needs_strace
@pytest.mark.parametrize(
    ("syscall", "signame", "code", "word"),
    [("rename", "INT", 0, ""), ("ftruncate", "TERM", 143, "terminated"),
     ("fallocate", "INT", 130, "interrupted")],
)  # fmt: skip
def test_a_signal_inside_the_write_waits_until_both_files_are_written(
    tmp_path: Path, syscall: str, signame: str, code: int, word: str
) -> None:
    """repro half_patch_on_signal: the signal lands as the write phase starts."""
    before = _two_files(tmp_path)
    spec = f"inject={syscall}:signal=SIG{signame}:when=1"
    result = autoclone("fix", "main.py", cwd=tmp_path, prefix=_strace("-e", spec))
    assert result.returncode == code, result.stderr.decode()
    if word:
        assert last_line(result) == f"autoclone: {word}; the patch was written"
    assert all((tmp_path / name).read_bytes() != before[name] for name in TWO_FILES)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(TWO_FILES)


@needs_strace
def test_a_failure_inside_the_write_restores_every_file(tmp_path: Path) -> None:
    """The second file's fsync fails (injected EIO): the first is put back."""
    before = _two_files(tmp_path)
    inject = _strace("-e", "trace=fsync", "-e", "inject=fsync:error=EIO:when=2")
    result = autoclone("fix", "main.py", cwd=tmp_path, prefix=inject)
    assert result.returncode == 1
    assert "was not written" in last_line(result)
    assert {name: (tmp_path / name).read_bytes() for name in TWO_FILES} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(TWO_FILES)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_owner_group_mode_and_hard_links_survive_the_write(tmp_path: Path) -> None:
    """repro ownership_hardlink: the file is rewritten in place, not replaced."""
    script = tmp_path / "train.py"
    script.write_text(BROKEN)
    os.chown(script, 1234, 4321)
    os.chmod(script, 0o640)
    os.link(script, tmp_path / "other_link.py")
    before = os.stat(script)
    result = autoclone("fix", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    after = os.stat(script)
    assert (after.st_ino, after.st_uid, after.st_gid, after.st_mode, after.st_nlink) == (
        before.st_ino, 1234, 4321, before.st_mode, 2)  # fmt: skip
    assert (tmp_path / "other_link.py").read_text() == script.read_text() != BROKEN


# ------------------------------------------------------------------ no false success


def test_a_file_name_that_is_not_utf8_gets_a_patch_git_applies(tmp_path: Path) -> None:
    """repro nonutf8_filename_false_success."""
    name = os.fsdecode(b"caf\xe9.py")
    script = tmp_path / name
    script.write_text(BROKEN)
    _git_init(tmp_path)
    dry = autoclone("fix", name, "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0 and dry.stdout.startswith(b'diff --git "a/caf\\351.py"')
    subprocess.run(["git", "apply", "--check", "-"], input=dry.stdout, cwd=tmp_path, check=True)
    report = json.loads(autoclone("fix", name, "--format", "json", cwd=tmp_path).stdout)
    assert report["status"] == "fixed" and report["patch"]
    assert script.read_text() != BROKEN


# ------------------------------------------------------------------ trials run as python does


def test_a_relative_symlink_out_of_the_folder_still_resolves(tmp_path: Path) -> None:
    """repro relative_symlink_dangles: proj/data -> ../shared_data."""
    (tmp_path / "shared_data").mkdir()
    (tmp_path / "shared_data" / "scale.txt").write_text("2.0")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text(READS_DATA)
    (project / "data").symlink_to("../shared_data")
    result = autoclone("fix", "train.py", "--dry-run", cwd=project)
    assert result.returncode == 0, last_line(result)


def test_a_cwd_relative_path_above_the_root_names_the_root_to_pass(tmp_path: Path) -> None:
    """repro cwd_outside_root_data_path: scripts/train.py run from the repository root."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "scale.txt").write_text("2.0")
    (tmp_path / "scripts" / "train.py").write_text(READS_DATA)
    result = autoclone("fix", "scripts/train.py", "--dry-run", cwd=tmp_path)
    assert result.returncode == 1
    assert "rerun with --root ." in last_line(result)
    fixed = autoclone("fix", "scripts/train.py", "--dry-run", "--root", ".", cwd=tmp_path)
    assert fixed.returncode == 0 and b"+++ b/scripts/train.py" in fixed.stdout


def test_a_latin1_string_literal_reaches_the_trial_unchanged(tmp_path: Path) -> None:
    """repro latin1_literal_mojibake: the trial copy keeps the file's own encoding."""
    body = BROKEN.replace("EPOCHS = 20\n", 'EPOCHS = 20\nassert len("café") == 4\n')
    (tmp_path / "train.py").write_bytes(("# -*- coding: latin-1 -*-\n" + body).encode("latin-1"))
    result = autoclone("fix", "train.py", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, last_line(result)


@needs_setpriv
def test_a_read_only_script_can_be_repaired(tmp_path: Path) -> None:
    """repro readonly_script_internal_error: the trial writes its variants fresh."""
    script = tmp_path / "train.py"
    script.write_text(BROKEN)
    script.chmod(0o444)
    result = autoclone("fix", "train.py", "--dry-run", cwd=tmp_path, prefix=tuple(AS_A_USER))
    assert result.returncode == 0, last_line(result)
    assert script.read_text() == BROKEN


@needs_setpriv
def test_pipes_sockets_and_unreadable_files_are_skipped_with_a_note(tmp_path: Path) -> None:
    """repro uncopyable_entry_internal_error."""
    (tmp_path / "train.py").write_text(BROKEN)
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "secret.dat").write_text("secret")
    (tmp_path / "secret.dat").chmod(0)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        result = autoclone("fix", "train.py", "--dry-run", cwd=tmp_path, prefix=tuple(AS_A_USER))
    assert result.returncode == 0, last_line(result)
    note = next(line for line in result.stderr.decode().splitlines() if "run without" in line)
    assert "pipe (a named pipe)" in note and "sock (a socket)" in note
    assert "secret.dat (cannot be read" in note


def test_a_script_in_the_temp_directory_is_not_copied_into_itself(tmp_path: Path) -> None:
    """repro script_in_tmpdir_recursive_copy: TMPDIR is the script's own folder."""
    (tmp_path / "train.py").write_text(BROKEN)
    result = autoclone("fix", "train.py", "--dry-run", cwd=tmp_path, env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 0, last_line(result)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


def test_dataloader_workers_leave_no_temp_folders(tmp_path: Path) -> None:
    """repro pymp_tmp_leak: each trial has its own TMPDIR, removed with the trial."""
    loader = BROKEN.replace(
        "for step in range(EPOCHS):\n",
        "data = torch.utils.data.TensorDataset(torch.randn(8, 3))\n"
        "loader = torch.utils.data.DataLoader(data, batch_size=4, num_workers=2)\n"
        "for step in range(EPOCHS):\n    for (xb,) in loader:\n        pass\n",
    )
    project, temp = tmp_path / "project", tmp_path / "temp"
    project.mkdir()
    temp.mkdir()
    (project / "train.py").write_text(
        "if __name__ == '__main__':\n" + textwrap.indent(loader, "    ")
    )
    result = autoclone("fix", "train.py", "--dry-run", cwd=project, env={"TMPDIR": str(temp)})
    assert result.returncode == 0, last_line(result)
    assert list(temp.iterdir()) == []


# ------------------------------------------------------------------ paths


def test_dry_run_of_a_script_outside_the_cwd_is_refused_in_one_line(tmp_path: Path) -> None:
    """repro patch_outside_cwd: no diff git apply would refuse; writing still works."""
    (tmp_path / "other").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "other" / "train.py").write_text(BROKEN)
    dry = autoclone("fix", "../other/train.py", "--dry-run", cwd=tmp_path / "work")
    assert dry.returncode == 2 and dry.stdout == b""
    assert "outside the current directory" in last_line(dry)
    assert len(dry.stderr.decode().strip().splitlines()) == 1
    written = autoclone("fix", "../other/train.py", cwd=tmp_path / "work")
    assert written.returncode == 0, last_line(written)
    assert (tmp_path / "other" / "train.py").read_text() != BROKEN


def test_explain_names_files_relative_to_the_cwd(tmp_path: Path) -> None:
    """repro explain_paths_not_cwd_relative: run from the parent, with an absolute path."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "train.py").write_text(BROKEN)
    result = autoclone("explain", str(tmp_path / "proj" / "train.py"), cwd=tmp_path)
    assert result.returncode == 0, last_line(result)
    editor = [line for line in result.stdout.decode().splitlines() if ".py:" in line[:20]]
    assert editor and all(line.startswith("proj/train.py:") for line in editor)


# ------------------------------------------------------------------ one clear line


@pytest.mark.parametrize("value", ["inf", "1e30", "nan", "-1"])
def test_a_timeout_no_timer_can_wait_for_is_one_line_and_exit_2(tmp_path: Path, value: str) -> None:
    """repro timeout_inf_internal_error."""
    (tmp_path / "train.py").write_text(BROKEN)
    result = autoclone("fix", "train.py", "--format", "json", "--timeout", value, cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == b""
    assert "--timeout" in last_line(result)


def test_an_exit_without_a_message_says_its_code(tmp_path: Path) -> None:
    """repro sysexit_empty_message."""
    (tmp_path / "train.py").write_text(BROKEN.replace("EPOCHS = 20\n", "import sys\nsys.exit(3)\n"))
    result = autoclone("fix", "train.py", "--dry-run", cwd=tmp_path)
    assert result.returncode == 1
    assert "the script exited with code 3 before any autograd error" in last_line(result)


def test_an_invalid_notebook_is_refused_in_one_line(tmp_path: Path) -> None:
    """repro ipynb_executed_as_python (notebooks are supported now: tests/test_notebook.py;
    this one lacks the fields nbformat 4 requires)."""
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": BROKEN}
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": [cell], "nbformat": 4}))
    result = autoclone("fix", "nb.ipynb", "--dry-run", cwd=tmp_path)
    assert result.returncode == 2
    assert "not a valid nbformat 4 notebook" in last_line(result)


def test_a_syntax_error_without_a_line_has_no_none_location(tmp_path: Path) -> None:
    (tmp_path / "nul.py").write_bytes(b"import torch\nx = 1\x00\n")
    result = autoclone("fix", "nul.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "None" not in last_line(result) and "nul.py" in last_line(result)


@pytest.mark.parametrize(
    ("setting", "needle"),
    [("EPOCHS=abc", "is a number"), ("hidden=wide", "takes int"), ("act=tanh", "one of")],
)
def test_a_bad_set_value_is_bad_input(tmp_path: Path, setting: str, needle: str) -> None:
    options = (
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--hidden', type=int, default=4)\n"
        "p.add_argument('--act', choices=['relu', 'gelu'], default='relu')\nargs = p.parse_args()\n"
    )
    (tmp_path / "train.py").write_text(options + BROKEN)
    result = autoclone("fix", "train.py", "--set", setting, cwd=tmp_path)
    assert result.returncode == 2
    assert needle in last_line(result)


@pytest.mark.parametrize(
    "setting",
    [
        "RESUME=__import__('os').system('touch ran')",
        "BATCH=__import__('os').system('touch ran')",
        "RESUME=ckpt.pt",
        "BATCH=abc",
    ],
)
def test_a_set_value_is_data_never_code(tmp_path: Path, setting: str) -> None:
    """repro set_value_runs_as_code: a constant that is not a literal (``RESUME = None``,
    ``BATCH = int(os.environ...)``) takes only a literal; anything else is exit 2 in one
    line, and nothing of it runs."""
    head = "import os\nBATCH = int(os.environ.get('BATCH', '32'))\nRESUME = None\n"
    (tmp_path / "train.py").write_text(head + BROKEN)
    result = autoclone("fix", "train.py", "--dry-run", "--set", setting, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "not a literal value" in last_line(result)
    assert not (tmp_path / "ran").exists()


def test_a_literal_set_value_reaches_a_constant_that_is_not_one(tmp_path: Path) -> None:
    head = "import os\nRESUME = None\nassert RESUME == 'ckpt.pt', RESUME\n"
    (tmp_path / "train.py").write_text(head + BROKEN)
    result = autoclone("fix", "train.py", "--dry-run", "--set", "RESUME='ckpt.pt'", cwd=tmp_path)
    assert result.returncode == 0, last_line(result)


def test_a_string_constant_takes_a_bare_word(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text('DEVICE = "cuda"\nassert DEVICE == "cpu"\n' + BROKEN)
    result = autoclone("fix", "train.py", "--dry-run", "--set", "DEVICE=cpu", cwd=tmp_path)
    assert result.returncode == 0, last_line(result)


def test_a_closed_stdout_is_refused_before_any_run(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(BROKEN)
    result = subprocess.run(
        f"{sys.executable} -m autoclone fix train.py --dry-run >&-",
        shell=True, cwd=tmp_path, capture_output=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2
    assert "stdout is closed" in last_line(result)
    assert (tmp_path / "train.py").read_text() == BROKEN


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(BROKEN)
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "autoclone", "fix", "train.py", "--dry-run"],
            cwd=tmp_path, stdout=full, stderr=subprocess.PIPE, timeout=300,
        )  # fmt: skip
    assert result.returncode == 2
    assert "cannot write the result to stdout" in last_line(result)
    assert "Exception ignored" not in result.stderr.decode()


def test_a_trial_cannot_write_the_users_large_files(tmp_path: Path) -> None:
    """Large files are hard-linked into trials from a private store, never from the
    user's folder: a script that rewrites one in place changes only the store."""
    big = tmp_path / "weights.bin"
    big.write_bytes(b"\1" * (2 << 20))
    (tmp_path / "train.py").write_text(
        "with open('weights.bin', 'r+b') as f:\n    f.write(b'\\0' * 16)\n" + BROKEN
    )
    result = autoclone("fix", "train.py", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, last_line(result)
    assert big.read_bytes() == b"\1" * (2 << 20)
    assert stat.S_IMODE(big.stat().st_mode) == 0o644


SPAWNED = """\
import torch, torch.nn as nn
import torch.multiprocessing as mp
def worker(rank):
    torch.manual_seed(rank)
    lin = nn.Linear(8, 1)
    x = torch.randn(32, 8)
    for epoch in range(3):
        y = torch.sigmoid(lin(x))
        y[y > 0.5] = 0
        y.sum().backward()
if __name__ == '__main__':
    mp.spawn(worker, nprocs=2)
"""


def test_an_error_in_a_spawned_worker_carries_its_message_and_line(tmp_path: Path) -> None:
    """repro mp_spawn_empty_error: ``mp.spawn`` re-raises a worker's error as text; the
    report gives the worker's message and blames the worker's line, not ``mp.spawn``."""
    (tmp_path / "train.py").write_text(SPAWNED)
    result = autoclone("explain", "train.py", "--format", "json", cwd=tmp_path)
    data = json.loads(result.stdout)
    assert "RuntimeError: one of the variables needed" in data["error"]["message"], data
    assert "train.py:10" in data["explanation"], data["explanation"]
