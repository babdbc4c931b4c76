"""Benchmark: cost of the autograd tracer per training step, on the fixtures' models.

Each fixture's expert fix (it runs without error) is run with EPOCHS=1 and EPOCHS=N,
plain and traced; the per-step time is the difference divided by N-1, so process start
and imports cancel out. One torch thread (OMP_NUM_THREADS=1), as on CI.

    OMP_NUM_THREADS=1 python bench/tracer_overhead.py [--epochs 200]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autoclone.child import LOCATE, PLAIN  # noqa: E402
from autoclone.codemods.overrides import apply_overrides, module_constants  # noqa: E402
from autoclone.trial import Runner, RunSpec  # noqa: E402

FIXTURES = ROOT / "fixtures"


def _seconds(runner: Runner, text: str, epochs: int, mode: str) -> float:
    source = apply_overrides(text, {"EPOCHS": str(epochs)})
    started = time.monotonic()
    result = runner.run(RunSpec({"input.py": source}, mode=mode))
    if result.status != "completed":
        raise RuntimeError(f"{mode} run ended with {result.status}: {result.stderr[-300:]}")
    return time.monotonic() - started


def _per_step(runner: Runner, text: str, epochs: int, mode: str) -> float:
    short = min(_seconds(runner, text, 1, mode) for _ in range(2))
    long = min(_seconds(runner, text, epochs, mode) for _ in range(2))
    return (long - short) / (epochs - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("cases", nargs="*", help="fixture names (default: all)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    print("| fixture | plain ms/step | traced ms/step | overhead |")
    print("|---|---|---|---|")
    for case in sorted(FIXTURES.iterdir()):
        expert = case / "expert.py"
        if not expert.is_file() or "EPOCHS" not in module_constants(expert.read_text()):
            continue
        if args.cases and case.name not in args.cases:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / case.name
            shutil.copytree(case, work)
            runner = Runner(root=work, script="input.py", timeout=600)
            text = expert.read_text()
            plain = _per_step(runner, text, args.epochs, PLAIN)
            traced = _per_step(runner, text, args.epochs, LOCATE)
        print(f"| {case.name} | {plain * 1e3:.2f} | {traced * 1e3:.2f} | {traced / plain:.2f}x |",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
