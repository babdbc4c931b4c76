"""A write autograd refuses in the forward pass forks the traced run (``autoclone.child_fork``).

The fork computes the failing step's forward reference, so the repair of a leaf written by
hand, of an ``unbind`` output written in place, takes two runs of the script: the traced
one and the patched one. Real scripts, real torch: the fork's numbers equal the separate
reference run's, the fork prints nothing and changes nothing outside the trial's copy, and
a refusal the script catches itself gives no fork numbers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autoclone import classify as cls
from autoclone import isolation, references
from autoclone.diagnose import diagnose
from autoclone.fixes.base import SAME_NUMBERS
from autoclone.session import Options, Project, first_run, load_project, make_runner
from autoclone.trial import Runner, RunResult

#: A low-rank layer initialised in place on its parameters, with grad on.
INIT_WRITE = textwrap.dedent(
    """\
    import os
    import torch

    torch.manual_seed(0)


    class LowRank(torch.nn.Module):
        def __init__(self, n, r):
            super().__init__()
            self.u = torch.nn.Parameter(torch.empty(n, r))
            self.v = torch.nn.Parameter(torch.empty(r, n))
            self.u.normal_(0, 0.3)
            self.v.normal_(0, 0.3)

        def forward(self, x):
            return x @ self.u @ self.v


    print("start")
    model = LowRank(6, 2)
    if os.environ.get("OUT_DIR"):
        with open(os.path.join(os.environ["OUT_DIR"], "run.txt"), "w") as fh:
            fh.write("written by the script")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(32, 6)
    y = x.flip(1)
    for step in range(6):
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.6f}")
    """
)

#: A helper that tries an in-place scale and falls back where autograd refuses it, then a
#: clamp of a leaf the script does not catch.
CAUGHT_FIRST = textwrap.dedent(
    """\
    import torch

    torch.manual_seed(0)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)


    def scaled(t, s):
        try:
            return t.mul_(s)
        except RuntimeError:
            return t * s


    w2 = scaled(w, 0.5)
    x = torch.randn(40, 5)
    y = torch.randn(40, 3)
    opt = torch.optim.SGD([w, b], lr=0.05)
    for step in range(5):
        loss = ((x @ w2 + b - y) ** 2).mean()
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()
        b.clamp_(-0.1, 0.1)
        print(f"step {step} loss {loss.item():.6f}")
    """
)


def _first(folder: Path) -> tuple[RunResult, Project, Runner]:
    """The repair's first run of ``input.py``, the project and its runner."""
    options = Options(script=folder / "input.py", cwd=folder, steps=3)
    project = load_project(options)
    runner = make_runner(options, project)
    return first_run(project, runner, options, lambda m: None, past_conflict=True), project, runner


def _fix(folder: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "autoclone", "fix", "input.py", "--format", "json"]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300)


def test_the_forks_reference_is_the_separate_runs_and_the_repair_takes_two_runs(
    tmp_path: Path,
) -> None:
    (tmp_path / "input.py").write_text(INIT_WRITE)
    first, project, runner = _first(tmp_path)
    try:
        assert first.forward is not None and first.forward.status == "stopped"
        assert first.stdout.count("start") <= 1  # the fork printed nothing
        found = diagnose(first, project.sources)
        assert found.error_class == cls.LEAF_INPLACE
        calls = (first.backward, first.backward + 3)
        forked = references.compute(SAME_NUMBERS, found, calls, project, runner,
                                    lambda m: None, forward=first.forward)[0]  # fmt: skip
        separate = references.compute(SAME_NUMBERS, found, calls, project, runner,
                                      lambda m: None)[0]  # fmt: skip
        assert forked == separate and not isinstance(forked, str) and forked.losses
    finally:
        runner.close()
    done = _fix(tmp_path)
    report = json.loads(done.stdout)
    assert report["status"] == "fixed" and report["runs"] == 2, done.stderr
    run = subprocess.run([sys.executable, "input.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    losses = [float(line.split()[-1]) for line in run.stdout.splitlines() if "loss" in line]
    assert len(losses) == 6 and losses[-1] < losses[0]


@pytest.mark.skipif(bool(isolation.available()), reason="no namespaces here")
def test_what_the_fork_writes_outside_the_copy_is_never_written(tmp_path: Path) -> None:
    """Only the fork gets past the refused write to the script's file outside the project:
    after ``fix --dry-run`` the user's file is as it was, and the report names it."""
    project, out = tmp_path / "proj", tmp_path / "out"
    project.mkdir()
    out.mkdir()
    (project / "input.py").write_text(INIT_WRITE)
    (out / "run.txt").write_text("the user's own notes")
    done = subprocess.run([sys.executable, "-m", "autoclone", "fix", "input.py", "--dry-run",
                           "--format", "json"], cwd=project, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "OUT_DIR": str(out)})  # fmt: skip
    report = json.loads(done.stdout)
    assert report["status"] == "fixed", done.stderr
    assert (out / "run.txt").read_text() == "the user's own notes"
    assert str(out / "run.txt") in {entry["path"] for entry in report["outside"]}


def test_a_refusal_the_script_catches_gives_no_fork_numbers(tmp_path: Path) -> None:
    """The fork is made at the first refusal; the script caught it and failed at another.
    Those numbers are not that error's reference: the run keeps none, and the repair
    computes its reference by a run of its own."""
    (tmp_path / "input.py").write_text(CAUGHT_FIRST)
    first, project, runner = _first(tmp_path)
    runner.close()
    assert first.error is not None and "leaf Variable" in first.error.message
    assert first.backward == 1 and first.forward is None
    done = _fix(tmp_path)
    report = json.loads(done.stdout)
    assert report["status"] == "fixed", done.stderr
    assert "with torch.no_grad()" in (tmp_path / "input.py").read_text()


#: A reentrant checkpoint whose block adds into its input: the refusal comes out of
#: ``loss.backward()``, where the block runs again with grad.
CHECKPOINTED = textwrap.dedent(
    """\
    import torch
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    bias = torch.nn.Parameter(torch.zeros(4))
    lin = torch.nn.Linear(4, 4)


    def block(x):
        x += bias
        return lin(x)


    x = torch.randn(8, 4, requires_grad=True)
    loss = checkpoint(block, x, use_reentrant=True).pow(2).mean()
    loss.backward()
    print(loss.item())
    """
)


def test_a_refusal_out_of_a_backward_call_forks_nothing(tmp_path: Path) -> None:
    """The fork is made at the write, not at the backward call the refusal came out of:
    past that call the step is over, and the fork's numbers would be another step's."""
    (tmp_path / "input.py").write_text(CHECKPOINTED)
    first, _, runner = _first(tmp_path)
    runner.close()
    assert first.error is not None and "leaf Variable" in first.error.message
    assert first.forward is None
