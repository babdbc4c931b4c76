"""The same bug in another shape of code gets a patch that computes the expert's numbers.

A time-boxed slice of ``bench/metamorphic.py`` (which runs every case in every shape): a
few fixtures, one per family that a shape used to break, rewritten with the bench's own
transforms into ``def main()`` under a ``__main__`` guard, into a package of two files and
into a ``class Trainer`` whose ``fit`` reads the model, the optimizer and the carried loss
as ``self.`` attributes, repaired for real, the patch applied with git and run against the
transformed expert.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import _recorded
import pytest
from _cli import autoclone
from _warm import WarmPython

from autoclone.repair import repair
from autoclone.session import Options

ROOT = Path(__file__).resolve().parent.parent


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("metamorphic", ROOT / "bench/metamorphic.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
CASES = [
    ("ppo_old_log_probs", "main"),  # a value made before the update loop, read by each pass
    ("lstm_tuple_hidden", "module"),  # the model in a module, the loop in main()
    ("module_attribute_state", "main+module"),  # state on a module built in another file
    ("exp_output_modified", "main"),  # a version conflict, saved and written in forward
    ("accumulated_loss", "trainer"),  # a graph carried across steps in self.total_loss
    ("stateful_module_never_reset", "trainer"),  # the model's own reset, as self.model
    ("stateful_module_never_reset", "train_step"),  # ... and as train_step's argument
    ("accum_window_logged_trainer", "train_step"),  # the window's start value in the caller
    ("ppo_old_log_probs", "train_step"),  # a target read in a function each pass calls
    ("late_second_conflict", "train_step"),  # ``total.detach()`` of a float is not a try
    ("ema_prototypes_buffer_main", "trainer"),  # a buffer's update, cut where it is stored
    ("ema_prototypes_buffer_main", "module"),  # ... with the module in another file
    # the carry is the graph an earlier call freed, not an unfreed value read since
    ("critic_state_behind_shared_advantage", "train_step"),
    ("prehook_noise_inplace", "trainer"),  # a hook's write returned, the hook in a class
    ("hook_penalty_reset_main", "train_step"),  # the caller's reset, on the step's argument
    ("aae_disc_score_after_encoder_step", "trainer"),  # a score made again, as self.disc
]


def _run(folder: Path, warm: WarmPython) -> subprocess.CompletedProcess[str]:
    """``python input.py`` in ``folder``, forked from the warm interpreter."""
    return warm.run(["input.py"], cwd=folder, timeout=120)


@pytest.mark.parametrize(("case", "shape"), CASES, ids=[f"{c}-{s}" for c, s in CASES])
def test_a_fixture_in_another_shape_gets_a_patch_with_the_experts_numbers(
    case: str, shape: str, tmp_path: Path, warm_python: WarmPython
) -> None:
    moved = BENCH.variant(ROOT / "fixtures" / case, BENCH.TRANSFORMS[shape], tmp_path / "case")
    assert moved is not None, "the transform applies to this fixture"
    expert = tmp_path / "expert"
    shutil.copytree(moved, expert, ignore=shutil.ignore_patterns("expert", "expected.json"))
    shutil.copytree(moved / "expert", expert, dirs_exist_ok=True)
    wanted = _run(expert, warm_python)
    assert wanted.returncode == 0 and wanted.stdout == _original_output(case, tmp_path, warm_python)
    shutil.rmtree(moved / "expert")
    (moved / "expected.json").unlink()
    report = repair(Options(script=moved / "input.py", cwd=moved, timeout=60.0))
    assert report.status == "fixed", report.summary
    applied = subprocess.run(["git", "apply", "-"], input=report.patch, cwd=moved, text=True,
                             capture_output=True)  # fmt: skip
    assert applied.returncode == 0, applied.stderr
    patched = _run(moved, warm_python)
    assert patched.returncode == 0 and patched.stdout == wanted.stdout, patched.stderr[-500:]


def _original_output(case: str, tmp_path: Path, warm: WarmPython) -> str:
    """What the fixture's own expert prints (the transform must not change it): its record
    where one fits (``tests/_recorded.py``), a run of it otherwise."""
    recorded = _recorded.expert_stdout(ROOT / "fixtures" / case)
    if recorded is not None:
        return recorded
    folder = tmp_path / "original"
    shutil.copytree(ROOT / "fixtures" / case, folder)
    shutil.copy(folder / "expert.py", folder / "input.py")
    return _run(folder, warm).stdout


_TOP_LEVEL_CLOSURE = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(200, 5)
y = (x @ torch.tensor([1.5, -2.0, 0.5, 0.0, 1.0]) > 0).float()
model = nn.Linear(5, 1)
optimizer = torch.optim.LBFGS(model.parameters(), max_iter=10, line_search_fn="strong_wolfe")
logits = model(x).squeeze(-1)


def closure():
    optimizer.zero_grad()
    loss = F.binary_cross_entropy_with_logits(logits, y)
    loss.backward()
    return loss


for r in range(3):
    print(f"{optimizer.step(closure).item():.5f}")
"""


def test_a_top_level_closures_input_moves_into_it_as_a_methods_does(tmp_path: Path) -> None:
    """The L-BFGS closure of fixture ``lbfgs_closure_logits_outside_trainer`` at a script's
    top level instead of in a method: the value goes into the closure and its line goes,
    nothing else reading it; the patched script's L-BFGS makes progress, which
    ``retain_graph=True`` (every evaluation the first one's) never lets it."""
    script = tmp_path / "input.py"
    script.write_text(_TOP_LEVEL_CLOSURE)
    done = autoclone("fix", "input.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    patched = script.read_text()
    assert "    logits = model(x).squeeze(-1)\n    optimizer.zero_grad()" in patched
    assert "\nlogits = model(x)" not in patched
    run = subprocess.run([sys.executable, "input.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    losses = [float(v) for v in run.stdout.split()]
    assert losses[-1] < losses[0] / 2
