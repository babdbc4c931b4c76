"""A memo on the module that keeps a value made from trained parameters, recomputed on
every call: ``if self.table is None: self.table = self.mlp(self.feats)`` becomes
``self.table = self.mlp(self.feats)``.

The same for a memo read back by an early return (CoOp's text features:
``if self.cache and self._text_cache is not None: return self._text_cache``, then
``self._text_cache = feats``): the early return is dropped.

A time-embedding table run through a trained MLP once and kept (a DDPM's
``self.temb_table``), an S4 kernel kept per sequence length (``if L not in self._k_cache:
self._k_cache[L] = self.kernel(L)``): the memo hands every later step the value made
before the last ``backward()`` freed its graph, and before the optimizer changed the
parameters it was made from. A detach there would stop those parameters training; the
program means the value of the current parameters, which is what the memo computed on
its first call. Without the guard each call computes it again: the same values on the
first step, so the backward calls the original completed must come out the same
(``keeps_prefix``), and as every cut, K finite steps with every tensor still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone.classify import BACKWARD_TWICE, INPLACE_VERSION
from autoclone.codemods.rewrites import line_dropped, statement_replaced
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.fixes._ast import FUNCTIONS, self_attribute
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import innermost, parsed

KIND_NAME = "memo_dropped"


def _held(target: ast.expr) -> str:
    """``self.x`` of ``self.x`` or ``self.x[key]``; "" for anything else."""
    node = self_attribute(target, subscripts=1)
    return ast.unparse(node) if node is not None else ""


def _guard(tree: ast.Module, line: int) -> tuple[ast.If, ast.Assign] | None:
    """The ``if`` whose only statement, on ``line``, stores into the memo its test reads
    (``self.x is None``, ``key not in self.x``, ``not self.x``)."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and not node.orelse and len(node.body) == 1):
            continue
        stmt = node.body[0]
        if not (isinstance(stmt, ast.Assign) and stmt.lineno <= line <= (stmt.end_lineno or 0)
                and len(stmt.targets) == 1):  # fmt: skip
            continue
        held = _held(stmt.targets[0])
        if held and any(ast.unparse(n) == held for n in ast.walk(node.test)):
            return node, stmt
    return None


def _early_return(file: str, text: str, line: int) -> Site | None:
    """The ``if`` of the function around ``line`` that returns a memo the function also
    stores (``if ... self.x is not None: return self.x`` with ``self.x = ...`` below),
    dropped."""
    fn = innermost(text, line, FUNCTIONS)
    if fn is None:
        return None
    stored = {_held(t) for n in ast.walk(fn) if isinstance(n, ast.Assign) for t in n.targets}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.If) and not node.orelse and len(node.body) == 1
                and isinstance(node.body[0], ast.Return) and node.body[0].value is not None):
            continue
        held = _held(node.body[0].value)
        if held and held in stored and any(ast.unparse(n) == held for n in ast.walk(node.test)):
            code = (ast.get_source_segment(text, node) or "").splitlines()[0]
            return line_dropped(file, node.lineno, code, held, KIND_NAME, node.end_lineno)
    return None


def memos(found: Diagnosis, ctx: Context) -> list[Site]:
    if not crosses_iterations(found):
        return []
    out: dict[str, Site] = {}
    for file, line in found.producer_frames:
        text = ctx.texts.get(file, "")
        guarded = _guard(parsed(text), line) if text else None
        early = _early_return(file, text, line) if text and guarded is None else None
        if early is not None:
            out.setdefault(early.id, early)
        if guarded is None:
            continue
        branch, stmt = guarded
        code = ast.get_source_segment(text, stmt) or ast.unparse(stmt)
        site = statement_replaced(file, branch, code, KIND_NAME, KIND_NAME,
                                  _held(stmt.targets[0]))  # fmt: skip
        out.setdefault(site.id, site)
    return list(out.values())


class MemoDropped(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True
    classes = (BACKWARD_TWICE, INPLACE_VERSION)

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return memos(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        sites = memos(found, ctx)
        return [Candidate(-1.15, tuple(sites))] if sites else []  # before any detach

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        if all(edit.drop_line for edit in site.rewrite):  # the early return, dropped
            return (
                f"Fix at {where((site.file, site.line), lines)}: the early return of "
                f"`{site.target}` dropped: the memo handed every later step a value made "
                "from trained parameters, with the graph the last backward freed; computed "
                "on each call, it has the current parameters' values and graph."
            )
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}` on every call: "
            f"`{site.target}` kept a value made from trained parameters, with its graph, "
            "for every later step, after backward freed that graph and the optimizer "
            "changed the parameters; computed on each call, it has the current parameters' "
            "values and graph, and the first step's numbers are as before."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return [
            "the memo is computed again on every call; to keep it for evaluation only, "
            "guard it with `not torch.is_grad_enabled()` and clear it when training resumes"
        ]


KIND = MemoDropped()
