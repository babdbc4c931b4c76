"""The first run's own reference (issue 12): a traced run that goes on past its version
conflict with the saved values kept computes exactly what the separate run under
``allow_mutation_on_saved_tensors`` computes, so a repair needs one run less.

A representative set of fixtures (a module's inplace=True, an in-place residual, a write
into an exp output, two files, a GPU script on the CPU, a second conflict that stops the
mutation-allowed run); ``bench/traced_reference.py`` checks every case.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autoclone import references
from autoclone.diagnose import diagnose
from autoclone.fixes.base import SAME_NUMBERS
from autoclone.oracle import FULL, PREFIX
from autoclone.repair import repair
from autoclone.session import Options, first_run, load_project, make_runner

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASES = ["sequential_relu_inplace", "exp_output_modified", "multi_file_block",
         "cuda_unconditional", "inplace_then_carried_state"]  # fmt: skip
STEPS = 3


@pytest.mark.parametrize("name", CASES)
def test_the_traced_run_computes_the_reference_run_s_numbers(name: str, tmp_path: Path) -> None:
    work = tmp_path / name
    shutil.copytree(FIXTURES / name, work)
    options = Options(script=work / "input.py", steps=STEPS, cwd=work)
    project = load_project(options)
    runner = make_runner(options, project)
    try:
        first = first_run(project, runner, options, lambda m: None, past_conflict=True)
        at, traced = references.past_conflict(first, STEPS)
        found = diagnose(at, project.sources)
        assert at.status == "error" and at.error is not None
        assert "modified by an inplace operation" in at.error.message
        separate, _ = references.compute(
            SAME_NUMBERS, found, (at.backward, at.backward + STEPS), project, runner,
            lambda m: None,
        )  # fmt: skip
    finally:
        runner.close()
    assert traced is not None and traced.kind in (FULL, PREFIX)
    assert traced == separate


def test_a_repair_of_a_version_error_takes_two_runs(tmp_path: Path) -> None:
    """The traced run and the verifying run: no reference run in between."""
    shutil.copytree(FIXTURES / "residual_after_relu", tmp_path / "case")
    said: list[str] = []
    options = Options(script=tmp_path / "case" / "input.py", cwd=tmp_path, progress=said.append)
    report = repair(options)
    assert report.status == "fixed" and report.runs == 2, said
    assert any("went on past the conflict" in line for line in said)
