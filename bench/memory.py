"""Peak resident memory of a traced run against a plain run (issue 12: goal <= 1.2x).

The tracer keeps a record of every tensor autograd saved; this measures what that costs
at the largest scripts the project has. Each measurement is one trial in a fresh
interpreter (``Runner(warm=False)``), run from its own measuring process, so
``RUSAGE_CHILDREN``'s peak is that trial's alone. Two scripts per case: the original up
to its error (what the first, traced run of a repair does), and the expert's fix for
``--steps`` backward calls (whether records outlive the graphs they describe).

    OMP_NUM_THREADS=1 python bench/memory.py [--steps 30]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = [ROOT / "bench/large/wide_mlp", ROOT / "bench/large/many_sites",
         ROOT / "fixtures/large_transformer"]  # fmt: skip
MEASURE = """
import json, resource, sys
from pathlib import Path
from autoclone.trial import Runner, RunSpec
root, script, mode, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
past, timeout = int(sys.argv[5]), float(sys.argv[6])
runner = Runner(root=Path(root), script=script, warm=False, timeout=timeout)
result = runner.run(RunSpec({}, mode=mode, limit=limit or None, past_conflict=past))
runner.close()
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"peak_mb": peak / 1024, "status": result.status, "backward": result.backward}))
"""


def peak(
    folder: Path, script: str, mode: str, limit: int, past: int = 0, timeout: float = 600
) -> dict[str, object]:
    """One trial's peak in a fresh interpreter (``past``: backward calls past a conflict)."""
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(folder), script, mode, str(limit), str(past),
         str(timeout)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def expert_folder(case: Path) -> Path | None:
    return case if (case / "expert.py").is_file() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    print("| case | script | backward calls | plain (MB) | traced (MB) | traced / plain |")
    print("| --- | --- | --- | --- | --- | --- |")
    for case in CASES:
        scripts = [("input.py", 0)]
        if expert_folder(case):
            scripts.append(("expert.py", args.steps))
        for script, limit in scripts:
            plain = peak(case, script, "plain", limit)
            traced = peak(case, script, "locate", limit)
            ratio = float(traced["peak_mb"]) / float(plain["peak_mb"])  # type: ignore[arg-type]
            print(f"| {case.name} | {script} | {plain['backward']} | {plain['peak_mb']:.0f} | "
                  f"{traced['peak_mb']:.0f} | {ratio:.2f}x |")  # fmt: skip


if __name__ == "__main__":
    main()
