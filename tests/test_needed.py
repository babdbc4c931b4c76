"""Which edits could not have changed a traced run before its conflict (``autoclone.needed``),
and which reads hold a plain value a ``.detach()`` raises on (``fixes._ast.plain_value_at``).
The runs these spare are counted in the fixtures' ``max_runs``
(``inplace_then_carried_state``, ``late_second_conflict``); here, the rules on real sites."""

from __future__ import annotations

from dataclasses import replace

from autoclone.codemods.rewrites import as_detach, detach_after
from autoclone.codemods.sites import find_sites
from autoclone.edits import TextEdit
from autoclone.fixes._ast import expression_names, plain_attribute, plain_value_at
from autoclone.needed import touched, untouched

SOURCE = """\
import torch

ALPHA = 0.6
state = torch.zeros(3)
for epoch in range(4):
    total = 0.0
    for step in range(5):
        loss = (state * 2).sum()
        loss.backward()
        total = total + loss
    state = ALPHA * state + total
    if epoch > 2:
        print(total)
    else:
        print(epoch)
"""


def _site(line: int, target: str):
    found = [s for s in find_sites(SOURCE, "m.py") if s.line == line and s.target == target]
    return as_detach(found[0])


def test_a_read_of_a_number_bound_above_in_a_block_that_goes_on_to_it_is_plain() -> None:
    assert plain_value_at(SOURCE, "ALPHA", 11)  # a module constant, read in the loop
    assert plain_value_at(SOURCE, "total", 10)  # ``total = 0.0`` opens the epoch
    assert not plain_value_at(SOURCE, "state", 11)  # a tensor
    assert not plain_value_at(SOURCE, "loss", 10)  # bound by a call
    assert not plain_value_at(SOURCE, "epoch", 12)  # a loop's target


def test_a_name_rebound_in_a_function_or_declared_global_is_not_plain() -> None:
    source = "import torch\nw = 0.5\ndef f(x):\n    global w\n    w = x\n    return w.detach()\n"
    assert not plain_value_at(source, "w", 6)
    source = "w = 0.5\ndef f(x, w):\n    return w.detach()\n"
    assert not plain_value_at(source, "w", 3)  # the argument, not the module's
    source = "w = 0.5\ndef f(x):\n    return w * x\n"
    assert plain_value_at(source, "w", 3)


def test_an_edit_touches_the_lines_its_code_runs_with() -> None:
    lines = SOURCE.splitlines()
    read = _site(11, "total")
    assert touched(read, lines) == {11}
    after = detach_after("m.py", 9, lines[8], "state")  # before line 10, in its block
    assert after is not None and touched(after, lines) == {10}
    # a statement put at the end of the inner loop's body, before line 11: it runs after
    # the body's last statement (line 10) each pass, before line 11 ever runs
    end = replace(after, line=11, rewrite=(TextEdit(11, 0, "        state = state * 1\n"),))
    assert touched(end, lines) == {10, 11}
    # at the end of the ``if`` body, before its ``else:``: after line 13
    assert touched(replace(end, rewrite=(TextEdit(14, 0, "        pass\n"),)), lines) == {
        10, 11, 13, 14}


def test_edits_on_lines_a_run_never_reached_could_not_have_changed_it() -> None:
    lines = {"m.py": SOURCE.splitlines()}
    read = _site(11, "total")
    first_pass = {("m.py", n) for n in (1, 3, 4, 5, 6, 7, 8, 9)}  # failed at the first backward
    assert untouched([read], first_pass, lines)
    assert not untouched([read], first_pass | {("m.py", 11)}, lines)
    assert not untouched([read], None, lines)  # not traced: not known


def test_an_attribute_only_ever_given_plain_values_is_plain() -> None:
    init = "class T:\n    def __init__(self, alpha=0.6, d=None):\n        self.alpha = alpha\n"
    assert plain_attribute({"t.py": init}, "self.alpha")
    assert plain_attribute({"t.py": init + "t = T()\nt.alpha = 0.9\n"}, "self.alpha")
    tensor = "import torch\nt = T()\nt.alpha = torch.tensor(0.9)\n"
    assert not plain_attribute({"t.py": init, "u.py": tensor}, "self.alpha")  # set elsewhere
    given = init.replace("self.alpha = alpha", "self.alpha = d")
    assert not plain_attribute({"t.py": given}, "self.alpha")  # a default of None
    assert not plain_attribute({"t.py": "x = 1\n"}, "self.alpha")  # never set: not known


def test_a_config_field_with_a_plain_type_is_plain() -> None:
    """A dataclass field or an argparse option (the config shapes of the metamorphic
    harness): ``cfg.l2.detach()`` would only raise ``AttributeError``."""
    dataclass = "@dataclass\nclass Config:\n    l2: float = 0.1\n    net: nn.Module = None\n"
    assert plain_attribute({"c.py": dataclass}, "cfg.l2")
    assert not plain_attribute({"c.py": dataclass}, "cfg.net")
    options = ("p = argparse.ArgumentParser()\np.add_argument('--weight-decay', type=float)\n"
               "p.add_argument('--mask', default=None)\n")
    assert plain_attribute({"m.py": options}, "args.weight_decay")
    assert not plain_attribute({"m.py": options}, "args.mask")
    tensor = "import torch\ncfg.l2 = torch.tensor(0.1)\n"
    assert not plain_attribute({"c.py": dataclass, "u.py": tensor}, "cfg.l2")


def test_the_names_an_expression_reads() -> None:
    assert expression_names("(1 - self.alpha) * self.outputs") >= {"self.alpha", "self.outputs"}
    assert expression_names("outputs[idx] = probs") >= {"outputs", "idx", "probs"}
    assert expression_names("f(x") == set()


INDICES = """\
import torch

memory = torch.zeros(10, 4)
for step in range(3):
    src = torch.randint(0, 10, (6,))
    n_id = torch.cat([src, src + 1]).unique()
    mask = memory[n_id].sum(-1) > 0
    rows = torch.index_select(memory, 0, n_id)
    loss = (rows * 2).sum()
    print(n_id, mask, loss)
"""


def test_a_detach_of_indices_or_a_mask_is_never_tried() -> None:
    """Held-out TGN's memory: ``n_id.detach()`` of ``....unique()`` ran and repeated the
    conflict; integers and booleans have no graph to cut. A clone of them stays a
    candidate (an index a backward saved may be written in place)."""
    from autoclone import fixes
    from autoclone.fixes.base import Context

    sites = find_sites(INDICES, "m.py")
    ctx = Context(sites, {"m.py": INDICES}, {"m.py": INDICES.splitlines()}, {})
    reads = {(s.line, s.target): s for s in sites}
    of_ids = as_detach(reads[(8, "n_id")])  # the read in ``index_select(memory, 0, n_id)``
    made = as_detach(reads[(6, "torch.cat([src, src + 1]).unique()")])
    rows = as_detach(reads[(9, "rows")])
    assert of_ids is not None and made is not None and rows is not None
    assert fixes._of_integers(of_ids, ctx) and fixes._of_integers(made, ctx)
    assert not fixes._of_integers(rows, ctx)
    assert not fixes._of_integers(reads[(8, "n_id")], ctx)  # the clone itself
