"""The trial runner: isolation, early stop, seeds and the process-group timeout, for real."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from autoclone.child import FORWARD_REFERENCE, REFERENCE
from autoclone.trial import Runner, RunSpec

TRAIN = textwrap.dedent(
    """\
    import random
    import torch

    w = torch.randn(4, requires_grad=True)
    print("first random", random.random(), float(torch.rand(1)))
    for step in range(1000):
        loss = (w * w).sum()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            w.grad = None
    print("finished")
    """
)


@pytest.fixture(params=[True, False], ids=["forked", "fresh"])
def warm(request: pytest.FixtureRequest) -> bool:
    """Every runner test runs twice: forked from the warm zygote and as a fresh process."""
    return bool(request.param)


def _runner(tmp_path: Path, source: str, **kwargs: object) -> Runner:
    (tmp_path / "train.py").write_text(source)
    return Runner(root=tmp_path, script="train.py", **kwargs)  # type: ignore[arg-type]


def test_stops_after_exactly_the_requested_backward_calls(tmp_path: Path, warm: bool) -> None:
    runner = _runner(tmp_path, TRAIN, warm=warm)
    result = runner.run(RunSpec({}, limit=5))
    assert result.status == "stopped"
    assert result.backward == 5 and len(result.losses) == 5 and len(result.grads) == 5
    assert result.losses[1] < result.losses[0]
    assert runner.runs == 1


CHECKPOINTED = textwrap.dedent(
    """\
    import torch
    from torch.utils.checkpoint import checkpoint
    torch.manual_seed(0)
    blocks = [torch.nn.Linear(4, 4) for _ in range(3)]
    opt = torch.optim.SGD([p for b in blocks for p in b.parameters()], lr=0.1)
    x = torch.randn(8, 4, requires_grad=True)
    for step in range(4):
        h = x
        for block in blocks:
            h = checkpoint(block, h, use_reentrant=True)
        loss = h.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    """
)


def test_a_reentrant_checkpoints_own_backward_calls_are_part_of_the_users(tmp_path: Path) -> None:
    """The reentrant checkpoint recomputes each block and calls ``torch.autograd.backward``
    inside the user's call: counted, they made an edit to ``use_reentrant=False`` look like a
    run that stopped short of the steps the original took (4 calls here, not 16)."""
    runner = _runner(tmp_path, CHECKPOINTED)
    try:
        result = runner.run(RunSpec({}))
    finally:
        runner.close()
    assert result.status == "completed", result.stderr
    assert result.backward == 4 and len(result.losses) == 4 and len(result.grads) == 4


def test_runs_are_reproducible_and_never_write_into_the_user_folder(
    tmp_path: Path, warm: bool
) -> None:
    source = TRAIN.replace('print("finished")', 'open("out.txt", "w").write("x")')
    runner = _runner(tmp_path, source, warm=warm)
    first, second = runner.run(RunSpec({})), runner.run(RunSpec({}))
    assert first.status == second.status == "completed"
    assert first.losses == second.losses and first.backward == 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


def test_timeout_kills_the_whole_process_group(tmp_path: Path, window: Path, warm: bool) -> None:
    pid_file = window / "child.pid"
    source = textwrap.dedent(
        f"""\
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        while True:
            time.sleep(0.05)
        """
    )
    # long enough for a fresh interpreter to import torch and start the child on a loaded
    # 2-core machine (3 s was not, in CI): the point is what a timeout leaves behind
    runner = _runner(tmp_path, source, timeout=3.0 if warm else 10.0, warm=warm)
    started = time.monotonic()
    result = runner.run(RunSpec({}))
    assert result.status == "timeout"
    assert runner.warm == warm
    assert time.monotonic() - started < 40
    pid = int(pid_file.read_text())
    time.sleep(0.2)
    assert not _alive(pid), "the script's own child process survived the timeout"


def _stdout_of(runner: Runner, source: str, window: Path) -> str:
    """Run once more with the script writing its stdout where the test can read it."""
    out = window / f"stdout-{runner.warm}.txt"
    wrapped = f"import sys\nsys.stdout = open({str(out)!r}, 'w')\n" + source
    runner.run(RunSpec({"train.py": wrapped}))
    return out.read_text()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def test_error_frames_are_relative_to_the_project(tmp_path: Path) -> None:
    source = "import torch\nx = torch.ones(2, requires_grad=True)\nx.add_(1)\n"
    result = _runner(tmp_path, source).run(RunSpec({}))
    assert result.status == "error" and result.error is not None
    assert result.error.frames[-1] == ("train.py", 3)
    assert "leaf Variable" in result.error.message


def test_reference_modes_compute_what_the_user_meant(tmp_path: Path) -> None:
    """Clone-on-mutation gives the values saved before the write; grad-off keeps aliasing."""
    source = textwrap.dedent(
        """\
        import torch
        t = torch.arange(3.0, requires_grad=True)
        for step in range(3):
            u = 2 * t
            e = u.exp()
            loss = e.sum()
            e[0] = 666.0
            loss.backward()
        """
    )
    runner = _runner(tmp_path, source)
    assert runner.run(RunSpec({})).status == "error"
    ref = runner.run(RunSpec({}, mode=REFERENCE, limit=3))
    assert ref.status == "stopped" and ref.backward == 3
    expected_grad_sum = sum(2 * 2.718281828459045 ** (2 * i) for i in range(3))
    assert abs(ref.grads[0][0] - expected_grad_sum) < 1e-3
    forward = runner.run(RunSpec({}, mode=FORWARD_REFERENCE, limit=0))
    assert forward.status == "stopped" and forward.losses == ref.losses[:1]
    late = _runner(
        tmp_path, source.replace("    e[0] = 666.0", "    if step == 2:\n        e[0] = 666.0")
    )
    first = late.run(RunSpec({}))
    assert first.status == "error" and first.backward == 2
    two = late.run(RunSpec({}, mode=FORWARD_REFERENCE, limit=2))
    assert two.status == "stopped" and two.backward == 2 and len(two.losses) == 3
    assert two.losses == ref.losses


def test_a_forked_trial_sees_exactly_what_a_fresh_process_sees(
    tmp_path: Path, window: Path
) -> None:
    """argv, __main__, cwd, environment, seeds and outputs are identical forked and fresh."""
    source = textwrap.dedent(
        """\
        import os, random, sys
        import numpy, torch
        print(sys.argv[1:], __name__, os.getcwd().endswith("project"), os.environ["TRIAL"])
        print(random.random(), numpy.random.rand(), torch.rand(2).tolist(), sys.path[0][-7:])
        print(torch.get_num_threads(), "torch.nn" in sys.modules, os.getpgid(0) == os.getpid())
        w = torch.randn(3, requires_grad=True)
        for step in range(3):
            loss = (w.exp() * torch.randn(3)).sum()
            loss.backward()
            print(loss.item(), w.grad.tolist())
        """
    )
    results = []
    for warm in (True, False):
        runner = _runner(tmp_path, source, argv=("--lr", "0.1"), env={"TRIAL": "x"}, warm=warm)
        result = runner.run(RunSpec({}))
        assert result.status == "completed", result.stderr
        results.append((result.losses, result.grads, _stdout_of(runner, source, window)))
        assert runner.warm == warm, "the zygote failed and the runner fell back to fresh runs"
        runner.close()
    assert results[0] == results[1]


def test_a_file_a_trial_rewrites_in_place_is_whole_again_for_the_next(tmp_path: Path) -> None:
    """Trials share the session's copy of each file through hard links; one trial's
    in-place write is undone before the next trial, and never reaches the user's file."""
    (tmp_path / "data.txt").write_text("original")
    source = textwrap.dedent(
        """\
        import os
        seen = open("data.txt").read()
        with open("data.txt", "r+") as f:
            f.write("CHANGED!")
        os.chmod("data.txt", 0o600)
        assert seen == "original", seen
        """
    )
    runner = _runner(tmp_path, source)
    try:
        results = [runner.run(RunSpec({})) for _ in range(3)]
    finally:
        runner.close()
    assert [r.status for r in results] == ["completed"] * 3, results[-1].stderr
    assert (tmp_path / "data.txt").read_text() == "original"


def test_symlinks_resolve_in_a_trial_as_in_the_users_folder(tmp_path: Path) -> None:
    """A relative link out of the folder becomes absolute; one inside stays inside."""
    project, shared = tmp_path / "project", tmp_path / "shared"
    project.mkdir()
    shared.mkdir()
    (shared / "x.txt").write_text("outside")
    (project / "y.txt").write_text("inside")
    (project / "out").symlink_to("../shared")
    (project / "in.txt").symlink_to("y.txt")
    source = "assert open('out/x.txt').read() + open('in.txt').read() == 'outsideinside'\n"
    runner = _runner(project, source)
    try:
        result = runner.run(RunSpec({}))
    finally:
        runner.close()
    assert result.status == "completed", result.stderr


def test_a_folder_the_temp_disk_cannot_hold_is_refused_before_copying(tmp_path: Path) -> None:
    from autoclone.snapshot import Snapshot, TooLarge

    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "data.bin").write_bytes(b"x" * 4096)
    with pytest.raises(TooLarge, match="smaller --root"):
        Snapshot.take(tmp_path / "project", tmp_path / "store", room=1000)
    assert not (tmp_path / "store").exists()
    assert Snapshot.take(tmp_path / "project", tmp_path / "store", room=5000).size == 4096


def test_a_trial_reports_its_own_peak_memory(tmp_path: Path, warm: bool) -> None:
    """The first run's peak is what caps trials at once (``session.jobs_for``): it must
    grow with what the script allocates, forked or fresh."""
    big = TRAIN.replace("import torch\n", "import torch\nblock = torch.ones(100_000_000)\n")
    (tmp_path / "small").mkdir()
    (tmp_path / "big").mkdir()
    small_run = _runner(tmp_path / "small", TRAIN, warm=warm)
    big_run = _runner(tmp_path / "big", big, warm=warm)
    small, large = small_run.run(RunSpec({}, limit=2)), big_run.run(RunSpec({}, limit=2))
    assert small.peak_mb > 0
    assert large.peak_mb - small.peak_mb > 300  # the 400 MB block


LATE = textwrap.dedent(
    """\
    import time
    import torch

    w = torch.randn(4, requires_grad=True)
    frozen = torch.randn(3, requires_grad=True)  # handed to the optimizer, never used
    opt = torch.optim.SGD([w, frozen], lr=0.1)
    for step in range(8):
        (w * w).sum().backward()
        opt.step()
    if MODE == "autograd":
        keep = (w * w).sum()
        keep.backward()
        keep.backward()
    elif MODE == "other":
        open("missing/file.txt")
    elif MODE == "hang":
        time.sleep(60)
    """
)


@pytest.mark.parametrize("mode", ["autograd", "other", "hang", "end"])
def test_a_run_goes_on_past_its_limit_to_meet_a_later_error(
    tmp_path: Path, warm: bool, mode: str
) -> None:
    """``run_on``: an autograd error after the limit is the run's verdict (the next
    conflict); another error is not (``within``), and a hang leaves the run as it stood
    at the limit, long before the trial's own timeout."""
    source = f"MODE = {mode!r}\n" + LATE
    runner = _runner(tmp_path, source, warm=warm, timeout=30)
    started = time.monotonic()
    raw = runner.run(RunSpec({}, limit=3, run_on=2.0))
    result = raw.within(3)
    opening = next(n for n, line in enumerate(source.splitlines(), 1) if "missing/" in line)
    if mode == "other":  # raised on a line the patch wrote: the patch's own doing
        assert raw.within(3, lambda: {("train.py", opening)}).status == "error"
    assert time.monotonic() - started < 20
    expected = {"autograd": "error", "other": "stopped", "hang": "stopped", "end": "completed"}
    assert result.status == expected[mode]
    assert result.backward == {"autograd": 9, "other": 8, "hang": 3, "end": 8}[mode]
    assert bool(result.late) == (mode == "other")
    assert result.reached == {"4": 1}  # w, every call; never `frozen`
    assert result.unreached == {"3": 1}


SLOW_LATE = textwrap.dedent(
    """
    import time

    import torch

    w = torch.randn(4, requires_grad=True)
    for step in range(14):
        (w * w).sum().backward()
        if step >= 3:
            time.sleep(0.15)  # the clock moves, the script's CPU time hardly does
    keep = (w * w).sum()
    keep.backward()
    keep.backward()
    """
)


def test_a_run_going_on_counts_the_scripts_cpu_time_not_the_clocks(
    tmp_path: Path, warm: bool
) -> None:
    """A later conflict the run meets idle must be met on a loaded machine too: ``run_on``
    is the script's CPU seconds (a PINN's second conflict at epoch 100 was missed under
    load, and the patch left it for the user). Here the clock runs 1.5 s past the limit
    while the script uses almost no CPU; the run still goes on to the error."""
    runner = _runner(tmp_path, SLOW_LATE, warm=warm, timeout=30)
    result = runner.run(RunSpec({}, limit=3, run_on=1.0)).within(3)
    assert result.status == "error"
    assert result.backward == 15


def test_a_fresh_trial_reports_its_own_peak_not_its_parents(tmp_path: Path) -> None:
    """Across exec, ``ru_maxrss`` keeps the spawning process's peak: a small trial started
    by a large process (a pytest worker, here holding 600 MB more) looked as large."""
    import resource

    import torch

    ballast = torch.ones(150_000_000)
    result = _runner(tmp_path, TRAIN, warm=False).run(RunSpec({}, limit=2))
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert 0 < result.peak_mb < parent - 400
    del ballast


def test_an_enabled_clone_of_a_tensor_above_the_limit_is_left_out(tmp_path: Path) -> None:
    """repro all_clones_trial_doubles_memory: the every-clone trial must not hold a second
    copy of a big tensor (a dataset kept in memory); small values are still cloned."""
    source = textwrap.dedent(
        """\
        import torch
        big, small = torch.ones(1 << 20), torch.ones(10)
        assert __autoclone__("s1", big) is big
        assert __autoclone__("s1", small) is not small
        assert __autoclone__("s2", small) is small
        """
    )
    runner = _runner(tmp_path, source, env={"AUTOCLONE_CLONE_LIMIT_MB": "1"})
    try:
        result = runner.run(RunSpec({}, sites=frozenset({"s1"})))
    finally:
        runner.close()
    assert result.status == "completed", result.stderr


def test_a_run_says_where_a_loss_took_labels_that_require_grad(tmp_path: Path) -> None:
    """``autoclone.labels``: the label-taking losses, called directly or through their
    modules, note the user's line when the target requires grad; a detached one is fine."""
    source = textwrap.dedent(
        """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        w = torch.randn(4, requires_grad=True)
        score = w * 2
        quality = torch.randn(4, requires_grad=True)
        F.binary_cross_entropy_with_logits(quality, score.sigmoid().detach()).backward()
        F.binary_cross_entropy_with_logits(quality, score.sigmoid()).backward()
        nn.KLDivLoss(reduction="sum")(quality.log_softmax(0), w.softmax(0)).backward()
        F.mse_loss(quality, w).backward()  # a regression: both sides may train
        with torch.no_grad():
            F.cross_entropy(quality[None], w.softmax(0)[None])
        """
    )
    result = _runner(tmp_path, source).run(RunSpec({}))
    assert result.status == "completed", result.stderr
    assert result.label_grads == (("train.py", 8), ("train.py", 9))


def test_a_hand_written_cross_entropy_notes_its_soft_labels_not_a_weight(tmp_path: Path) -> None:
    """``-(q * F.log_softmax(z, 1)).sum(1)``: ``q``, whose rows are distributions, is a
    loss's target (SwAV's codes, MixMatch's guesses); ASL's focusing weight, which only
    multiplies the log-probabilities on their way to the real targets, is not."""
    source = textwrap.dedent(
        """\
        import torch
        import torch.nn.functional as F
        z = torch.randn(5, 3, requires_grad=True)
        q = torch.softmax(torch.randn(5, 3, requires_grad=True), 1)
        (-(q * F.log_softmax(z, 1)).sum(1).mean()).backward()
        w = (1 - torch.softmax(z, 1)) ** 2
        (-(F.log_softmax(z, 1) * w).sum(1).mean()).backward()
        (-(q.detach() * F.log_softmax(z, 1)).sum(1).mean()).backward()
        """
    )
    result = _runner(tmp_path, source).run(RunSpec({}))
    assert result.status == "completed", result.stderr
    assert result.label_grads == (("train.py", 5),)


def test_a_patch_that_newly_trains_a_loss_on_its_labels_is_named() -> None:
    from autoclone.labels import new_label_gradients

    assert new_label_gradients([("a.py", 3)], [("a.py", 3)]) is None
    assert new_label_gradients([], []) is None
    why = new_label_gradients([("a.py", 3), ("b.py", 7)], [("a.py", 3)])
    assert why is not None and "b.py:7" in why and "labels" in why


def test_a_trial_keeps_online_loggers_and_hubs_offline(tmp_path: Path, window: Path) -> None:
    """A trial must not publish a run to a tracking service or download from a hub; what
    the user's environment sets itself is kept."""
    source = (
        "import os\n"
        "names = ['WANDB_MODE', 'HF_HUB_OFFLINE', 'TRANSFORMERS_OFFLINE', 'COMET_MODE']\n"
        "open(os.environ['OUT'], 'w').write(' '.join(os.environ.get(n, '-') for n in names))\n"
    )
    out = window / "env.txt"
    runner = _runner(tmp_path, source, env={"OUT": str(out), "COMET_MODE": "disabled"})
    assert runner.run(RunSpec({})).status == "completed"
    assert out.read_text() == "offline 1 1 disabled"


def _failing(tmp_path: Path, last: str) -> bool:
    """Whether a run that completes its backward calls and then fails at ``last`` is seen
    to have failed inside a backward call."""
    source = textwrap.dedent(
        """\
        import torch
        x = torch.randn(4)
        w = torch.randn(4, requires_grad=True)
        for step in range(3):
            (w * x).sum().backward()
        """
    ) + last + "\n"
    runner = _runner(tmp_path, source)
    try:
        result = runner.run(RunSpec({}))
    finally:
        runner.close()
    assert result.status == "error" and result.backward >= 3, result.stderr
    return result.failed_in_backward


def test_a_run_tells_a_failed_backward_call_from_a_failed_gradient_query(tmp_path: Path) -> None:
    """A failing ``torch.autograd.grad`` is not one of the script's steps: a repair of it
    need not reach a further backward call (a test step's saliency after the last step)."""
    assert _failing(tmp_path, "loss = (w * x).sum(); loss.backward(); loss.backward()")
    assert not _failing(tmp_path, "torch.autograd.grad((w * x).sum(), x)")


def test_a_run_says_when_grad_was_left_switched_off(tmp_path: Path) -> None:
    """A global ``torch.set_grad_enabled(False)`` is still in force when the error leaves
    the script; a ``with torch.no_grad():`` block the error leaves is not."""
    head = "import torch\nw = torch.randn(3, requires_grad=True)\n"
    runs = {
        "switch": head + "torch.set_grad_enabled(False)\n(w * 2).sum().backward()\n",
        "block": head + "with torch.no_grad():\n    (w * 2).sum().backward()\n",
    }
    seen = {}
    for name, source in runs.items():
        runner = _runner(tmp_path, source)
        try:
            result = runner.run(RunSpec({}))
        finally:
            runner.close()
        assert result.status == "error" and result.error is not None, result.stderr
        seen[name] = result.error.grad_off
    assert seen == {"switch": True, "block": False}
