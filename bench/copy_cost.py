"""What a project folder with a large data folder costs per trial.

Runs a script that does nothing (``pass``) as trials, in a folder holding ``data/`` of
``--gigabytes`` GB, and in the same folder without it; the difference is what preparing
the trial's copy of the folder costs. Works with any version of ``autoclone.trial``
(``Runner(root, script).run(RunSpec({}))``), so the same command measures a checkout
before and after a change: ``PYTHONPATH=/path/to/old/checkout python bench/copy_cost.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from autoclone.trial import Runner, RunSpec


def make_data(data: Path, gigabytes: float, files: int, small: int = 0) -> None:
    """Random (incompressible) shards, written once and reused between measurements,
    and ``small`` files of 4 KiB (a folder of many little samples)."""
    data.mkdir(parents=True, exist_ok=True)
    if small:
        (data / "small").mkdir(exist_ok=True)
        for index in range(small):
            (data / "small" / f"{index}.txt").write_bytes(b"x" * 4096)
    chunk = os.urandom(1 << 20)
    megabytes = int(gigabytes * 1024 / files)
    for index in range(files):
        shard = data / f"shard{index}.bin"
        if shard.exists() and shard.stat().st_size == megabytes << 20:
            continue
        with open(shard, "wb") as out:
            for _ in range(megabytes):
                out.write(chunk)


def trials(root: Path, count: int) -> list[float]:
    """Wall seconds of each trial, as the runner's caller sees them."""
    runner = Runner(root=root, script="train.py")
    seconds = []
    try:
        for _ in range(count):
            start = time.monotonic()
            result = runner.run(RunSpec({}))
            seconds.append(round(time.monotonic() - start, 3))
            assert result.status == "completed", result.stderr
    finally:
        runner.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=2.0)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--small", type=int, default=0, help="4 KiB files to add")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir(), "ac-bench-data"))
    args = parser.parse_args()
    make_data(args.data / "data", args.gigabytes, args.files, args.small)
    (args.data / "train.py").write_text("pass\n")
    with tempfile.TemporaryDirectory() as empty:
        Path(empty, "train.py").write_text("pass\n")
        without = trials(Path(empty), args.trials)
    with_data = trials(args.data, args.trials)
    extra = [round(a - b, 3) for a, b in zip(with_data, without, strict=True)]
    print(json.dumps({"gigabytes": args.gigabytes, "files": args.files, "small": args.small,
                      "with_data": with_data, "without": without, "extra": extra}))  # fmt: skip


if __name__ == "__main__":
    main()
