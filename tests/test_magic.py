"""``%load_ext autoclone`` / ``%autoclone`` in a real Jupyter kernel, driven by nbclient:
a training cell that fails in autograd is repaired as the kernel ran it, the patched
cell (from the ``set_next_input`` payload of ``--apply``) runs in a fresh kernel and
prints what a hand-fixed notebook prints. Plus the cell logic, without a kernel."""

from __future__ import annotations

import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from nbformat.v4 import new_code_cell, new_notebook

pytest.importorskip("ipykernel")
nbclient = pytest.importorskip("nbclient")

from autoclone import magic  # noqa: E402

DATA = """import torch
torch.manual_seed(0)
rows = [[float(v) for v in line.split(",")] for line in open("numbers.csv")]
x = torch.tensor(rows)
y = x.sum(dim=1, keepdim=True).sin()"""
MODEL = """w = torch.randn(4, 1, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)"""
TRAIN = """for step in range(3):
    h = torch.sigmoid(x @ w)
    h.mul_(2)
    loss = ((h - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")"""
HAND_FIXED = TRAIN.replace("h.mul_(2)", "h = h * 2")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kernel's working directory, with a data file read by a relative path; the
    kernel's and Jupyter's own files go to the test's folder, never the real $HOME."""
    homes = {"HOME": "home", "IPYTHONDIR": "ipython", "JUPYTER_DATA_DIR": "data",
             "JUPYTER_RUNTIME_DIR": "runtime", "JUPYTER_CONFIG_DIR": "config"}  # fmt: skip
    for var, sub in homes.items():
        (tmp_path / sub).mkdir()
        monkeypatch.setenv(var, str(tmp_path / sub))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    work = tmp_path / "work"
    work.mkdir()
    lines = [",".join(f"{((i * 7 + j * 3) % 11 - 5) / 5:.1f}" for j in range(4)) for i in range(16)]
    (work / "numbers.csv").write_text("\n".join(lines) + "\n")
    return work


def execute(cells: list[str], cwd: Path) -> tuple[list[Any], dict[int, Any]]:
    """Run the cells in a new kernel (errors do not stop it); the cells as executed and
    each execute_reply's payload, by cell index."""
    book = new_notebook(cells=[new_code_cell(source) for source in cells])
    payloads: dict[int, Any] = {}

    def replied(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        payloads[cell_index] = execute_reply["content"].get("payload", [])

    client = nbclient.NotebookClient(
        book, kernel_name="python3", allow_errors=True, timeout=180,
        resources={"metadata": {"path": str(cwd)}}, on_cell_executed=replied,
    )  # fmt: skip
    client.execute()
    return list(book.cells), payloads


def shown(cell: Any) -> str:
    """Everything a cell showed, as text (streams, and display data's text/plain)."""
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("display_data", "execute_result"):
            parts.append(out.data.get("text/plain", "") + "\n")
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}\n")
    return "".join(parts)


def test_a_failing_training_cell_is_repaired_in_the_kernel_and_applied(folder: Path) -> None:
    started = time.monotonic()
    cells, payloads = execute(
        [DATA, MODEL, TRAIN, "%load_ext autoclone\n%autoclone", "%autoclone --apply",
         "print('fine')", "%autoclone"],
        folder,
    )  # fmt: skip
    assert [c.outputs[0].output_type for c in cells[2:3]] == ["error"]  # the bug is real
    out = shown(cells[3])
    assert "autoclone: repairing cells [1], [2], [3]" in out
    assert re.search(r"^autoclone: fixed: ", out, re.M), out
    assert "Modified in place at cell [3], line 3 `h.mul_(2)`" in out, out
    assert "--- cell [3]\n+++ cell [3] (patched)" in out, out
    removed = [line for line in out.splitlines() if line.startswith("-    ")]
    added = [line for line in out.splitlines() if line.startswith("+    ")]
    assert removed == ["-    h.mul_(2)"] and len(added) == 1, out
    assert re.fullmatch(r"\+    h = (h\.mul\(2\)|h \* 2|2 \* h)", added[0]), added
    assert "Traceback" not in out
    page = cells[3].outputs[-1].data["text/html"]  # the same, with the diff coloured
    assert page.startswith("<pre>autoclone: fixed: ") and '">+    h = h' in page

    applied = shown(cells[4])  # the verified repair of the same cells, not run again
    assert "repairing" not in applied
    assert "autoclone: the patched cell [3] is in a new cell below, not run" in applied
    (payload,) = [p for p in payloads[4] if p["source"] == "set_next_input"]
    assert payload["replace"] is False
    new_cell = payload["text"]
    assert new_cell.startswith("# cell [3], patched by autoclone\n") and "mul_" not in new_cell
    assert [p for p in payloads[3] if p["source"] == "set_next_input"] == []
    assert shown(cells[6]).strip() == (
        "autoclone: the last cell run, [6], raised no error: nothing to repair (run the "
        "failing cell again, then %autoclone)"
    )

    again, _ = execute([DATA, MODEL, new_cell, DATA, MODEL, HAND_FIXED], folder)
    assert all(o.output_type == "stream" for c in again for o in c.outputs)
    patched, by_hand = shown(again[2]), shown(again[5])
    assert patched == by_hand and len(patched.splitlines()) == 3, (patched, by_hand)
    assert time.monotonic() - started < 60


def test_nothing_failed_and_a_bad_option_are_one_line_each(folder: Path) -> None:
    cells, _ = execute(
        ["%load_ext autoclone\n%autoclone", "x = 1", "%autoclone", "%autoclone --timeout 0",
         "%autoclone --frobnicate"],
        folder,
    )  # fmt: skip
    assert shown(cells[0]) == "autoclone: no cell has run in this kernel yet: nothing to repair\n"
    assert shown(cells[2]).startswith("autoclone: the last cell run, [2], raised no error")
    assert shown(cells[3]) == (
        "autoclone: error: --timeout must be a positive number of seconds, not 0\n"
    )
    assert shown(cells[4]).startswith("autoclone: error: unrecognized arguments: --frobnicate")
    assert all(len(shown(c).splitlines()) <= 1 for c in cells)


# --------------------------------------------------------------------------- no kernel


def _kernel(sources: list[str], raised: dict[int, bool]) -> magic.Kernel:
    """A shell as the magic reads it: the raw input history (the magic's own cell last)."""
    hist = SimpleNamespace(input_hist_raw=["", *sources, "%autoclone"])
    shell = SimpleNamespace(history_manager=hist, last_execution_result=None)
    return magic.Kernel(shell, raised=raised)


def test_cells_that_raised_earlier_and_autoclone_cells_are_left_out() -> None:
    kernel = _kernel(["import torch", "modle = 1", "%load_ext autoclone", "train()", "# x\n"],
                     {2: True, 3: False, 4: True, 5: False})  # fmt: skip
    cells, left_out = magic.program(kernel)  # type: ignore[misc]
    assert [c.count for c in cells] == [1, 4] and left_out == [2]
    assert magic.program(_kernel(["train()", "x"], {1: True, 2: False})) == (
        "autoclone: the last cell run, [2], raised no error: nothing to repair (run the "
        "failing cell again, then %autoclone)"
    )


def test_positions_are_told_as_execution_counts() -> None:
    cells = [magic.Cell(4, "a"), magic.Cell(9, "b")]
    text = f"at {magic.NAME} cell 2, line 3 and {magic.NAME}.py"
    assert magic.in_counts(text, cells) == "at cell [9], line 3 and the cells"
    assert magic.ours(magic.Cell(1, "%reload_ext autoclone\n\n%autoclone --apply  # go"))
    assert not magic.ours(magic.Cell(1, "%autoclone\nx = 1"))
