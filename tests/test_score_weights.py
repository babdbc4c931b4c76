"""A log-probability weighted by a tensor with a graph is noted, in real torch; a detached
weight, a product of log-probabilities, a product without one and SAC's temperature (one
number from one leaf, trained through the product by design) are not; a per-sample weight
made from one leaf (a return less a learned scalar baseline) is. The watch
wraps torch globally, so it runs in a child process, as in a trial."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_SCRIPT = """\
import sys
import torch
from autoclone import score_weights
seen = score_weights.install(sys.argv[1])
torch.manual_seed(0)
logits = torch.randn(4, 3, requires_grad=True)
value = torch.randn(4, requires_grad=True) * 2
dist = torch.distributions.Categorical(logits=logits)
lp = torch.stack([dist.log_prob(dist.sample())])
weighted = lp * (1.0 - value)
constant = lp * (1.0 - value).detach()
squared = lp * lp
plain = logits * value[:, None]
log_alpha = torch.zeros((), requires_grad=True)
temperature = -log_alpha.exp() * (lp + 1.0)
b = torch.zeros((), requires_grad=True)
baseline = lp * (torch.ones(4) - b)
print(*(line for _, line in seen.lines))
"""


def test_a_log_probability_weighted_by_a_tensor_with_a_graph_is_noted(tmp_path: Path) -> None:
    script = tmp_path / "policy.py"
    script.write_text(_SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    # `weighted`, reached through a stack of log_probs, and `baseline`
    assert done.stdout.split() == ["10", "17"]
