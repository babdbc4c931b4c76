"""The fix kinds' pure parts: the registry, the leak bookkeeping, the target rule, where
an edit goes (create_graph, a constant target, several names cut on one line).
End-to-end behaviour (real torch, real runs) is in the fixtures."""

from __future__ import annotations

import pkgutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import autoclone.fixes as fixes
from autoclone.codemods.render import patch_edits
from autoclone.codemods.rewrites import detach_after, together
from autoclone.codemods.sites import find_sites
from autoclone.diagnose import Diagnosis
from autoclone.fixes.constant_target import target_sites
from autoclone.fixes.create_graph import create_graph_site
from autoclone.fixes.detach_target import _defines
from autoclone.leaks import _leaks_from
from autoclone.patch import SourceFile, apply_edits


def test_every_kind_module_is_consulted_once() -> None:
    modules = {m.name for m in pkgutil.iter_modules(fixes.__path__)
               if not m.name.startswith("_") and m.name != "base"}  # fmt: skip
    listed = [k.__module__.rsplit(".", 1)[1] for k in fixes.KINDS]
    assert sorted(listed) == sorted(modules)


def _opt(*params: int) -> Any:
    return SimpleNamespace(param_groups=[{"params": [SimpleNamespace() for _ in params]}])


def _ids(opt: Any) -> set[int]:
    return {id(p) for p in opt.param_groups[0]["params"]}


def test_a_gan_that_zeroes_both_first_leaks_the_discriminator_loss_into_the_generator() -> None:
    g, d = _opt(1, 2), _opt(3)
    events: list[tuple[Any, ...]] = [
        ("zero", _ids(d)), ("zero", _ids(g)),
        ("backward", _ids(d) | _ids(g), [("t.py", 19)]),  # d_loss reaches G through fake
        ("step", 1, [("t.py", 20)]),  # opt_D: the first to step owns that call
        ("backward", _ids(g) | _ids(d), [("t.py", 22)]),
        ("step", 0, [("t.py", 23)]),  # opt_G steps on both losses' gradients
    ]  # fmt: skip
    leaks = _leaks_from(events, 2, [g, d])
    assert [(x["owner"], x["optimizer"], x["step_frames"]) for x in leaks] == [
        (1, 0, [("t.py", 23)])
    ]


def test_zero_grad_between_the_calls_means_no_leak() -> None:
    g, d = _opt(1), _opt(2)
    events: list[tuple[Any, ...]] = [
        ("backward", _ids(d) | _ids(g), []), ("step", 1, []),
        ("zero", _ids(g)), ("backward", _ids(g), []), ("step", 0, []),
    ]  # fmt: skip
    assert _leaks_from(events, 0, [g, d]) == []


def test_one_optimizer_with_two_losses_has_no_leak() -> None:
    opt = _opt(1, 2)
    events: list[tuple[Any, ...]] = [
        ("backward", _ids(opt), []), ("backward", _ids(opt), []), ("step", 0, []),
    ]  # fmt: skip
    assert _leaks_from(events, 0, [opt]) == []


def test_a_recurrent_state_is_not_a_constant_target() -> None:
    code = "h = rnn(x, h)\nold = dist.log_prob(a)\nself.m = self.m * 0.9 + x\n"
    sites = [s for s in find_sites(code, "m.py") if s.kind == "assign"]
    by_line = {s.line: s for s in sites}
    assert not _defines(by_line[1], "h")
    assert _defines(by_line[2], "old")
    assert not _defines(by_line[3], "self.m")


def test_an_argument_write_is_this_kinds_only_where_the_helper_returns_a_result() -> None:
    from autoclone.fixes.argument_write import returned_parameters

    code = (
        "def add(h, b):\n    h += b\n    return h\n\n\n"
        "def center_(x):\n    x -= x.mean()\n    return x\n\n\n"
        "def normalize(x):\n    x -= x.mean()\n\n\n"
        "def query_key(x, pos):\n    x += pos\n    return x @ x.T, x.sum()\n"
    )
    assert returned_parameters(code, 2) == {"h", "b"}
    assert returned_parameters(code, 7) == set()  # in place by name: callers may rely on it
    assert returned_parameters(code, 12) == set()  # returns nothing: writes in place by design
    assert returned_parameters(code, 16) == {"x", "pos"}  # returns values made from it


def test_a_patched_runs_lines_map_back_to_the_original() -> None:
    from autoclone.repair import _line_map

    original = "a = 1\nb = 2\nc = 3\n"
    patched = "a = 1\nwith torch.no_grad():\n    b = 2\nc = 3\n"  # one line inserted, one moved
    assert _line_map(original, patched) == [1, 2, 2, 3]


def test_the_tracers_and_pytorchs_wording_of_one_conflict_are_the_same_conflict() -> None:
    from autoclone.repair import _shape

    head = "RuntimeError: one of the variables needed ... [torch.FloatTensor [16, 12]], which is "
    traced = (
        head + "output 0 of CopySlices, is at version 12; expected version 10 instead. "
        "(autograd check made by autoclone)"
    )
    plain = (
        head + "output 0 of torch::autograd::CopySlices, is at version 14; expected "
        "version 12 instead. Hint: enable anomaly detection"
    )
    other = head + "output 0 of TanhBackward0, is at version 1; expected version 0 instead."
    assert _shape(traced) == _shape(plain) != _shape(other)


_PDE = """\
import torch


def residual(u, x, t):
    u_x = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]
    u_t = torch.autograd.grad(u, t, torch.ones_like(u))[0]
    return u_t - u_x
"""


def test_create_graph_is_offered_only_where_a_sibling_call_passes_it() -> None:

    found = Diagnosis("backward_twice", "", "", grad_call=("pde.py", 6))
    site = create_graph_site(found, {"pde.py": _PDE})
    assert site is not None and site.code.endswith("torch.ones_like(u), create_graph=True)")
    alone = _PDE.replace(", create_graph=True", "")  # no call says the derivative trains
    assert create_graph_site(found, {"pde.py": alone}) is None


_TARGETS = """\
import torch.nn.functional as F


def loss_of(model, x, y, guess):
    target = guess(x) * 0.5
    return F.cross_entropy(model(x), y) + F.mse_loss(model(x), target)
"""


def test_a_constant_target_is_cut_where_it_is_made_then_where_the_loss_takes_it() -> None:

    found = Diagnosis("inplace_version", "", "", target_of=("t.py", 6), target_loss="mse_loss")
    sites = target_sites(found, {"t.py": _TARGETS})
    # the whole value in parentheses, never only its last operand; cross_entropy's target
    # (the labels ``y``) is not the loss the tracer named
    assert [s.code for s in sites] == ["(guess(x) * 0.5).detach()", "target.detach()"]


def test_several_names_cut_at_one_place_are_one_statement() -> None:

    sites = [detach_after("t.py", 3, "    loss.backward()", name) for name in ("h", "c")]
    one = together([s for s in sites if s is not None])
    assert one.code == "h, c = h.detach(), c.detach()" and one.line == 4


def _ctx(files: dict[str, str]) -> Any:
    from autoclone.fixes.base import Context

    sites = [s for name, text in files.items() for s in find_sites(text, name)]
    lines = {name: text.splitlines() for name, text in files.items()}
    return Context(sites, files, lines)


_FLAGS = """\
import torch


def penalty(D, real, fake, frozen):
    eps = torch.rand(real.size(0), 1)
    mixed = eps * real + (1 - eps) * fake
    w = frozen.weight * 1.0
    p = torch.zeros(3, requires_grad=False)
    return torch.autograd.grad(D(mixed).sum(), mixed)[0], torch.autograd.grad(D(w).sum(), w)


def pinn(model, x):
    u = model(x)
    return torch.autograd.grad(u.sum(), x, create_graph=True)[0]
"""


def test_a_flag_goes_where_the_differentiated_tensor_is_made_never_on_a_modules_tensor() -> None:
    from autoclone.fixes.requires_grad_input import flags

    ctx = _ctx({"m.py": _FLAGS})
    made = flags(Diagnosis("input_no_grad", "", "", failing=("m.py", 9)), ctx)
    assert made == ()  # `w` aliases a module's weight: no flag for the pair, none at all
    argument = flags(Diagnosis("input_no_grad", "", "", failing=("m.py", 14)), ctx)
    assert [(s.line, s.code) for s in argument] == [(13, "x.requires_grad_(True)")]
    alone = _FLAGS.replace(", torch.autograd.grad(D(w).sum(), w)", "")
    mixed = flags(Diagnosis("input_no_grad", "", "", failing=("m.py", 9)), _ctx({"m.py": alone}))
    assert [(s.line, s.code) for s in mixed] == [(7, "mixed.requires_grad_(True)")]


_GRAD_MODE = """\
import torch


def evaluate(model, x):
    model.eval()
    torch.set_grad_enabled(False)
    out = model(x)
    model.train()
    return out.mean().item()


def undone(model, x):
    torch.set_grad_enabled(False)
    out = model(x)
    torch.set_grad_enabled(True)
    return out
"""


def test_a_grad_switch_becomes_a_block_over_the_rest_of_its_block_only_if_never_undone(
    tmp_path: Any,
) -> None:
    from autoclone.codemods.render import patch_edits
    from autoclone.fixes.grad_mode_block import sites
    from autoclone.patch import SourceFile, apply_edits

    found = sites(_ctx({"m.py": _GRAD_MODE}))
    assert [s.line for s in found] == [6]  # `undone` turns grad back on itself
    (tmp_path / "m.py").write_text(_GRAD_MODE)
    patched = apply_edits(SourceFile.read(tmp_path / "m.py"), patch_edits(found))
    assert patched.splitlines()[4:9] == [
        "    model.eval()", "    with torch.no_grad():", "        out = model(x)",
        "        model.train()", "    return out.mean().item()",
    ]  # fmt: skip


def test_an_alias_is_a_later_call_of_an_in_place_chain_reading_what_it_changed() -> None:
    """Python runs ``h.mul_(lam)`` before it evaluates ``h[index]``: that read sees the
    write. A single in-place call evaluates its arguments first, and a chain whose later
    arguments read other tensors has no alias."""
    import ast

    from autoclone.fixes.alias_out_of_place import aliased_read

    def read(code: str) -> tuple[str, str] | None:
        return aliased_read(ast.parse(code).body[0])

    assert read("h.mul_(lam).add_(h[index], alpha=1 - lam)") == ("h", "h[index]")
    assert read("return x.sub_(m).div_(x.std())") == ("x", "x.std()")
    assert read("x.add_(x.flip(0))") is None  # one call: its argument is read before it runs
    assert read("x.sub_(m).div_(s)") is None  # the chain reads only other tensors
    assert read("y = x.mul(2).add_(x)") is None  # the receiver is a new tensor, not x


_WEIGHTS = """\
import torch
import torch.nn.functional as F


def focal(logits, y, g):
    w = (1 - torch.where(y > 0, logits.sigmoid(), 1 - logits.sigmoid())) ** g
    return F.binary_cross_entropy_with_logits(logits, y, w, reduction="sum") / 2


def keyword(logits, y):
    p = logits.sigmoid()
    return F.binary_cross_entropy(p, y, weight=p + 0.5)


def table(logits, y, self_w):
    w = self_w.expand_as(y)
    return F.binary_cross_entropy_with_logits(logits, y, weight=w, reduction="mean")
"""


def test_a_weight_made_from_the_input_moves_outside_the_loss_with_the_same_value(
    tmp_path: Any,
) -> None:
    """The rewrite is the same number as the weighted call (with the weight detached,
    which the call accepts); a weight not made from the input gets no rewrite."""
    import torch
    import torch.nn.functional as F

    from autoclone.codemods.render import patch_edits
    from autoclone.fixes.weight_outside_loss import sites
    from autoclone.patch import SourceFile, apply_edits

    ctx = _ctx({"m.py": _WEIGHTS})
    message = "is not differentiable with respect to argument 'weight'"
    found = [sites(Diagnosis("nondiff_argument", message, "", failing=("m.py", n)), ctx)
             for n in (7, 12, 17)]  # fmt: skip
    assert [len(f) for f in found] == [1, 1, 0]
    (tmp_path / "m.py").write_text(_WEIGHTS)
    patched = apply_edits(SourceFile.read(tmp_path / "m.py"), patch_edits(found[0] + found[1]))
    lines = patched.splitlines()
    assert lines[6].strip() == ("return (w * F.binary_cross_entropy_with_logits(logits, y, "
                                'reduction="none")).sum() / 2')  # fmt: skip
    assert lines[11].strip() == ("return ((p + 0.5) * F.binary_cross_entropy(p, y, "
                                 'reduction="none")).mean()')  # fmt: skip
    new: dict[str, Any] = {}
    exec(compile(patched, "m.py", "exec"), new)
    torch.manual_seed(0)
    logits, y = torch.randn(6, 3, requires_grad=True), (torch.rand(6, 3) > 0.5).float()
    w = (1 - torch.where(y > 0, logits.sigmoid(), 1 - logits.sigmoid())) ** 2
    old = F.binary_cross_entropy_with_logits(logits, y, w.detach(), reduction="sum") / 2
    assert torch.allclose(new["focal"](logits, y, 2), old)
    p = logits.sigmoid()
    same = F.binary_cross_entropy(p, y, weight=(p + 0.5).detach())
    assert torch.allclose(new["keyword"](logits, y), same)
    new["focal"](logits, y, 2).backward()  # now differentiable through the weight
    assert logits.grad is not None


_CACHED = """\
import torch.nn as nn
from torch_geometric.nn import GCNConv


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GCNConv(4, 8, cached=True)
        self.conv2 = GCNConv(8, 2, cached=True)
        self.other = GCNConv(8, 2, cached=True)

    def forward(self, x, edge_index, w):
        h = self.conv1(x, edge_index, w).relu()
        return self.conv2(h, edge_index, w)
"""


def test_a_cache_flag_is_turned_off_on_the_layers_the_carried_value_was_made_in() -> None:
    """A library layer (not in the user's files) is found through the ``self.<attr>`` its
    producer frame's line calls; a layer no producer frame calls keeps its cache."""
    from autoclone.fixes.cache_flag import sites

    ctx = _ctx({"m.py": _CACHED})
    found = sites(Diagnosis("backward_twice", "", "", producer_frames=(("m.py", 13),)), ctx)
    assert [(s.line, s.code) for s in found] == [(8, "GCNConv(..., cached=False)")]


_RECOUNT = """\
def step(model, opt, x, y, attack):
    loss = model(x, y)
    loss.backward()
    attack()
    loss_adv = model(x, y)
    total = loss + loss_adv * 0.5
    total.backward()


def zeroed(model, opt, x, y, attack):
    loss = model(x, y)
    loss.backward()
    opt.zero_grad()
    loss_adv = model(x, y)
    (loss + loss_adv).backward()
"""


def test_a_recounted_loss_is_dropped_from_the_sum_unless_grads_were_zeroed_between() -> None:
    """With no ``zero_grad`` between, ``.grad`` holds the first loss's gradient already;
    after a ``zero_grad`` the sum is meant as it is, and this kind offers nothing."""
    from autoclone.fixes.recounted_term import site

    ctx = _ctx({"m.py": _RECOUNT})

    def at(first: int, failing: int) -> Any:
        return site(Diagnosis("backward_twice", "", "", failing=("m.py", failing),
                              previous_backward=("m.py", first), recounts=True), ctx)  # fmt: skip

    made = at(3, 7)
    assert made is not None and made.code == "(loss_adv * 0.5).backward()"
    assert at(12, 15) is None


def test_shared_reads_pair_the_lines_where_the_two_stacks_part_never_outer_callers() -> None:
    """A value made in ``act()`` and differentiated in ``update()``, both called by the
    loop, pairs the loop's two lines; where both stacks pass through one caller line
    (``fit()`` calling ``self.update(self.collect())``), they part inside ``update``, and
    ``fit``'s line is never paired with ``main()``'s call of ``fit``."""
    from autoclone.fixes.detach_shared import _pairs

    ddpg = _pairs(
        [("a.py", 10), ("t.py", 40), ("t.py", 90)], [("a.py", 30), ("t.py", 44), ("t.py", 90)]
    )
    assert ddpg == [(("t.py", 40), ("t.py", 44)), (("a.py", 10), ("a.py", 30))]
    shared = [("i.py", 108), ("i.py", 146), ("i.py", 153)]
    a2c = _pairs([("i.py", 93), *shared], [("i.py", 98), *shared])
    assert a2c == [(("i.py", 93), ("i.py", 98))]


def test_once_differentiable_is_dropped_only_from_a_backward_of_torch_code() -> None:
    """A backward that leaves autograd (``.numpy()``, ``.data``) or calls a kernel outside
    torch keeps its decorator: its derivative would be wrong or missing, not recorded."""
    from autoclone.fixes.once_differentiable_dropped import sites

    def kept(body: str) -> int:
        text = ("import torch\nimport fused\nfrom torch.autograd.function import "
                "once_differentiable\n\n\nclass Op(torch.autograd.Function):\n"
                "    @staticmethod\n    @once_differentiable\n    def backward(ctx, g):\n"
                f"        (x,) = ctx.saved_tensors\n        return {body}\n")  # fmt: skip
        return len(sites(_ctx({"m.py": text})))

    assert kept("g * torch.sigmoid(x), None") == 1
    assert kept("g * torch.from_numpy(x.numpy() > 0)") == 0
    assert kept("g * x.data") == 0
    assert kept("fused.leaky_backward(g, x)") == 0


_SEEDS = """\
import torch


def seeds(D, x, y, net, l1, l2, w):
    out = D(x)
    torch.autograd.grad(out, x, grad_outputs=torch.ones_like(x), create_graph=True)
    torch.autograd.grad(outputs=out, inputs=x, grad_outputs=torch.ones(x.size()).to(x.device))
    torch.autograd.backward([l1, l2], [torch.ones(1) * w, x.new_ones(1)])
    D(x).backward(torch.ones(3))
    out.backward(gradient=torch.full((3,), 2.0))
"""


@pytest.mark.parametrize(
    ("line", "codes"),
    [
        (6, ["torch.ones_like(out)"]),  # ones of the input's shape, not the output's
        (7, ["torch.ones_like(out)"]),  # the device move stays around it
        (8, ["torch.ones_like(l1)", "torch.ones_like(l2)"]),  # each output its own; w stays
        (9, None),  # an output that is a call: ones_like would run it again
        (10, None),  # not a seed of ones: what it means is the program's to say
    ],
)
def test_a_seed_of_ones_takes_its_outputs_shape(
    line: int, codes: list[str] | None, tmp_path: Path
) -> None:
    from autoclone.fixes.seed_shape import site

    found = site(Diagnosis("seed_shape", "", "", failing=("m.py", line)), _ctx({"m.py": _SEEDS}))
    if codes is None:
        assert found is None
        return
    assert found is not None and found.code == ", ".join(codes)
    (tmp_path / "m.py").write_text(_SEEDS)
    patched = apply_edits(SourceFile.read(tmp_path / "m.py"), patch_edits([found]))
    assert [c in patched.splitlines()[line - 1] for c in codes] == [True] * len(codes)
