"""Where a policy gradient's weight is cut (``autoclone.estimate``), on a real GAE graph
stamped by the real tracer: the line that stacks the critic's values comes first (every
target made from it becomes a constant), and the critic's own output, which the value
loss trains through, is never offered. The tracer wraps torch globally, so the script
runs in a child process, as in a trial."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_SCRIPT = """\
import sys
import torch
from autoclone import estimate
from autoclone.trace_install import install
install(sys.argv[1])
torch.manual_seed(0)
critic = torch.nn.Linear(3, 1)
actor = torch.nn.Linear(3, 2)
obs = torch.randn(5, 3)
kept = [critic(o).squeeze(-1) for o in obs]
logp = torch.log_softmax(actor(obs), -1)[:, 0]
values = torch.stack(kept)
adv = torch.zeros(4)
run = torch.zeros(())
for t in reversed(range(4)):
    delta = 1.0 + 0.9 * values[t + 1] - values[t]
    run = delta + 0.8 * run
    adv[t] = run
returns = adv + values[:-1]
weight = adv * 2.0
loss = -(logp[:4] * weight).mean() + (returns - torch.stack(kept[:4])).pow(2).mean()
print(*(line for _, line in estimate.cuts(weight.grad_fn, [loss.grad_fn])))
"""


def test_the_cut_is_where_the_estimate_reads_the_values(tmp_path: Path) -> None:
    script = tmp_path / "gae.py"
    script.write_text(_SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    lines = [int(n) for n in done.stdout.split()]
    assert lines[0] == 12  # values = torch.stack(kept): before every step of the recursion
    assert 16 in lines  # delta: cuts the weight too, but leaves `returns` its graph
    assert 10 not in lines  # the critic's output: the value loss would lose the critic
