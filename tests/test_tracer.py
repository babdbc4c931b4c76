"""The tracer's records, checked in a fresh interpreter (``install`` changes the process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

_HARNESS = """
import json, os, sys
from autoclone.trace_install import install
tracer = install(os.path.dirname(os.path.abspath(sys.argv[1])) + os.sep)
facts = {}
try:
    exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), {"facts": facts, "tracer": tracer})
except RuntimeError as exc:
    facts["error"] = str(exc)
facts["diagnosis"] = tracer.diagnosis
facts["mutations"] = [[m.op, m.frames, m.module, m.module_frames, m.optimizer, m.through_view]
                      for m in tracer.mutations]
facts["warnings"] = tracer.warnings
facts["broken"] = tracer.broken
print(json.dumps(facts))
"""


def _trace(tmp_path: Path, source: str) -> dict:  # type: ignore[type-arg]
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    harness = tmp_path / "harness.py"
    harness.write_text(_HARNESS)
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, str(harness), str(script)],
        capture_output=True, text=True, timeout=120, cwd=root,
        env={"OMP_NUM_THREADS": "1", "PYTHONPATH": str(root), "PATH": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    facts: dict = json.loads(done.stdout.splitlines()[-1])  # type: ignore[type-arg]
    assert facts["broken"] == ""
    return facts


def test_saved_and_written_lines_and_the_library_module(tmp_path: Path) -> None:
    facts = _trace(
        tmp_path,
        """\
        import torch
        import torch.nn as nn

        act = nn.ReLU(inplace=True)
        a = torch.randn(4, requires_grad=True)
        for step in range(3):
            x = a.sigmoid()
            y = x * 2
            act(x)
            y.sum().backward()
        """,
    )
    saved, mutation = facts["diagnosis"]["saved"], facts["diagnosis"]["mutation"]
    assert saved["frames"][0][1] == 7 and saved["op"] == "sigmoid"
    assert saved["grad_fn"] == "SigmoidBackward0" and saved["shape"] == [4]
    assert mutation["frames"][0][1] == 9 and mutation["op"] == "relu"
    assert mutation["module"] == "ReLU" and mutation["module_frames"][0][1] == 4
    assert "is at version 1; expected version 0" in facts["error"]


def test_optimizer_steps_run_quietly_only_while_nothing_saved_is_alive(tmp_path: Path) -> None:
    facts = _trace(
        tmp_path,
        """\
        import torch

        w = torch.nn.Parameter(torch.randn(4))
        opt = torch.optim.SGD([w], lr=0.1)
        for step in range(3):  # the usual loop: the graph is gone before the step
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        facts["after_quiet_steps"] = len(tracer.mutations)
        loss = (w * w).sum()  # saves w
        loss.backward(retain_graph=True)
        opt.step()  # writes into the saved w: recorded, by the optimizer
        facts["mode_back"] = torch._C._len_torch_function_stack()
        loss.backward()
        """,
    )
    assert facts["after_quiet_steps"] == 0
    assert facts["mode_back"] == 1
    op, frames, _module, _built, optimizer, _view = facts["mutations"][-1]
    assert optimizer and frames[0][1] == 12
    assert facts["diagnosis"]["kind"] == "inplace_version"


def test_views_and_their_lines(tmp_path: Path) -> None:
    facts = _trace(
        tmp_path,
        """\
        import torch

        a = torch.randn(4, 2, requires_grad=True)
        b = a * 1
        u, v = b.unbind(1)
        u.mul_(2)
        """,
    )
    assert facts["diagnosis"]["kind"] == "multi_output_view"
    assert facts["diagnosis"]["view"]["frames"][0][1] == 5
    assert facts["diagnosis"]["mutation"]["frames"][0][1] == 6


# Each writes into a tensor autograd saved, so plain PyTorch fails at the first backward.
_CONFLICTS = {
    "exp_output": "h = torch.exp(x @ w)\n    h += 1\n    loss = (h @ v).sum()",
    "sigmoid_scaled": "h = torch.sigmoid(x @ w)\n    h *= 2.0\n    loss = (h @ v).pow(2).mean()",
    "relu_inplace": "h = torch.sigmoid(x @ w)\n    torch.relu_(h)\n    loss = (h @ v).pow(2).sum()",
    "slice_write": "h = torch.tanh(x @ w)\n    h[:, 0] = 0\n    loss = ((h @ v) ** 2).sum()",
    "step_before_backward": (
        "h = torch.tanh(x @ w)\n    loss = (h @ v).sum()\n    opt.zero_grad()\n"
        "    with torch.no_grad():\n        v.add_(1.0)"
    ),
}
_LOOP = """
import torch
torch.manual_seed(0)
x = torch.randn(8, 5)
w = torch.randn(5, 4, requires_grad=True)
v = torch.randn(4, 3, requires_grad=True)
opt = torch.optim.SGD([w, v], lr=0.05)
numbers = []
for step in range(4):
    {body}
    loss.backward()
    numbers.append([float(loss.detach()), float(w.grad.sum()), float(v.grad.sum())])
    opt.step()
    opt.zero_grad()
"""


def test_copy_on_write_computes_what_allow_mutation_computes(tmp_path: Path) -> None:
    """The traced run goes past the conflict with the numbers PyTorch's own
    ``allow_mutation_on_saved_tensors`` gives, and names the conflict as the plain run.
    Every case runs in one traced process (one process each would cost seconds each)."""
    loops = {name: _LOOP.format(body=body) for name, body in _CONFLICTS.items()}
    first = next(iter(loops.values()))
    plain = _trace(tmp_path, first)
    traced = _trace(tmp_path, "tracer.copy_on_write = tracer.in_backward = True" + first
                    + "facts['conflict'] = tracer.conflict\n")  # fmt: skip
    assert "error" in plain and "error" not in traced
    assert _no_pointers(traced["conflict"]["diagnosis"]) == _no_pointers(plain["diagnosis"])
    assert traced["conflict"]["message"] == plain["error"]
    every = "tracer.copy_on_write = tracer.in_backward = True\nfacts['numbers'] = {}\n" + "".join(
        f"exec({loop!r})\nfacts['numbers'][{name!r}] = numbers\n" for name, loop in loops.items()
    )
    assert _trace(tmp_path, every)["numbers"] == _allow_mutation(tmp_path, loops)


def _allow_mutation(tmp_path: Path, loops: dict[str, str]) -> dict[str, list[list[float]]]:
    script = tmp_path / "reference.py"
    script.write_text(
        "import json, torch\nout = {}\n"
        + "".join(
            "with torch.autograd.graph.allow_mutation_on_saved_tensors():\n"
            f"    exec({loop!r})\nout[{name!r}] = numbers\n"
            for name, loop in loops.items()
        )
        + "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120,
        env={"OMP_NUM_THREADS": "1", "PATH": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _no_pointers(value: object) -> object:
    """A diagnosis without storage addresses, which differ from process to process."""
    if isinstance(value, dict):
        return {k: _no_pointers(v) for k, v in value.items() if k != "storage"}
    return value


def test_a_module_whose_hash_needs_its_own_init_is_traced_as_written(tmp_path: Path) -> None:
    """torchmetrics' ``Metric`` (built by Lightning's ``self.log``) hashes attributes it sets
    after ``nn.Module.__init__``: the tracer's record of every module built must not call
    the module's ``__hash__`` (it raised AttributeError in the user's program)."""
    facts = _trace(
        tmp_path,
        """\
        import torch
        import torch.nn as nn

        class Metric(nn.Module):
            def __init__(self):
                super().__init__()
                self._defaults = {"total": 0.0}

            def __hash__(self):
                return hash(tuple(self._defaults))

        metric = Metric()
        facts["hash"] = hash(metric) == hash(("total",))
        a = torch.randn(4, requires_grad=True)
        x = a.sigmoid()
        x.mul_(2)
        x.sum().backward()
        """,
    )
    assert facts["hash"] is True
    assert facts["diagnosis"]["mutation"]["op"] == "mul_"
    assert "is at version 1; expected version 0" in facts["error"]


def test_a_carry_names_the_expression_that_read_the_older_graph(tmp_path: Path) -> None:
    facts = _trace(
        tmp_path,
        """\
        import torch

        w = torch.randn(3, requires_grad=True)
        def backward(loss):  # as the trial's backward wrapper calls the tracer
            tracer.backward_started([loss])
            try:
                loss.backward()
            except RuntimeError as exc:
                tracer.backward_failed([loss], str(exc))
                raise
            tracer.epoch += 1

        ALPHA, state, outputs = 0.5, torch.zeros(3), torch.zeros(3)
        for step in range(3):
            out = (w * 2).tanh()
            outputs[0:3] = out
            backward((out * state).sum() + out.sum())
            state = ALPHA * state + (1 - ALPHA) * outputs
        """,
    )
    carry = facts["diagnosis"]["carry"]
    assert carry["consumer_frames"][0][1] == 18
    assert carry["read"] == "(1 - ALPHA) * outputs"  # not ``state``, read on that line too
    assert carry["loss_term"] is False  # outputs feed the loss; they are not a term of it


def test_a_carried_running_mean_of_the_loss_is_a_term_of_the_loss(tmp_path: Path) -> None:
    facts = _trace(
        tmp_path,
        """\
        import torch

        def backward(loss):
            tracer.backward_started([loss])
            try:
                loss.backward()
            except RuntimeError as exc:
                tracer.backward_failed([loss], str(exc))
                raise
            tracer.epoch += 1

        w = torch.randn(3, requires_grad=True)
        mean = None
        for step in range(3):
            loss = ((w * 2).tanh() ** 2).sum()
            mean = loss if mean is None else 0.9 * mean + 0.1 * loss
            backward(loss / mean + 0.5 * loss)
        """,
    )
    carry = facts["diagnosis"]["carry"]
    assert carry["consumer_frames"][0][1] == 16 and carry["loss_term"] is True
