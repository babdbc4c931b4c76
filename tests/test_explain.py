"""``autoclone explain``: one traced run names the saving line and the writing line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _explain(case: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    work = tmp_path / case
    shutil.copytree(FIXTURES / case, work)
    return subprocess.run(
        [sys.executable, "-m", "autoclone", "explain", "input.py", *extra],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_explain_names_save_and_write_lines_for_editors(tmp_path: Path) -> None:
    result = _explain("exp_output_modified", tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Saved for backward at input.py:23 `uexp = u.exp()`: Exp keeps its output" in out
    assert "Modified in place at input.py:24" in out
    assert "input.py:23:1: note: tensor saved for backward here by Exp" in out
    assert "input.py:24:1: error: modified in place here" in out
    assert "not verified" in out
    assert "1 run(s)" in result.stderr


def test_explain_json_for_a_library_module_writing_in_place(tmp_path: Path) -> None:
    result = _explain("relu_inplace_after_sigmoid", tmp_path, "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["saved"] == ["input.py", 21] and report["mutation"] == ["input.py", 22]
    assert report["evidence"] == "tracer" and report["runs"] == 1
    assert "ReLU built at input.py:17 `self.act = nn.ReLU(inplace=True)`" in report["explanation"]


def test_explain_a_multi_output_view(tmp_path: Path) -> None:
    result = _explain("unbind_modified", tmp_path, "--format", "json")
    report = json.loads(result.stdout)
    assert report["error"]["class"] == "multi_output_view"
    assert report["view"] == ["input.py", 22] and report["mutation"] == ["input.py", 23]


def test_explain_names_the_read_inside_forward_of_a_carried_state(tmp_path: Path) -> None:
    """A carry is named where the loop reads it and where the read really is, inside the
    module's ``forward`` (issue 18: never only a caller's line)."""
    result = _explain("module_attribute_state", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "input.py:24 `loss = nn.functional.mse_loss(model(x), y)` used a value, read at " \
        "input.py:15 `out = x - 0.5 * self.avg`, whose graph was built" in result.stdout


def test_explain_reports_no_error_with_exit_0(tmp_path: Path) -> None:
    result = _explain("seed002_no_error", tmp_path)
    assert result.returncode == 0
    assert "no_error" in result.stderr


def _explain_source(tmp_path: Path, source: str) -> dict[str, object]:
    (tmp_path / "input.py").write_text(source)
    result = subprocess.run(
        [sys.executable, "-m", "autoclone", "explain", "input.py", "--format", "json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def test_a_fused_adam_gan_that_pytorch_runs_silently_is_warned_about(tmp_path: Path) -> None:
    """Fused Adam updates D's weights without bumping versions: no error, wrong gradients."""
    source = (FIXTURES / "gan_step_before_backward" / "input.py").read_text()
    fused = source.replace("lr=LR)", "lr=LR, fused=True)")
    assert fused != source
    report = _explain_source(tmp_path, fused)
    assert report["status"] == "no_error"
    assert (
        "input.py:25:1: warning: silent write into a tensor saved for backward"
        in report["diagnostics"]
    )
    assert "fused optimizer step (_fused_adam_)" in str(report["explanation"])
    assert "saved at input.py:20 `d_fake = D(fake)`" in str(report["explanation"])


def test_a_write_through_data_is_warned_about(tmp_path: Path) -> None:
    source = (
        "import torch\nw = torch.randn(4, requires_grad=True)\nfor step in range(3):\n"
        "    y = (w * w).sum()\n    w.data.mul_(0.99)\n    y.backward()\n"
    )
    report = _explain_source(tmp_path, source)
    assert report["diagnostics"] == [
        "input.py:5:1: warning: silent write into a tensor saved for backward"
    ]
    assert "`.data`" in str(report["explanation"])
