"""The pre-commit hook (``.pre-commit-hooks.yaml``) run by the real ``pre-commit``.

A user's repository is made in ``tmp_path`` with a script staged in it; ``pre-commit
try-repo <this checkout> autoclone-check --files <script>`` runs the hook as a user's
``.pre-commit-config.yaml`` naming this repository would (try-repo clones the checkout,
with its uncommitted changes, and reads the hooks file from the clone). It must fail on a
script with an autograd error, naming the line, and pass on one without. The hook is
``language: system``: pre-commit must install nothing, so it runs with every proxy
pointed at a closed local port and pip forbidden to reach an index, and must not say it
installed an environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / ".pre-commit-hooks.yaml"
FINE = "import torch\nprint(torch.ones(2).sum().item())\n"
#: No network: any download would go to the discard port of this machine and fail.
OFFLINE = {
    name: "http://127.0.0.1:9"
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
}


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _env(tmp_path: Path) -> dict[str, str]:
    """This interpreter's ``autoclone`` first on PATH (the user's environment), a
    pre-commit cache of the test's own, no network."""
    env = {**os.environ, **OFFLINE, "PIP_NO_INDEX": "1", "NO_PROXY": "", "no_proxy": ""}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env["OMP_NUM_THREADS"] = "1"
    return env


def _try_repo(script: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "autoclone-check",
         "--files", script],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_the_hook_is_a_system_hook_on_python_files() -> None:
    """What the hook promises: ``fix --check`` on the staged Python files, with the
    autoclone (and torch) already installed, run once for all of them."""
    (hook,) = yaml.safe_load(HOOKS.read_text())
    assert hook["id"] == "autoclone-check"
    assert hook["entry"] == "autoclone fix --check"
    assert hook["language"] == "system" and hook["types"] == ["python"]
    assert hook["require_serial"] is True and "additional_dependencies" not in hook


def test_the_hook_fails_on_an_autograd_error_and_passes_without(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    shutil.copy(ROOT / "fixtures" / "exp_output_modified" / "input.py", repo / "train.py")
    (repo / "fine.py").write_text(FINE)
    _git("add", "train.py", "fine.py", cwd=repo)
    env = _env(tmp_path)
    failed = _try_repo("train.py", repo, env)
    out = failed.stdout + failed.stderr
    assert failed.returncode == 1, out[-3000:]
    assert "autoclone check" in out and "Failed" in out and "- exit code: 1" in out
    assert "Modified in place at train.py:24 `uexp[:, 0] = " in out
    assert "check: 1 with an autograd error" in out
    assert (repo / "train.py").read_bytes() == (
        ROOT / "fixtures" / "exp_output_modified" / "input.py"
    ).read_bytes(), "--check must write nothing"
    passed = _try_repo("fine.py", repo, env)
    out = passed.stdout + passed.stderr
    assert passed.returncode == 0, out[-3000:]
    assert "autoclone check" in out and "Passed" in out
    assert "Installing environment" not in out + failed.stdout + failed.stderr
