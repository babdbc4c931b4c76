"""Benchmark: cost of the autograd tracer per training step, on the fixtures' models.

Each fixture's expert fix (it runs without error) runs with EPOCHS=N through the real
trial machinery (``autoclone.trial.Runner``, a fork of the warm zygote running
``autoclone.child``), plain and traced (LOCATE mode). One line added at the top of the
script appends the main thread's CPU time to a file before every backward call; a step
is one epoch, and its time is the median over the epochs after three warm-up ones. CPU time,
not wall time: the machine is shared, and wall time would count the time other processes
held the core. Each round runs plain then traced, back to back, so both see the same load;
the table gives the median over ``--reps`` rounds of each time and of the per-round ratio.
One torch thread (OMP_NUM_THREADS=1), as on CI.

    OMP_NUM_THREADS=1 python bench/tracer_overhead.py [--epochs 60] [--reps 5] [fixture ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autoclone.child import LOCATE, PLAIN  # noqa: E402
from autoclone.codemods.overrides import apply_overrides, module_constants  # noqa: E402
from autoclone.trial import Runner, RunSpec  # noqa: E402

FIXTURES = ROOT / "fixtures"
#: One line on top of the script: it wraps the backward entry point (which the child has
#: already wrapped) to append the time before each call to the file ``{path!r}``.
_PROBE = (
    "import time as _t, torch.autograd as _a; _a.backward = (lambda b, f: lambda *a, **k: "
    "(f.write(f'{{_t.thread_time()!r}}\\n'), f.flush(), b(*a, **k))[2])"
    "(_a.backward, open({path!r}, 'a'))\n"
)


def per_epoch(stamps: list[float], epochs: int, skip: int = 3) -> float:
    """Median time of one epoch, from the times of the backward calls."""
    every = max(1, round(len(stamps) / epochs))  # backward calls per epoch
    ends = stamps[skip * every :: every]
    if len(ends) < 3:
        raise RuntimeError(f"too few backward calls ({len(stamps)}) for {epochs} epochs")
    return statistics.median(b - a for a, b in zip(ends, ends[1:], strict=False))


def _seconds(runner: Runner, text: str, epochs: int, mode: str, stamps: Path) -> float:
    stamps.write_text("")
    source = _PROBE.format(path=str(stamps)) + apply_overrides(text, {"EPOCHS": str(epochs)})
    result = runner.run(RunSpec({"input.py": source}, mode=mode))
    if result.status != "completed":
        raise RuntimeError(f"{mode} run ended with {result.status}: {result.stderr[-300:]}")
    return per_epoch([float(line) for line in stamps.read_text().split()], epochs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("cases", nargs="*", help="fixture names (default: all)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    print("| fixture | untraced ms/step | traced ms/step | ratio |")
    print("|---|---|---|---|")
    ratios = []
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
            rounds: dict[str, list[float]] = {PLAIN: [], LOCATE: []}
            try:
                for _ in range(args.reps):
                    for mode in (PLAIN, LOCATE):
                        seconds = _seconds(runner, text, args.epochs, mode, Path(tmp) / "stamps")
                        rounds[mode].append(seconds)
            finally:
                runner.close()
        plain, traced = statistics.median(rounds[PLAIN]), statistics.median(rounds[LOCATE])
        ratio = statistics.median(t / p for p, t in zip(rounds[PLAIN], rounds[LOCATE], strict=True))
        ratios.append(ratio)
        print(f"| {case.name} | {plain * 1e3:.2f} | {traced * 1e3:.2f} | {ratio:.2f}x |",
              flush=True)  # fmt: skip
    if ratios:
        print(f"| **median** | | | **{statistics.median(ratios):.2f}x** |")


if __name__ == "__main__":
    main()
