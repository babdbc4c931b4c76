"""Attribution that holds however deep the user's call stack is (issue 18).

The tracer keeps a few innermost user frames per read. Where the failing loss's read sits
deeper in the callers than the first loss's (a training function called through a
``main()``, a wrapper, a launcher function), the two stacks end at different callers and
used to seem to part at the outermost line (the module's call of ``main()``), so no cut
of the second loss's reads was offered. Real script, real torch: the imagined-critic
fixture called through three more functions gets the same patch as flat.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WRAPPERS = '''

def launch():
    return configure()


def configure():
    return run()


def run():
    return main()


if __name__ == "__main__":
    launch()
'''


def test_a_read_deep_in_the_callers_is_attributed_as_flat(tmp_path: Path) -> None:
    source = (ROOT / "fixtures/imagined_critic_two_reads_main/input.py").read_text()
    guard = 'if __name__ == "__main__":\n    main()\n'
    assert source.endswith(guard)
    (tmp_path / "input.py").write_text(source[: -len(guard)].rstrip() + "\n" + WRAPPERS)
    command = [sys.executable, "-m", "autoclone", "fix", "input.py", "--format", "json"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    assert report["status"] == "fixed", report["summary"]
    fixed = (tmp_path / "input.py").read_text()
    assert "critic_loss_fn(critic, states[:-1].detach(), returns.detach())" in fixed
    run = subprocess.run([sys.executable, "input.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    expert = (ROOT / "fixtures/imagined_critic_two_reads_main/expert.py").read_text()
    (tmp_path / "expert.py").write_text(expert)
    wanted = subprocess.run([sys.executable, "expert.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, check=True)  # fmt: skip
    assert run.stdout == wanted.stdout
