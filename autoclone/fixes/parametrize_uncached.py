"""``parametrize.cached()`` held open across backward calls made a no-op context
(``contextlib.nullcontext()``): each step computes its own parametrized weight.

``torch.nn.utils.parametrize.cached()`` keeps the first computation of a parametrized
weight (an orthogonal or weight-normed recurrent matrix) for as long as the context is
open, graph included. Opened around a whole training loop, or entered in an epoch hook
and left at the epoch's end, it hands the next step the weight computed before the last
``backward()`` freed its graph, and before the optimizer changed what it was computed
from (pytorch/pytorch#71062). Caching changes no value, only how often a weight is
computed (and the order its gradient is summed in, equal up to rounding): without it
every step computes its own weight, as the documented use (the
context around one forward pass) does, so the calls the original completed come out the
same (``keeps_prefix``). The note says the faster form: the context around each forward.
Tried first where the ``with`` holds one loop: the two headers swap places, so the cache
is opened in each iteration (one computation per step, as in the original's first step).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone.classify import BACKWARD_TWICE, INPLACE_VERSION
from autoclone.codemods.rewrites import torch_import
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.edits import TextEdit
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "parametrize_uncached"
_MODULE = "torch.nn.utils.parametrize"


def _names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(what names the module, what names its ``cached``) in this file's imports."""
    modules, functions = {_MODULE}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name == _MODULE and a.asname}
        elif isinstance(node, ast.ImportFrom) and node.module == "torch.nn.utils":
            modules |= {a.asname or a.name for a in node.names if a.name == "parametrize"}
        elif isinstance(node, ast.ImportFrom) and node.module == _MODULE:
            functions |= {a.asname or a.name for a in node.names if a.name == "cached"}
    return modules, functions


def _calls(text: str) -> list[ast.Call]:
    """The one-line ``cached()`` calls of the parametrize module in a file."""
    tree = parsed(text)
    modules, functions = _names(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or node.args or node.keywords:
            continue
        func = node.func
        named = (isinstance(func, ast.Name) and func.id in functions) or (
            isinstance(func, ast.Attribute) and func.attr == "cached"
            and ast.unparse(func.value) in modules)  # fmt: skip
        if named and node.lineno == node.end_lineno:
            out.append(node)
    return out


def _import(text: str) -> tuple[TextEdit, ...]:
    """``import contextlib`` where the file lacks it (where ``import torch`` would go)."""
    if any(isinstance(n, ast.Import) and any(a.name == "contextlib" and not a.asname
                                             for a in n.names)
           for n in parsed(text).body):  # fmt: skip
        return ()
    edits = torch_import(text) or ()
    return tuple(TextEdit(e.line, e.col, "import contextlib\n") for e in edits)


def per_step(found: Diagnosis, ctx: Context) -> list[Site]:
    """The cache opened inside the loop it was opened around: the ``with`` line and the
    loop's header swap places (the body keeps its indentation), so each iteration
    computes the weight once and leaves the cache before the next. Only where the
    ``with`` holds the loop alone, a loop of steps (no loop inside it), both headers on
    one line each."""
    if not crosses_iterations(found):
        return []
    out = []
    for file, text in sorted(ctx.texts.items()):
        for call in _calls(text) if "cached" in text else []:
            site = _swapped(file, text, call)
            if site is not None:
                out.append(site)
    return out


def _swapped(file: str, text: str, call: ast.Call) -> Site | None:
    block = next((n for n in ast.walk(parsed(text)) if isinstance(n, ast.With)
                  and len(n.items) == 1 and n.items[0].context_expr is call
                  and n.items[0].optional_vars is None), None)  # fmt: skip
    if block is None or len(block.body) != 1:
        return None
    loop = block.body[0]
    if not isinstance(loop, ast.For | ast.While) or loop.body[0].lineno == loop.lineno:
        return None
    if any(isinstance(n, ast.For | ast.While) for n in ast.walk(loop) if n is not loop):
        return None  # an epoch loop around the steps: per epoch, the cache still spans them
    lines = text.splitlines()
    outer, inner = lines[block.lineno - 1], lines[loop.lineno - 1]
    if not (outer.rstrip().endswith(":") and inner.rstrip().endswith(":")):
        return None  # a header over several lines, or a comment after it
    o_col, i_col = len(outer) - len(outer.lstrip()), len(inner) - len(inner.lstrip())
    o_text, i_text = outer.strip(), inner.strip()
    return Site(id=f"{file}:{block.lineno}:{o_col}:{KIND_NAME}:per_step", file=file,
                line=block.lineno, col=o_col, kind=STATEMENT, target=o_text,
                code=f"{i_text} / {o_text}", start=(block.lineno, o_col),
                end=(loop.lineno, len(inner)), depth=0, fix=KIND_NAME,
                rewrite=(TextEdit(block.lineno, o_col, i_text, delete=len(o_text)),
                         TextEdit(loop.lineno, i_col, o_text, delete=len(i_text))))  # fmt: skip


def uncached(found: Diagnosis, ctx: Context) -> list[Site]:
    """One site per file: each ``cached()`` call made ``contextlib.nullcontext()``."""
    if not crosses_iterations(found):
        return []
    out = []
    for file, text in sorted(ctx.texts.items()):
        calls = _calls(text) if "cached" in text else []
        if not calls:
            continue
        edits = tuple(TextEdit(c.lineno, c.col_offset, "contextlib.nullcontext()",
                               delete=(c.end_col_offset or 0) - c.col_offset) for c in calls)
        first = calls[0]
        code = ast.get_source_segment(text, first) or "cached()"
        out.append(Site(id=f"{file}:{first.lineno}:{first.col_offset}:{KIND_NAME}", file=file,
                        line=first.lineno, col=first.col_offset, kind=STATEMENT, target=code,
                        code="contextlib.nullcontext()", start=(first.lineno, first.col_offset),
                        end=(first.lineno, first.end_col_offset or 0), depth=0, fix=KIND_NAME,
                        rewrite=(*_import(text), *edits)))  # fmt: skip
    return out


class ParametrizeUncached(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True
    classes = (BACKWARD_TWICE, INPLACE_VERSION)

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return [*per_step(found, ctx), *uncached(found, ctx)]

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        steps, sites = per_step(found, ctx), uncached(found, ctx)
        first = [Candidate(-1.3, tuple(steps))] if steps else []
        return [*first, *([Candidate(-1.2, tuple(sites))] if sites else [])]  # before detach

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        if site.id.endswith(":per_step"):
            return (
                f"Fix at {where((site.file, site.line), lines)}: `{site.target}` moved "
                "inside the loop it was opened around: the cache kept a parametrized "
                "weight, with its graph, from one iteration into the next, after backward "
                "freed that graph and the optimizer changed what the weight is computed "
                "from; opened in each iteration, it computes the weight once per step and "
                "is left before the next."
            )
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.target}` -> "
            "`contextlib.nullcontext()`: the cache kept a parametrized weight, with its "
            "graph, from one step into the next, after backward freed that graph and the "
            "optimizer changed what the weight is computed from; uncached, each step "
            "computes its own weight, with the same values."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        if any(s.id.endswith(":per_step") for s in chosen):
            return [
                "a read of the weight after the optimizer's step, in the same iteration, "
                "still sees the value cached before it, as in the original's first step"
            ]
        return [
            "no value changes: caching only saves recomputing the weight (its gradient is "
            "then summed over each use instead of once, equal up to rounding); to keep that "
            "saving, open the cache around each forward pass instead (`with P.cached(): "
            "out = model(x)`), as the parametrize documentation shows"
        ]


KIND = ParametrizeUncached()
