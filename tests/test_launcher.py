"""torchrun trials, for real: 2 gloo ranks on the CPU launched by ``torch.distributed.run``.

Each launch costs a few seconds (the launcher and every rank import torch), so there are
four: a repair end to end of a bug only rank 1 meets (three launches) and a hang. The
merge of the ranks' results and the noise filter are checked on made-up results.
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from autoclone import launcher as launching
from autoclone.classify import INPLACE_VERSION, classify
from autoclone.repair import repair
from autoclone.session import Options
from autoclone.trial import ErrorInfo, Runner, RunResult, RunSpec

#: Rank 1 sleeps for ever, rank 0 blocks inside a gloo all-reduce; each started a child.
HANG = textwrap.dedent(
    """\
    import os, subprocess, time
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = int(os.environ["RANK"])
    child = subprocess.Popen(["sleep", "300"])
    with open(os.path.join(PIDS, str(rank)), "w") as fh:
        fh.write(f"{os.getpid()} {os.getppid()} {child.pid}")
    if rank == 1:
        while True:
            time.sleep(1)
    dist.all_reduce(torch.ones(1))
    """
)

#: A DDP script whose bug only rank 1 meets: its shard is scaled, in place, after a sigmoid
#: that saved its output. Rank 0 is left waiting in gloo for a peer that died.
TRAIN = textwrap.dedent(
    """\
    import os
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 8)
            self.head = nn.Linear(8, 1)

        def forward(self, x, scale):
            h = torch.sigmoid(self.fc(x))
            if scale != 1.0:
                h *= scale
            return self.head(h).squeeze(1)


    dist.init_process_group("gloo")
    assert dist.get_world_size() == 2
    rank = int(os.environ["RANK"])
    torch.manual_seed(0)
    model = DDP(Net())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 4)[rank::2]
    scale = 2.0 if rank == 1 else 1.0
    for step in range(4):
        loss = model(x, scale).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()
    """
)


def test_a_bug_on_rank_one_only_is_repaired_and_verified_through_two_ranks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launches: list[list[RunResult]] = []
    merge = launching.merge

    def spy(ranks: Any, launcher_stderr: str = "") -> RunResult:
        launches.append(list(ranks))
        return merge(ranks, launcher_stderr)

    monkeypatch.setattr(launching, "merge", spy)
    (tmp_path / "train.py").write_text(TRAIN)
    report = repair(
        Options(tmp_path / "train.py", cwd=tmp_path, launcher="torchrun", nproc=2, timeout=60)
    )
    assert report.status == "fixed", report.summary
    assert report.error_class == INPLACE_VERSION  # rank 1's error, not rank 0's lost peer
    assert [edit.code for edit in report.edits] == ["h = h * scale"]
    assert report.diagnosis["saved"] == ["train.py", 15]
    assert report.diagnosis["mutation"] == ["train.py", 17]  # a line only rank 1 runs
    assert len(launches) == report.runs == 3
    rank0, rank1 = launches[0]  # the traced run
    assert rank1.status == "error" and rank1.backward == 0
    assert rank1.error is not None and classify(rank1.error.line) == INPLACE_VERSION
    assert rank0.status == "crash" or launching.peer_gone(rank0)  # killed, or lost its peer
    assert "Connection closed" not in merge(launches[0]).stderr
    # the patch, run on past its limit (RunSpec.run_on): to the script's end, or its time
    assert {rank.status for rank in launches[-1]} <= {"stopped", "completed"}


def _state(pid: str) -> str:
    """A process's state letter; "gone" once it no longer exists."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


def test_a_hanging_ddp_script_times_out_with_every_process_dead(
    tmp_path: Path, window: Path
) -> None:
    pids = window / "pids"
    pids.mkdir()
    (tmp_path / "train.py").write_text(f"PIDS = {str(pids)!r}\n" + HANG)
    runner = Runner(
        root=tmp_path, script="train.py", launcher="torchrun", nproc=2, warm=False, timeout=2.5
    )
    started = time.monotonic()
    try:
        result = runner.run(RunSpec({}))
    finally:
        runner.close()
    assert result.status == "timeout"
    assert time.monotonic() - started < 30
    # each rank, the launcher (their parent) and the children the ranks started
    left = {pid for rank in ("0", "1") for pid in (pids / rank).read_text().split()}
    assert len(left) == 5
    deadline = time.monotonic() + 5  # SIGKILLed processes take a moment to be torn down
    while time.monotonic() < deadline and any(_state(p) not in ("gone", "Z") for p in left):
        time.sleep(0.05)
    assert {p: _state(p) for p in left if _state(p) not in ("gone", "Z")} == {}


def _result(status: str, message: str = "", backward: int = 0) -> RunResult:
    error = ErrorInfo("RuntimeError", message) if message else None
    return RunResult(status, backward=backward, error=error, stderr=f"{status} {message}")


INPLACE = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [torch.FloatTensor [8, 1]] is at version 1; expected version 0 instead."
)
PEER = "[../gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:16545"


def test_the_merge_blames_the_rank_that_failed_first_hand() -> None:
    merged = launching.merge([_result("error", PEER), _result("error", INPLACE, 1)])
    assert merged.error is not None and merged.error.message == INPLACE
    killed = launching.merge([_result("crash"), _result("error", INPLACE, 2)])
    assert killed.backward == 2  # rank 0 was killed by the launcher after rank 1 failed
    both = launching.merge([_result("error", INPLACE, 0), _result("error", INPLACE, 1)])
    assert both.backward == 0  # the same bug everywhere: rank 0's
    other = launching.merge([_result("error", "ValueError: bad"), _result("error", INPLACE)])
    assert other.error is not None and other.error.message == INPLACE  # autograd first


def test_the_merge_of_ranks_that_did_not_fail_first_hand() -> None:
    stopped = launching.merge([_result("stopped", backward=3), _result("error", PEER)])
    assert stopped.status == "stopped" and stopped.backward == 3
    crashed = launching.merge([_result("error", PEER), _result("crash")], "launcher said")
    assert crashed.status == "crash" and crashed.stderr == "crash "
    assert launching.merge([_result("error", PEER), _result("error", PEER)]).status == "error"
    assert launching.merge([], "launcher said").stderr == "launcher said"


def test_distributed_noise_is_not_the_scripts_last_words() -> None:
    stderr = (
        "[Gloo] Rank 0 is connected to 1 peer ranks. Expected number of connected peer ranks is : 1"
        "\n"
        "usage: train.py [-h]\n"
        "[rank0]:[W1123 08:32:58.631000000 ProcessGroup.cpp:351] Warning: WARNING: "
        "destroy_process_group() was not called before program exit\n"
        "W1123 08:32:58.631000 15001 torch/distributed/elastic/multiprocessing/api.py:1028] x\n"
    )
    assert launching.quiet(stderr) == "usage: train.py [-h]"


@pytest.mark.parametrize(
    ("launcher", "nproc", "wrong"),
    [("torchrun", 2, None), ("none", 1, None), ("mpirun", 2, "--launcher mpirun"),
     ("torchrun", 0, "--nproc 0"), ("none", 2, "--nproc 2 needs --launcher torchrun")],
)  # fmt: skip
def test_launcher_options_are_checked(launcher: str, nproc: int, wrong: str | None) -> None:
    said = launching.check(launcher, nproc)
    assert (said is None) if wrong is None else (said is not None and said.startswith(wrong))


def test_commands_go_through_pytorchs_launcher() -> None:
    command = launching.command(2)
    assert "from autoclone.launcher import agent; agent()" in command
    assert {"--standalone", "--nproc-per-node=2", "--max-restarts=0"} <= set(command)
    assert os.path.basename(command[0]).startswith("python")
