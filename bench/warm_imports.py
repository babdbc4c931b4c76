"""What the script's own third-party imports cost per trial, warm and cold.

A trial is a fork of the warm interpreter (``autoclone.zygote``), which imports torch
once. Since issue 12 it also imports the modules the script imports at its top level
(never the project's own); ``AUTOCLONE_COLD_IMPORTS=1`` turns that off, which is the
state before. For each import set the same trivial training script (one backward call)
runs ``--trials`` times as trials; the first trial of each runner (which starts the
zygote) is not counted. Sets whose packages are not installed are skipped:
``pip install scikit-learn pandas`` to measure the heavy ones.

    OMP_NUM_THREADS=1 python bench/warm_imports.py [--trials 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
import time
from pathlib import Path

from autoclone.trial import Runner, RunSpec
from autoclone.zygote import COLD

SETS = {
    "torch only": [],
    "numpy, networkx": ["numpy", "networkx"],
    "pandas": ["pandas"],
    "scikit-learn, pandas": ["sklearn.linear_model", "pandas"],
}
STEP = "import torch\nw = torch.ones(3, requires_grad=True)\n(w * w).sum().backward()\n"


def per_trial(folder: Path, modules: list[str], cold: bool, trials: int) -> list[float]:
    """Wall seconds of each trial after the first, as the runner saw them."""
    imports = "".join(f"import {name}\n" for name in modules)
    (folder / "train.py").write_text(imports + STEP)
    runner = Runner(root=folder, script="train.py", env={COLD: "1"} if cold else {})
    try:
        runner.run(RunSpec({}))
        seconds = []
        for _ in range(trials):
            started = time.monotonic()
            result = runner.run(RunSpec({}))
            seconds.append(time.monotonic() - started)
            assert result.status == "completed", result.stderr[-500:]
        return seconds
    finally:
        runner.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    print("| imports | cold (s/trial) | warm (s/trial) | saved per trial |")
    print("| --- | --- | --- | --- |")
    for label, modules in SETS.items():
        if any(importlib.util.find_spec(m.split(".")[0]) is None for m in modules):
            print(f"| {label} | not installed | | |")
            continue
        with tempfile.TemporaryDirectory() as temp:
            cold = statistics.median(per_trial(Path(temp), modules, True, args.trials))
            warm = statistics.median(per_trial(Path(temp), modules, False, args.trials))
        print(f"| {label} | {cold:.3f} | {warm:.3f} | {cold - warm:.3f} |")


if __name__ == "__main__":
    main()
