"""Candidate sites and their two renderings (patch and run-time switch)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autoclone.codemods.render import instrument_edits, patch_edits
from autoclone.codemods.sites import ARG, ASSIGN, INPLACE, OPERAND, SUBSCRIPT, find_sites
from autoclone.patch import SourceFile, apply_edits

SOURCE = textwrap.dedent(
    """\
    import torch
    import torch.nn.functional as F

    G = torch.zeros(4)


    def layer(h, lin, ranges):
        for s, e in ranges:
            h[s:e] = torch.tanh(lin(h[s:e]))
        y = (h * 2).sum() + h[0].sum()
        z = F.relu(h, inplace=True)
        h.add_(1)
        G[0] = 1
        x = h
        x += 1
        return y + z
    """
)


def _sites(source: str = SOURCE) -> dict[tuple[int, str, str], str]:
    return {(s.line, s.kind, s.target): s.code for s in find_sites(source, "m.py")}


def test_finds_each_kind_with_the_code_it_would_produce() -> None:
    sites = _sites()
    assert sites[(9, ARG, "h[s:e]")] == "h[s:e].clone()"  # one site per node: the argument
    assert sites[(9, INPLACE, "h")] == "h = h.clone()"
    assert (
        sites[(10, ASSIGN, "(h * 2).sum() + h[0].sum()")] == "((h * 2).sum() + h[0].sum()).clone()"
    )
    assert sites[(10, SUBSCRIPT, "h[0]")] == "h[0].clone()"
    assert sites[(10, OPERAND, "h")] == "h.clone()"
    assert sites[(11, INPLACE, "h")] == "h = h.clone()"  # inplace=True clones its input first
    assert sites[(12, INPLACE, "h")] == "h = h.clone()"
    assert sites[(15, INPLACE, "x")] == "x = x.clone()"


def test_never_rebinds_a_global_inside_a_function() -> None:
    """``G = G.clone()`` inside ``layer`` would make G local and raise UnboundLocalError."""
    assert not any(line == 13 for line, kind, _ in _sites() if kind == INPLACE)


def test_ids_are_stable_and_unique() -> None:
    first, second = find_sites(SOURCE, "m.py"), find_sites(SOURCE, "m.py")
    assert [s.id for s in first] == [s.id for s in second]
    assert len({s.id for s in first}) == len(first)


def _source_file(tmp_path: Path, text: str) -> SourceFile:
    path = tmp_path / "m.py"
    path.write_text(text)
    return SourceFile.read(path)


def test_patch_of_every_site_parses_and_inplace_goes_on_its_own_line(tmp_path: Path) -> None:
    src = _source_file(tmp_path, SOURCE)
    sites = find_sites(SOURCE, "m.py")
    patched = apply_edits(src, patch_edits(sites))
    compile(patched, "m.py", "exec")
    inplace = next(s for s in sites if s.kind == INPLACE and s.line == 12)
    one = apply_edits(src, patch_edits([inplace])).splitlines()
    assert one[11:13] == ["    h = h.clone()", "    h.add_(1)"]


def test_instrumentation_keeps_lines_and_behaviour(tmp_path: Path) -> None:
    """Disabled sites must not change what the program does, nor its line numbers."""
    program = textwrap.dedent(
        """\
        import builtins
        import torch
        builtins.__autoclone__ = lambda i, v: v
        a = torch.arange(6.0)
        b = a[1:3]
        b += 1  # writes through the view into a
        c = (a * 2).sum() + torch.exp(
            b
        ).sum()
        print(a.tolist(), float(c))
        """
    )
    src = _source_file(tmp_path, program)
    instrumented = apply_edits(src, instrument_edits(find_sites(program, "m.py")))
    assert instrumented.count("\n") == program.count("\n")
    assert "__autoclone__(" in instrumented
    run = [sys.executable, "-c"]
    original = subprocess.run([*run, program], capture_output=True, text=True, check=True)
    switched = subprocess.run([*run, instrumented], capture_output=True, text=True, check=True)
    assert (
        switched.stdout == original.stdout == "[0.0, 2.0, 3.0, 3.0, 4.0, 5.0] 61.47459411621094\n"
    )


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("y = (a + b)\n", "y = (a + b).clone()\n"),
        ("y = a + b\n", "y = (a + b).clone()\n"),
        ("f(g(x))\n", None),
    ],
)
def test_assign_and_nested_rendering(tmp_path: Path, code: str, expected: str | None) -> None:
    src = _source_file(tmp_path, code)
    sites = find_sites(code, "m.py")
    if expected is not None:
        assign = [s for s in sites if s.kind == ASSIGN]
        assert apply_edits(src, patch_edits(assign)) == expected
    compile(apply_edits(src, patch_edits(sites)), "m.py", "exec")
    compile(apply_edits(src, instrument_edits(sites)), "m.py", "exec")
