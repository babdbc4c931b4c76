"""Does the traced run's reference equal the separate reference run's? (issue 12)

For every case whose first run meets a version conflict (fixtures, bench/large,
bench/unseen), the first run goes on past the conflict with the saved values kept (the
tracer's copy-on-write) and the separate run under ``allow_mutation_on_saved_tensors`` is
made as before; for every case whose first run meets a write autograd refuses in the
forward pass (a leaf, an output of ``unbind``, a view made under ``no_grad``), a fork of
the first run computes the failing step with grad off (``autoclone.child_fork``) and the
separate forward-reference run is made as before. The table says whether the two
references (kind, losses, gradient checksums, backward calls) are equal, and what each run
cost (the traced run's seconds include its fork's).

    OMP_NUM_THREADS=1 python bench/traced_reference.py [name-prefix ...]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autoclone import child_fork, references  # noqa: E402
from autoclone import classify as cls  # noqa: E402
from autoclone.diagnose import diagnose  # noqa: E402
from autoclone.fixes.base import SAME_NUMBERS  # noqa: E402
from autoclone.oracle import Reference  # noqa: E402
from autoclone.session import (  # noqa: E402
    BadInput,
    Options,
    first_run,
    load_project,
    make_runner,
)


def cases(prefixes: list[str]) -> list[Path]:
    found = []
    for folder in ("fixtures", "bench/large", "bench/unseen"):
        for case in sorted((ROOT / folder).iterdir()):
            expected = case / "expected.json"
            if not (case / "input.py").is_file() or not expected.is_file():
                continue
            if json.loads(expected.read_text()).get("launcher"):
                continue
            if not prefixes or any(case.name.startswith(p) for p in prefixes):
                found.append(case)
    return found


def both(
    case: Path, steps: int = 3
) -> tuple[Reference | str | None, Reference | str, float, float]:
    """The traced run's reference and the separate run's, with each run's seconds."""
    args = json.loads((case / "expected.json").read_text()).get("args", [])
    options = Options(script=case / "input.py", steps=steps, args=tuple(args), cwd=case)
    try:
        project = load_project(options)
    except BadInput:
        return None, "", 0.0, 0.0
    runner = make_runner(options, project)
    try:
        start = time.monotonic()
        first = first_run(project, runner, options, lambda m: None, past_conflict=True)
        traced_seconds = time.monotonic() - start
        at, traced = references.past_conflict(first, steps)
        found = diagnose(at, project.sources)
        calls = (at.backward, at.backward + steps)
        if found.error_class in child_fork.REFUSALS and at.forward is not None:
            traced = references.compute(SAME_NUMBERS, found, calls, project, runner,
                                        lambda m: None, forward=at.forward)[0]  # fmt: skip
        elif found.error_class != cls.INPLACE_VERSION:
            return None, "", traced_seconds, 0.0
        start = time.monotonic()
        separate, _ = references.compute(SAME_NUMBERS, found, calls, project, runner,
                                         lambda m: None)  # fmt: skip
        return traced, separate, traced_seconds, time.monotonic() - start
    finally:
        runner.close()


def main() -> None:
    print("| case | traced reference | separate reference | equal | traced run (s) | "
          "reference run (s) |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- |")
    equal = total = 0
    for case in cases(sys.argv[1:]):
        traced, separate, t1, t2 = both(case)
        if traced is None and separate == "":
            continue
        total += 1
        same = traced == separate
        equal += same
        show = [r if isinstance(r, str) or r is None else f"{r.kind}, {len(r.grads)} calls"
                for r in (traced, separate)]  # fmt: skip
        print(f"| {case.name} | {show[0]} | {show[1]} | {'yes' if same else 'NO'} | "
              f"{t1:.2f} | {t2:.2f} |")  # fmt: skip
    print(f"\n{equal}/{total} equal")


if __name__ == "__main__":
    main()
