"""What isolating a trial costs (issue 17: goal under 50 ms a trial).

Runs the same scripts as trials in each isolation mode, forked from the warm interpreter
and fresh, and prints the median wall time per trial: ``namespace`` (a user and mount
namespace, an overlay on every writable file system), ``guard`` (an audit hook only, as
where namespaces are missing) and ``allow`` (the audit hook recording, refusing nothing:
the baseline). Two scripts: one that does nothing, and one that writes a checkpoint and
a log outside its folder and reads them back (the copy-on-write path itself; not run
under ``guard``, which refuses it).

    OMP_NUM_THREADS=1 python bench/isolation_cost.py --trials 20
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from autoclone import isolation
from autoclone.trial import Runner, RunSpec

SCRIPTS = {
    "pass": "pass\n",
    "writes outside": (
        "import os, torch\n"
        "out = os.environ['BENCH_OUT']\n"
        "torch.save(torch.zeros(1000), os.path.join(out, 'ckpt.pt'))\n"
        "with open(os.path.join(out, 'log.csv'), 'a') as f:\n"
        "    f.write('1,2\\n')\n"
        "assert torch.load(os.path.join(out, 'ckpt.pt')).shape == (1000,)\n"
    ),
}


def measure(script: str, mode: str, warm: bool, trials: int, out: Path) -> float:
    """Median seconds of one trial, after one unmeasured trial (the zygote's start)."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "train.py").write_text(script)
        runner = Runner(root=Path(folder), script="train.py", warm=warm, isolate=mode,
                        env={"BENCH_OUT": str(out)})  # fmt: skip
        try:
            first = runner.run(RunSpec({}))
            assert first.status == "completed", first.stderr
            times = []
            for _ in range(trials):
                start = time.perf_counter()
                result = runner.run(RunSpec({}))
                times.append(time.perf_counter() - start)
                assert result.status == "completed", result.stderr
        finally:
            runner.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    if isolation.available():
        raise SystemExit(f"no namespaces here: {isolation.available()}")
    out = Path(tempfile.mkdtemp(prefix="bench-outside-"))
    print("| script | trial | allow (ms) | guard (ms) | namespace (ms) | namespace cost (ms) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, script in SCRIPTS.items():
        for warm in (True, False):
            ms = {}
            for mode in (isolation.ALLOW, isolation.GUARD, isolation.NAMESPACE):
                if mode == isolation.GUARD and name != "pass":
                    ms[mode] = float("nan")
                    continue
                ms[mode] = 1000 * measure(script, mode, warm, args.trials, out)
            cost = ms[isolation.NAMESPACE] - ms[isolation.ALLOW]
            print(f"| {name} | {'forked' if warm else 'fresh'} | {ms['allow']:.1f} | "
                  f"{ms['guard']:.1f} | {ms['namespace']:.1f} | {cost:+.1f} |")  # fmt: skip
    shutil.rmtree(out)


if __name__ == "__main__":
    main()
