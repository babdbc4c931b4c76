"""Shrinking: which numbers are knobs, how trial texts change, and the back-off.

The back-off is tested with injected run results (the search logic has no torch in it);
the end-to-end test repairs a real script whose sizes are tied together, with real torch.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from autoclone import report as rp
from autoclone.codemods.knobs import (
    COUNT,
    DATA,
    SIZE,
    Knob,
    find_knobs,
    kind_of,
    shrink_source,
)
from autoclone.repair import repair
from autoclone.session import Options
from autoclone.shrink import PROBE, SHRUNK_CAP, Plan, first_run
from autoclone.trial import ErrorInfo, RunResult

SOURCE = textwrap.dedent(
    """\
    import argparse
    import torch
    import torch.nn as nn

    EPOCHS = 2000
    HIDDEN_DIM = 1024
    N_SAMPLES = 4096
    LR = 0.1
    SMALL_BATCH = 4
    X = torch.randn(4096, 300)
    net = nn.Linear(300, 10)

    def train(width=512):
        for _ in range(1000):
            pass

    parser = argparse.ArgumentParser()
    parser.add_argument("--num-epochs", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.1)
    """
)


def test_names_suggest_knob_kinds() -> None:
    assert kind_of("EPOCHS") == kind_of("num_epochs") == kind_of("max_steps") == COUNT
    assert kind_of("hidden_dim") == kind_of("D_MODEL") == kind_of("batch_size") == SIZE
    assert kind_of("n_samples") == DATA
    assert kind_of("lr") is None and kind_of("epoch_time") is None


def test_knobs_are_module_level_literals_and_argparse_defaults() -> None:
    found = {k.name: (k.value, k.small, k.via) for k in find_knobs(SOURCE, "train.py")}
    assert found == {
        "EPOCHS": (2000, 2, "constant"),
        "HIDDEN_DIM": (1024, 8, "constant"),
        "N_SAMPLES": (4096, 16, "constant"),
        "literal 4096": (4096, 8, "literal"),
        "literal 300": (300, 8, "literal"),
        "num_epochs": (500, 2, "option"),
        "batch_size": (256, 8, "option"),
    }


def test_an_option_given_on_the_command_line_is_not_a_knob() -> None:
    names = {k.name for k in find_knobs(SOURCE, "train.py", ["--num-epochs", "3"])}
    assert "num_epochs" not in names and "batch_size" in names
    names = {k.name for k in find_knobs(SOURCE, "train.py", ["--batch-size=3"])}
    assert "batch_size" not in names


def test_shrunk_text_keeps_every_line_and_leaves_functions_alone() -> None:
    knobs = find_knobs(SOURCE, "train.py")
    shrunk = shrink_source(SOURCE, knobs)
    assert len(shrunk.splitlines()) == len(SOURCE.splitlines())
    assert "EPOCHS = 2\n" in shrunk and "HIDDEN_DIM = 8\n" in shrunk
    assert "torch.randn(8, 8)" in shrunk and "nn.Linear(8, 10)" in shrunk
    assert "range(1000)" in shrunk  # inside a function: not a knob
    assert "default=500" in shrunk  # argparse defaults change in the trial child, not the text
    assert Plan(tuple(knobs)).options() == {"num_epochs": "2", "batch_size": "8"}


def _knobs() -> list[Knob]:
    return find_knobs("STEPS = 100\nHIDDEN = 100\nBATCH_SIZE = 100\n", "s.py")


def _autograd_error() -> RunResult:
    message = "one of the variables needed for gradient computation has been modified by an "
    return RunResult("error", error=ErrorInfo("RuntimeError", message + "inplace operation"))


def test_back_off_restores_only_the_knob_the_error_needs() -> None:
    """HIDDEN is tied to another size: shrunk alone it gives a shape error."""
    plans: list[Plan] = []

    def attempt(plan: Plan, timeout: float | None) -> RunResult:
        plans.append(plan)
        if "HIDDEN" in {k.name for k in plan.knobs}:
            return RunResult("error", error=ErrorInfo("RuntimeError", "shape '[4, 16, 0]'"))
        return _autograd_error()

    result, plan = first_run(_knobs(), attempt, shrink=True, timeout=60, say=lambda m: None)
    assert result.status == "error"
    assert {k.name for k in plan.knobs} == {"STEPS", "BATCH_SIZE"}
    assert len(plans) <= 4


def test_a_fast_full_size_run_is_not_shrunk() -> None:
    timeouts: list[float | None] = []

    def attempt(plan: Plan, timeout: float | None) -> RunResult:
        timeouts.append(timeout)
        return _autograd_error()

    result, plan = first_run(_knobs(), attempt, shrink=None, timeout=60, say=lambda m: None)
    assert plan == Plan() and timeouts == [PROBE]


def test_a_slow_full_size_run_is_shrunk_after_the_probe() -> None:
    def attempt(plan: Plan, timeout: float | None) -> RunResult:
        return _autograd_error() if plan.knobs else RunResult("timeout")

    result, plan = first_run(_knobs(), attempt, shrink=None, timeout=60, say=lambda m: None)
    assert len(plan.knobs) == 3 and result.status == "error"


def test_no_shrink_runs_once_at_full_size() -> None:
    plans: list[Plan] = []

    def attempt(plan: Plan, timeout: float | None) -> RunResult:
        plans.append(plan)
        return RunResult("timeout")

    first_run(_knobs(), attempt, shrink=False, timeout=60, say=lambda m: None)
    assert plans == [Plan()]


TIED = textwrap.dedent(
    """\
    import torch

    EPOCHS = 300
    BATCH_SIZE = 64
    HIDDEN = 256
    HEADS = 16

    torch.manual_seed(0)
    w = torch.randn(HIDDEN, HIDDEN, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.01)
    for epoch in range(EPOCHS):
        x = torch.randn(BATCH_SIZE, HIDDEN)
        h = (x @ w).view(BATCH_SIZE, HEADS, HIDDEN // HEADS)
        s = torch.sigmoid(h)
        if epoch >= 1:
            s[:, 0] = 0.0
        loss = s.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("done")
    """
)


def test_tied_sizes_are_restored_and_the_patch_has_no_shrunk_value(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(TIED)
    report = repair(Options(script=script, cwd=tmp_path, timeout=60, shrink=True))
    assert report.status == rp.FIXED, report.summary
    assert {k["name"] for k in report.shrunk} == {"EPOCHS", "BATCH_SIZE"}
    assert script.read_text() == TIED
    added = [line for line in report.patch.splitlines() if line.startswith("+ ")]
    assert [line[1:].strip() for line in added] == ["s = s.clone()"]
    assert any("trials ran shrunk" in note for note in report.notes)


def test_a_shrunk_run_slower_than_the_cap_is_backed_off_not_kept() -> None:
    """A batch size shrunk without its dataset made a 7 s failure a 120 s timeout: a
    shrunk run gets the cap, and one that takes longer is treated as losing the error."""
    timeouts: list[tuple[frozenset[str], float | None]] = []

    def attempt(plan: Plan, timeout: float | None) -> RunResult:
        names = frozenset(k.name for k in plan.knobs)
        timeouts.append((names, timeout))
        if not plan.knobs:
            return RunResult("timeout")  # the probe
        return RunResult("timeout") if "BATCH_SIZE" in names else _autograd_error()

    result, plan = first_run(_knobs(), attempt, shrink=None, timeout=120, say=lambda m: None)
    assert result.status == "error" and "BATCH_SIZE" not in {k.name for k in plan.knobs}
    assert all(t == SHRUNK_CAP for names, t in timeouts[1:] if names)


def test_a_range_step_is_not_a_count_to_shrink() -> None:
    """``range(0, N, 256)``: 256 is a batch size over the data; shrunk alone it
    multiplies the steps. Only the stop of a range is a count."""
    knobs = find_knobs("for i in range(0, 8192, 256):\n    pass\nfor j in range(300):\n    pass\n",
                       "train.py")  # fmt: skip
    assert sorted(k.value for k in knobs) == [300, 8192]


def test_framework_run_lengths_are_knobs_wherever_the_call_is() -> None:
    """Lightning keeps the epochs in ``Trainer(max_epochs=...)`` and Hugging Face in
    ``TrainingArguments(...)``, built inside ``main()``: those are knobs too, shrunk in
    the trial's text; other keywords and other calls are left as they are."""
    source = (
        "import lightning.pytorch as pl\n"
        "from transformers import TrainingArguments\n"
        "def main():\n"
        "    trainer = pl.Trainer(max_epochs=50, accelerator='cpu', devices=1)\n"
        "    args = TrainingArguments(output_dir='out', num_train_epochs=20, max_steps=300,\n"
        "                             per_device_train_batch_size=64)\n"
        "    other = dict(max_epochs=50)\n"
    )
    knobs = find_knobs(source, "train.py")
    assert [(k.name, k.value, k.small, k.line) for k in knobs] == [
        ("Trainer(max_epochs)", 50, 2, 4),
        ("TrainingArguments(num_train_epochs)", 20, 2, 5),
        ("TrainingArguments(max_steps)", 300, 2, 5),
    ]
    assert knobs[0].shown == "Trainer(max_epochs=50->2)"
    shrunk = shrink_source(source, knobs).splitlines()
    assert shrunk[3] == "    trainer = pl.Trainer(max_epochs=2, accelerator='cpu', devices=1)"
    assert shrunk[4].endswith("(output_dir='out', num_train_epochs=2, max_steps=2,")
    assert shrunk[5:] == source.splitlines()[5:]
