"""A trial's output is capped on disk and read from its end (repro trial_output_unbounded)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

from autoclone import outputs
from autoclone.trial import Runner, RunSpec

FLOOD = "import sys\nchunk = 'x' * 65535 + '\\n'\nwhile True:\n    sys.stdout.write(chunk)\n"


def test_a_runaway_writer_keeps_only_head_and_tail_on_disk(tmp_path: Path) -> None:
    out = tmp_path / "stdout"
    with outputs.capped(tmp_path), open(out, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-c", FLOOD], stdout=sink)
        time.sleep(1.5)
        proc.kill()
        proc.wait()
    info = out.stat()
    assert info.st_size > 100 << 20, "the writer was too slow to show anything"
    assert info.st_blocks * 512 < info.st_size // 3  # the middle's blocks were freed
    with open(out, "rb") as fh:
        assert fh.read(10) == b"x" * 10
    shown = outputs.tail(out, 1000)
    assert shown.startswith("[autoclone: ") and "earlier bytes" in shown.splitlines()[0]
    assert shown.endswith("x\n") and len(shown) < 1100


def test_a_huge_stderr_is_read_from_its_end_and_the_error_still_found(tmp_path: Path) -> None:
    """5 MB of log lines, then the autograd error: the result holds the error and at most
    the last 20,000 characters (not the whole file, decoded)."""
    script = textwrap.dedent(
        """\
        import sys, torch
        for step in range(5000):
            sys.stderr.write(f"step {step} " + "w" * 1000 + "\\n")
        w = torch.randn(3, requires_grad=True)
        y = w.exp()
        y += 1
        y.sum().backward()
        """
    )
    (tmp_path / "train.py").write_text(script)
    runner = Runner(root=tmp_path, script="train.py")
    try:
        result = runner.run(RunSpec({}))
    finally:
        runner.close()
    assert result.status == "error" and result.error is not None
    assert "modified by an inplace operation" in result.error.message
    assert len(result.stderr) < 20200
    assert "earlier bytes of this output are not shown" in result.stderr.splitlines()[0]
