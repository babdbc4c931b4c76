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
        return uncached(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        sites = uncached(found, ctx)
        return [Candidate(-1.2, tuple(sites))] if sites else []  # before any detach

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
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
        return [
            "no value changes: caching only saves recomputing the weight (its gradient is "
            "then summed over each use instead of once, equal up to rounding); to keep that "
            "saving, open the cache around each forward pass instead (`with P.cached(): "
            "out = model(x)`), as the parametrize documentation shows"
        ]


KIND = ParametrizeUncached()
