"""The command contract that editors and scripts depend on, exercised through a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _cli import autoclone

BROKEN = textwrap.dedent(
    """\
    import torch

    EPOCHS = 50
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    for step in range(EPOCHS):
        u = 2 * w
        e = u.exp()
        loss = e.sum()
        e[0] = 0.0
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.6f}")
    """
)


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    script = tmp_path / "train.py"
    script.write_text(BROKEN)
    return script


def _one_clear_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["fix", "missing.py"], "missing.py"),
        (["fix", "train.py", "--nproc", "2"], "--launcher torchrun"),
        (["fix", "train.py", "--steps", "0"], "--steps"),
        (["fix", "train.py", "--set", "EPOCHS"], "NAME=VALUE"),
        (["fix", "train.py", "--no-such-option"], "no-such-option"),
        (["fix", "train.py", "--set", "NOPE=1"], "NOPE"),
        (["fix", "train.py", "--device", "tpu"], "tpu"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(broken: Path, args: list[str], needle: str) -> None:
    result = autoclone(*args, cwd=broken.parent)
    assert result.returncode == 2
    assert needle in _one_clear_line(result)
    assert result.stdout == ""


def test_syntax_error_is_bad_input_with_location(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("import torch\ndef f(:\n    pass\n")
    result = autoclone("fix", "bad.py", "--format", "json", cwd=tmp_path)
    assert result.returncode == 2
    assert json.loads(result.stdout)["status"] == "bad_input"
    assert "bad.py:2" in result.stderr and "Traceback" not in result.stderr


def test_dry_run_prints_only_a_diff_that_git_applies(broken: Path) -> None:
    before = broken.read_bytes()
    result = autoclone("fix", "train.py", "--dry-run", cwd=broken.parent)
    assert result.returncode == 0, result.stderr
    assert broken.read_bytes() == before
    assert result.stdout.startswith("diff --git a/train.py b/train.py\n")
    assert "Saved for backward at train.py:9" in result.stderr
    subprocess.run(
        ["git", "apply", "--check", "-"],
        input=result.stdout,
        text=True,
        cwd=broken.parent,
        check=True,
    )
    subprocess.run(
        ["patch", "-p1", "--dry-run"],
        input=result.stdout,
        text=True,
        cwd=broken.parent,
        check=True,
        capture_output=True,
    )


def test_fix_writes_the_verified_patch_and_json_reports_it(broken: Path) -> None:
    result = autoclone("fix", "train.py", "--format", "json", cwd=broken.parent)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "fixed"
    assert report["error"]["class"] == "inplace_version"
    assert set(report) >= {"patch", "edits", "runs", "candidates", "seconds", "explanation"}
    assert report["runs"] >= 2 and report["candidates"] > 0  # traced, then the patched run
    assert [e["line"] for e in report["edits"]] in ([9], [11])
    rerun = subprocess.run(
        [sys.executable, "train.py"], cwd=broken.parent, capture_output=True, text=True, timeout=120
    )
    assert rerun.returncode == 0 and rerun.stdout.count("\n") == 50


def test_script_arguments_after_double_dash_reach_the_script(tmp_path: Path) -> None:
    script = tmp_path / "args.py"
    script.write_text("import sys\nassert sys.argv[1:] == ['--lr', '0.5'], sys.argv\n")
    result = autoclone("fix", "args.py", "--format", "json", "--", "--lr", "0.5", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "no_error"


def test_cuda_without_a_device_is_refused(broken: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = autoclone("fix", "train.py", "--device", "cuda", cwd=broken.parent)
    assert result.returncode == 2
    assert "CUDA" in _one_clear_line(result)


def test_not_autograd_error_exits_1_without_patch(tmp_path: Path) -> None:
    (tmp_path / "shape.py").write_text("import torch\ntorch.ones(2, 3) @ torch.ones(2, 3)\n")
    result = autoclone("fix", "shape.py", "--dry-run", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "not_autograd" in result.stderr


def test_an_autograd_refusal_no_kind_repairs_is_named_with_what_to_do(tmp_path: Path) -> None:
    """A NaN from ``sqrt`` at 0 under anomaly detection is autograd's, not "not an
    autograd error": the report names the class, the line whose gradient made the NaN
    and says where to clamp; exit 1."""
    (tmp_path / "nan.py").write_text(
        "import torch\n"
        "torch.autograd.set_detect_anomaly(True)\n"
        "x = torch.zeros(4, requires_grad=True)\n"
        "(x.sqrt() * 0).sum().backward()\n"
    )
    result = autoclone("fix", "nan.py", "--dry-run", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "unfixable: nan_gradient" in result.stderr and "clamp" in result.stderr
    assert "The NaN came from the gradient of Sqrt made at nan.py:4" in result.stderr


def test_set_overrides_a_constant_for_trials_but_never_reaches_the_patch(broken: Path) -> None:
    result = autoclone("fix", "train.py", "--dry-run", "--format", "json", "--set", "EPOCHS=4",
                       cwd=broken.parent)  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "fixed"
    assert "EPOCHS" not in report["patch"]
    assert report["steps"]["limit"] == 3  # fails at the first backward: 0 + K


def test_set_overrides_an_argparse_default(tmp_path: Path) -> None:
    script = tmp_path / "cli_args.py"
    script.write_text(
        "import argparse\nimport torch\n"
        "p = argparse.ArgumentParser()\np.add_argument('--hidden-size', type=int, default=7)\n"
        "a = p.parse_args()\nassert a.hidden_size == 3, a.hidden_size\n"
    )
    result = autoclone("fix", "cli_args.py", "--format", "json", "--set", "hidden_size=3",
                       cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "no_error"


@pytest.mark.parametrize(
    ("body", "error_class"),
    [
        (
            "w = torch.ones(3, requires_grad=True)\nloss = (w * w).sum()\n"
            "loss.backward()\nloss.backward()\n",
            "backward_twice",
        ),
        (
            "w = torch.ones(3, 4, requires_grad=True)\nx = torch.randn(5, 3)\n"
            "pred = (x @ w).argmax(dim=1).float()\nloss = (pred - 1.0).pow(2).mean()\n"
            "loss.backward()\n",
            "no_graph",
        ),
    ],
)
def test_errors_a_clone_cannot_repair_are_named_with_exit_1(
    tmp_path: Path, body: str, error_class: str
) -> None:
    (tmp_path / "other.py").write_text("import torch\n" + body)
    result = autoclone("fix", "other.py", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["status"] == "unfixable" and report["error"]["class"] == error_class
    assert error_class in result.stderr.strip().splitlines()[-1]
    assert report["explanation"] and report["patch"] == ""


def test_a_leaf_initialised_in_place_is_wrapped_in_no_grad(tmp_path: Path) -> None:
    (tmp_path / "init.py").write_text(
        "import torch\nw = torch.randn(3, requires_grad=True)\nw.mul_(0.1)\n"
        "for step in range(3):\n    (w * w).sum().backward()\n"
    )
    result = autoclone("fix", "init.py", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [(e["kind"], e["line"]) for e in report["edits"]] == [("no_grad", 3)]
    assert "with torch.no_grad():\n    w.mul_(0.1)\n" in (tmp_path / "init.py").read_text()


def test_dry_run_diff_of_a_latin1_file_applies_with_git(tmp_path: Path) -> None:
    """The diff carries each file's own bytes, so a non-UTF-8 file still takes it (its
    context lines hold latin-1 bytes that a UTF-8 diff would not match)."""
    body = BROKEN.replace("    e[0] = 0.0\n", "    # remis à zéro\n    e[0] = 0.0\n")
    source = "# -*- coding: latin-1 -*-\n" + body
    script = tmp_path / "train.py"
    script.write_bytes(source.encode("latin-1"))
    result = subprocess.run(
        [sys.executable, "-m", "autoclone", "fix", "train.py", "--dry-run"],
        cwd=tmp_path, capture_output=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert "remis à zéro".encode("latin-1") in result.stdout
    subprocess.run(["git", "apply", "-"], input=result.stdout, cwd=tmp_path, check=True)
    patched = script.read_bytes().decode("latin-1")
    assert "# remis à zéro" in patched and patched != source


def test_version_is_the_installed_package_version() -> None:
    from importlib.metadata import version

    result = subprocess.run(
        [sys.executable, "-m", "autoclone", "--version"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"autoclone {version('autoclone')}\n"


def test_fix_help_names_every_fix_kind_on_one_line_each() -> None:
    from autoclone.fixes import KINDS

    result = subprocess.run(
        [sys.executable, "-m", "autoclone", "fix", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for kind in KINDS:
        mine = [line for line in lines if line.split()[:1] == [kind.name]]
        assert len(mine) == 1, (kind.name, result.stdout)
        described = mine[0].split(None, 1)[1]
        assert 15 <= len(described) <= 130 and "``" not in described, mine[0]


def test_kind_summary_keeps_calls_and_drops_asides() -> None:
    from autoclone.cli import kind_summary

    doc = "``D(fake.detach())``: the forgotten detach. Two losses (one ``G(z)``) share it."
    assert kind_summary(doc) == "D(fake.detach()): the forgotten detach"
    doc = "An in-place write (``token += pos``, in a helper)\nmade out of place: more."
    assert kind_summary(doc) == "An in-place write made out of place"


def test_settings_in_pyproject_are_defaults_and_the_command_line_wins(broken: Path) -> None:
    """``[tool.autoclone]`` in the nearest pyproject.toml above the current folder."""
    (broken.parent / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.autoclone]\nsteps = 1\nset = { EPOCHS = "abc" }\n'
    )
    app = broken.parent / "app"  # the nearest pyproject.toml is the parent folder's
    app.mkdir()
    (app / "train.py").write_text(BROKEN)
    shown = autoclone("fix", "train.py", "--dry-run", "--format", "json", "--set", "EPOCHS=5",
                      cwd=app)  # fmt: skip
    report = json.loads(shown.stdout)
    assert shown.returncode == 0 and report["steps"]["k"] == 1, shown.stderr
    refused = autoclone("fix", "train.py", "--dry-run", cwd=app)  # the table's --set value
    assert refused.returncode == 2 and "EPOCHS" in refused.stderr
    chosen = autoclone("fix", "train.py", "--dry-run", "--format", "json", "--steps", "2",
                       "--set", "EPOCHS=5", cwd=app)  # fmt: skip
    assert json.loads(chosen.stdout)["steps"]["k"] == 2


def test_an_unknown_setting_in_pyproject_is_one_line_and_exit_2(broken: Path) -> None:
    (broken.parent / "pyproject.toml").write_text("[tool.autoclone]\nstep = 1\n")
    done = autoclone("fix", "train.py", "--dry-run", cwd=broken.parent)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"autoclone: error: {broken.parent / 'pyproject.toml'}: [tool.autoclone] has no "
        "setting 'step' (settings: allow-network, allow-outside-writes, budget, device, jobs, "
        "launcher, nproc, root, set, shrink, steps, timeout)"
    ]


def test_github_annotations_for_explain_and_check(broken: Path) -> None:
    """``--format github``: workflow commands GitHub shows on the pull request's lines."""
    folder = broken.parent / "src"
    folder.mkdir()
    broken.rename(folder / "train.py")
    (folder / "fine.py").write_text("import torch\nprint(torch.ones(2).sum().item())\n")
    explained = autoclone("explain", "src/train.py", "--format", "github", cwd=broken.parent)
    lines = explained.stdout.splitlines()
    assert "::error file=src/train.py,line=11,title=autoclone::modified in place here" in (
        lines[-1].split(": RuntimeError")[0]
    ), explained.stdout
    assert any(line.startswith("::notice file=src/train.py,line=9,") for line in lines)
    checked = autoclone("fix", "--check", "src", "--format", "github", cwd=broken.parent)
    assert checked.returncode == 1
    assert checked.stdout.splitlines() == [
        line for line in checked.stdout.splitlines() if line.startswith("::error file=src/")
    ]
    assert len(checked.stdout.splitlines()) == 1 and ",line=11," in checked.stdout
    refused = autoclone("fix", "src/train.py", "--format", "github", cwd=broken.parent)
    assert refused.returncode == 2 and "--check" in refused.stderr
