"""Candidate sites and their two renderings (patch and run-time switch), the out-of-place
rewrites and where they rank, and the detach of a state held as one tuple."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from autoclone.classify import BACKWARD_TWICE, INPLACE_VERSION, LEAF_INPLACE
from autoclone.codemods.render import instrument_edits, patch_edits
from autoclone.codemods.rewrites import as_no_grad, as_tuple_detach, detach_after, retain_graph
from autoclone.codemods.sites import (
    ARG,
    ASSIGN,
    CLONE,
    DETACH,
    INPLACE,
    OPERAND,
    OUT_OF_PLACE,
    STATEMENT,
    SUBSCRIPT,
    VALUE,
    WRITE,
    find_sites,
)
from autoclone.diagnose import Diagnosis, priority
from autoclone.fixes.detach import detach_candidates
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


def test_an_entry_of_a_mapping_is_rebound_and_a_tensor_row_is_not() -> None:
    """``self.memory["M"] += kv``: a string key means a mapping (Infini-attention's memory),
    whose entry an assignment rebinds; ``h[0] += 1`` writes into ``h`` either way."""
    source = textwrap.dedent(
        """\
        class Layer:
            def update(self, kv, h):
                self.memory["M"] += kv
                h[0] += 1
        """
    )
    found = {(s.line, s.kind, s.fix): s.code for s in find_sites(source, "m.py")}
    assert found[(3, STATEMENT, OUT_OF_PLACE)] == 'self.memory["M"] = self.memory["M"] + kv'
    assert found[(3, INPLACE, CLONE)] == 'self.memory["M"] = self.memory["M"].clone()'
    assert (4, STATEMENT, OUT_OF_PLACE) not in found
    assert found[(4, INPLACE, CLONE)] == "h = h.clone()"


def test_never_rebinds_a_global_inside_a_function() -> None:
    """``G = G.clone()`` inside ``layer`` would make G local and raise UnboundLocalError."""
    assert not any(line == 13 for line, kind, _ in _sites() if kind == INPLACE)


def test_never_rebinds_a_loop_variable_that_stands_for_an_element() -> None:
    """``for p, v in zip(weights, dw): p.add_(v)`` changes the weights themselves; ``p =
    p.add(v)`` or ``p = p.clone()`` would rebind the loop variable and leave every weight
    as it was (DARTS's finite-difference perturbation silently gone). The write stays a
    site ``no_grad`` can wrap; a name the loop body binds itself is rebindable as before."""
    source = textwrap.dedent(
        """\
        def perturb(weights, dw, eps):
            for p, v in zip(weights, dw):
                p.add_(v, alpha=eps)
            for i, w in enumerate(weights):
                h = w * 2
                h += 1
                w.mul_(0.5)
        """
    )
    found = {(s.line, s.kind, s.target): s.fix for s in find_sites(source, "m.py")}
    assert not any(target in ("p", "w") and kind == STATEMENT for _, kind, target in found)
    assert found[(3, INPLACE, "p")] == found[(7, INPLACE, "w")] == WRITE  # no_grad may wrap
    assert found[(6, STATEMENT, "h")] == OUT_OF_PLACE and found[(6, INPLACE, "h")] == CLONE


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


# -- out-of-place rewrites -------------------------------------------------------------


def _rewritten(tmp_path: Path, code: str) -> str | None:
    """The source with its single out-of-place site applied, or None without one."""
    rewrites = [s for s in find_sites(code, "m.py") if s.fix == OUT_OF_PLACE]
    if not rewrites:
        return None
    assert len(rewrites) == 1
    assert rewrites[0].kind in (STATEMENT, VALUE)
    return apply_edits(_source_file(tmp_path, code), patch_edits(rewrites))


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("x += y\n", "x = x + y\n"),
        ("x  -=  lr * g\n", "x  = x -  lr * g\n"),
        ("x -= a - b\n", "x = x - (a - b)\n"),  # equal precedence: x - a - b rounds differently
        ("x *= a + b\n", "x = x * (a + b)\n"),
        ("x /= (var + EPS).sqrt()\n", "x = x / (var + EPS).sqrt()\n"),
        ("x **= 2 ** k\n", "x = x ** (2 ** k)\n"),
        ("x *= -s\n", "x = x * -s\n"),
        ("x @= w\n", "x = x @ w\n"),
        ("x *= (a +\n      b)\n", "x = x * (a +\n      b)\n"),
        ("x.add_(y, alpha=2)\n", "x = x.add(y, alpha=2)\n"),
        ("x.sub_(m).div_(s)  # standardise\n", "x = x.sub(m).div(s)  # standardise\n"),
        ("x.masked_fill_(mask, 0.0)\n", "x = x.masked_fill(mask, 0.0)\n"),
        ("x.clamp_(min=0).relu_()\n", "x = x.clamp(min=0).relu()\n"),
        ("torch.relu_(x)\n", "x = torch.relu(x)\n"),
        ("F.leaky_relu_(x, 0.1)\n", "x = F.leaky_relu(x, 0.1)\n"),
        ("a = 1; x += 2\n", "a = 1; x = x + 2\n"),
        ("class M:\n    def f(self):\n        self.h.mul_(2)\n",
         "class M:\n    def f(self):\n        self.h = self.h.mul(2)\n"),
        ("x.zero_()\n", None),  # no out-of-place twin
        ("x.bernoulli_(0.5)\n", None),  # bernoulli() reads x as probabilities
        ("x.view(-1).add_(1)\n", None),  # writes into x through a view: must stay a write
        # the result is used: the chain is read as a value, the write into x dropped (the
        # reference judges whether x is read again)
        ("y = x.add_(1)\n", "y = x.add(1)\n"),
        ("d = 2.0 * L.diagonal().log_().sum(-1)\n", "d = 2.0 * L.diagonal().log().sum(-1)\n"),
        ("d = x.sub_(m).div_(s) * 2\n", "d = x.sub(m).div(s) * 2\n"),
        ("x[0] += 1\n", None),  # the receiver is not a plain name
        # a list's numbered entry (Tacotron's parse_output): rebound; a tensor's row would
        # be written the same numbers
        ("outputs[0].masked_fill_(m, 0.0)\n", "outputs[0] = outputs[0].masked_fill(m, 0.0)\n"),
        ("a.b.add_(1)\n", None),
        ("self.relu_(x)\n", None),
        ("nn.init.zeros_(w)\n", None),
        ("G = 0\ndef f():\n    G.add_(1)\n", None),  # rebinding would make G local
    ],
)  # fmt: skip
def test_out_of_place_rewrites(tmp_path: Path, code: str, expected: str | None) -> None:
    assert _rewritten(tmp_path, code) == expected


def test_out_of_place_code_is_the_rewritten_statement() -> None:
    sites = [
        s for s in find_sites("x.sub_(m).div_(s)\nx *= a + b\n", "m.py") if s.fix == OUT_OF_PLACE
    ]
    assert [(s.line, s.target, s.code) for s in sites] == [
        (1, "x", "x = x.sub(m).div(s)"),
        (2, "x", "x = x * (a + b)"),
    ]


def test_out_of_place_switch_computes_what_the_rewrite_computes(tmp_path: Path) -> None:
    """Enabled, the run-time switch (a clone, then the original in-place statement) must
    give the numbers and the aliasing of the rewritten statement; disabled, the original's."""
    program = textwrap.dedent(
        """\
        import builtins, sys
        import torch
        ON = sys.argv[1:]
        builtins.__autoclone__ = lambda i, v: v.clone() if any(i.endswith(o) for o in ON) else v
        a = torch.arange(4.0)
        x = a
        x *= a + 1
        y = a[1:]
        y.sub_(1).div_(2)
        torch.relu_(x)
        print(a.tolist(), x.tolist(), y.tolist())
        """
    )
    src = _source_file(tmp_path, program)
    rewrites = [s for s in find_sites(program, "m.py") if s.fix == OUT_OF_PLACE]
    assert [s.line for s in rewrites] == [7, 9, 10]
    instrumented = apply_edits(src, instrument_edits(rewrites))
    patched = apply_edits(src, patch_edits(rewrites))
    assert instrumented.count("\n") == program.count("\n")

    def run(text: str, *args: str) -> str:
        done = subprocess.run([sys.executable, "-c", text, *args], capture_output=True,
                              text=True, check=True)  # fmt: skip
        return done.stdout

    assert run(instrumented) == run(program)
    assert run(instrumented, "statement") == run(patched)
    assert run(patched) != run(program)  # the writes no longer reach ``a``


def test_out_of_place_and_clone_of_one_statement_render_together(tmp_path: Path) -> None:
    code = "def f(x, y):\n    x += y\n    return x\n"
    sites = [s for s in find_sites(code, "m.py") if s.line == 2 and s.kind in (INPLACE, STATEMENT)]
    assert [s.fix for s in sites] == [CLONE, OUT_OF_PLACE]
    text = apply_edits(_source_file(tmp_path, code), patch_edits(sites))
    assert text.splitlines()[1:3] == ["    x = x.clone()", "    x = x + y"]


# -- priority: the rewrite first, where the evidence allows ------------------------------

_WRITES = "def f(x, w):\n    h = torch.exp(w @ x)\n    h += 1\n    return h\n"


def _ranked(**evidence: object) -> list[str]:
    d = Diagnosis(INPLACE_VERSION, "", "", saved=("m.py", 2), mutation=("m.py", 3))
    return priority(replace(d, **evidence), find_sites(_WRITES, "m.py"))  # type: ignore[arg-type]


def test_rewrite_is_the_first_prediction_then_the_clone() -> None:
    ranked = _ranked()
    assert ranked[:2] == ["m.py:3:4:statement", "m.py:3:4:inplace"]


def test_no_rewrite_of_a_leaf_update() -> None:
    """``w -= lr * w.grad`` out of place would make the weight a non-leaf, silently."""
    assert not any(i.endswith(":statement") for i in _ranked(error_class=LEAF_INPLACE))


def test_write_through_a_view_keeps_the_saving_line_first() -> None:
    ranked = _ranked(through_view=True)
    assert ranked[0].startswith("m.py:2:")
    assert ranked.index("m.py:3:4:statement") < ranked.index("m.py:3:4:inplace")


def test_one_line_saving_and_writing_rewrites_it_first() -> None:
    code = "def f(x):\n    x += g(x)\n    return x\n"
    d = Diagnosis(INPLACE_VERSION, "", "", saved=("m.py", 2), mutation=("m.py", 2))
    assert priority(d, find_sites(code, "m.py"))[:2] == ["m.py:2:4:statement", "m.py:2:11:arg"]


# -- a carried state held as one tuple ---------------------------------------------------

_LOOP = textwrap.dedent(
    """\
    import torch
    lstm = torch.nn.LSTM(4, 8)
    hidden = None
    for x in batches:
        out, hidden = lstm(x, hidden)
        out.sum().backward()
    """
)


def test_tuple_state_is_detached_on_a_line_of_its_own(tmp_path: Path) -> None:
    d = Diagnosis(BACKWARD_TWICE, "", "", carry_consumer=("m.py", 5), carry_frames=(("m.py", 5),))
    first = detach_candidates(d, find_sites(_LOOP, "m.py"))[0]
    assert [(s.fix, s.code) for s in first] == [
        (DETACH, "hidden = tuple(h.detach() for h in hidden)")
    ]
    patched = apply_edits(_source_file(tmp_path, _LOOP), patch_edits(first)).splitlines()
    assert patched[4:6] == [
        "    hidden = tuple(h.detach() for h in hidden)",
        "    out, hidden = lstm(x, hidden)",
    ]


def test_without_an_lstm_a_plain_detach_comes_first() -> None:
    code = _LOOP.replace("torch.nn.LSTM(4, 8)", "torch.nn.GRU(4, 8)")
    d = Diagnosis(BACKWARD_TWICE, "", "", carry_consumer=("m.py", 5), carry_frames=(("m.py", 5),))
    codes = [s.code for [s] in detach_candidates(d, find_sites(code, "m.py"))[:2]]
    assert codes == ["hidden.detach()", "hidden = tuple(h.detach() for h in hidden)"]


def test_no_tuple_detach_where_no_statement_can_go_before() -> None:
    code = "for x in batches:\n    if f(x, hidden): pass\n"
    [read] = [s for s in find_sites(code, "m.py") if s.target == "hidden"]
    assert as_tuple_detach(read) is None


@pytest.mark.parametrize(
    ("line", "patched"),
    [
        ("    loss.backward()", "loss.backward(retain_graph=True)"),
        ("    loss.backward(grad)", "loss.backward(grad, retain_graph=True)"),
        ("    loss.backward(grad,)", "loss.backward(grad, retain_graph=True)"),
        ("torch.autograd.backward(loss)", "torch.autograd.backward(loss, retain_graph=True)"),
        ("    (a + b).backward()  # both", "(a + b).backward(retain_graph=True)  # both"),
    ],
)
def test_retain_graph_goes_into_the_backward_call(line: str, patched: str, tmp_path: Path) -> None:
    (site,) = retain_graph("t.py", 3, line)
    assert site.code == patched
    source = _source_file(tmp_path, "\n\n" + line + "\n")
    assert apply_edits(source, patch_edits([site])).strip() == patched


@pytest.mark.parametrize(
    "line",
    ["loss.backward(retain_graph=False)", "loss.backward(", "y = f(x)", "loss.backward(g('s'))"],
)
def test_retain_graph_leaves_other_lines_alone(line: str) -> None:
    assert retain_graph("t.py", 1, line) == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("        loss.backward()", "        h = h.detach()"),
        ("    total.backward()  # step", "    h = h.detach()"),
    ],
)
def test_detach_after_goes_on_its_own_line_below_the_backward_call(
    line: str, expected: str, tmp_path: Path
) -> None:
    site = detach_after("t.py", 2, line, "h")
    assert site is not None and site.after == 2 and site.line == 3
    source = _source_file(tmp_path, "x = 1\n" + line + "\nprint(h)\n")
    assert apply_edits(source, patch_edits([site])).splitlines()[2] == expected


@pytest.mark.parametrize(
    "line", ["    if ok: loss.backward()", "    loss.backward(", "    y = f(x)"]
)
def test_detach_after_needs_a_backward_statement_of_its_own(line: str) -> None:
    assert detach_after("t.py", 2, line, "h") is None


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("    return x.clamp_(0.0, 1.0)", "    return x.clamp(0.0, 1.0)"),
        ("    return x.mul_(2).add_(1)", "    return x.mul(2).add(1)"),
        ("    return self.count.add_(1)", None),
        ("    return torch.relu_(x)", None),
    ],
)
def test_a_returned_in_place_call_is_rewritten_out_of_place(
    line: str, expected: str | None, tmp_path: Path
) -> None:
    source = "import torch\n\n\ndef f(self, x):\n" + line + "\n"
    sites = [s for s in find_sites(source, "m.py") if s.fix == OUT_OF_PLACE]
    if expected is None:
        assert sites == []
        return
    (site,) = sites
    patched = apply_edits(_source_file(tmp_path, source), patch_edits([site]))
    assert patched.splitlines()[4] == expected


@pytest.mark.parametrize(
    ("head", "at"),
    [
        ('"""Decay."""\nfrom torch import nn\n', 2),  # above the first import
        ('"""Decay."""\nfrom __future__ import annotations\n', 3),  # after __future__
        ("", 1),  # no imports at all: the first line
    ],
)
def test_no_grad_in_a_module_without_import_torch_imports_it_once(
    tmp_path: Path, head: str, at: int
) -> None:
    """Two no_grad blocks in a file that never names ``torch``: one ``import torch``, placed
    where Python allows it, and the patched module runs the updates without grad."""
    body = textwrap.dedent(
        """\
        def decay_(ps, rate):
            for p in ps:
                p.mul_(1 - rate)
                p.add_(0.0)
        """
    )
    source = head + body
    src = _source_file(tmp_path, source)
    writes = [s for s in find_sites(source, "m.py") if s.kind == INPLACE]
    wrapped = [w for w in (as_no_grad(s, source) for s in writes) if w is not None]
    assert len(wrapped) == 2
    patched = apply_edits(src, patch_edits(wrapped))
    assert patched.count("import torch\n") == 1
    assert patched.splitlines()[at - 1] == "import torch"
    scope: dict[str, object] = {}
    exec(compile(patched, "m.py", "exec"), scope)  # noqa: S102
    import torch

    w = torch.ones(3, requires_grad=True)
    scope["decay_"]([w], 0.5)  # type: ignore[operator]
    assert w.tolist() == [0.5, 0.5, 0.5] and w.grad_fn is None
