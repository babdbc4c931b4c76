"""``torch.inference_mode()`` made ``torch.no_grad()`` where a tensor it made is saved for
backward by training (a frozen encoder's features fed to a trained projector).

A frozen vision tower decorated ``@torch.inference_mode()`` returns inference tensors;
the trained layer they enter must save its input for its weight gradient ("Inference
tensors cannot be saved for backward"). Under ``torch.no_grad()`` the tower computes the
same values, records nothing, and returns ordinary tensors: what the message itself
advises, and what LLaVA-style code writes. Each decorator or ``with`` block is tried
alone, then all of them. The mode changes no value, so the backward calls the original
completed before must come out the same; judged otherwise like a cut.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import INFERENCE_TENSOR
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis
from autoclone.edits import TextEdit
from autoclone.fixes._ast import char_col
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked
from autoclone.parsed import parsed

KIND_NAME = "inference_to_no_grad"


def _inference_call(node: ast.expr) -> bool:
    """``torch.inference_mode()`` (or ``(True)``), or a bare imported ``inference_mode()``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    torch_attr = (isinstance(func, ast.Attribute) and func.attr == "inference_mode"
                  and isinstance(func.value, ast.Name) and func.value.id == "torch")  # fmt: skip
    bare = isinstance(func, ast.Name) and func.id == "inference_mode"
    given = [*node.args, *(k.value for k in node.keywords)]
    return (torch_attr or bare) and all(
        isinstance(a, ast.Constant) and a.value is True for a in given
    )


def _modes(tree: ast.AST) -> list[ast.Call]:
    """Every one-line ``inference_mode()`` call used as a decorator or a ``with`` item."""
    calls: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            calls += node.decorator_list
        elif isinstance(node, ast.With):
            calls += [item.context_expr for item in node.items]
    return [c for c in calls if isinstance(c, ast.Call) and _inference_call(c)
            and c.lineno == c.end_lineno]  # fmt: skip


def sites(ctx: Context) -> list[Site]:
    """One site per such call in the user's files, in file order."""
    out = []
    for file, text in sorted(ctx.texts.items()):
        line_of = ctx.lines.get(file, [])
        for call in _modes(parsed(text)):
            line = line_of[call.lineno - 1]
            start = char_col(line, call.col_offset)
            old = ast.get_source_segment(text, call) or ""
            new = "torch.no_grad()" if isinstance(call.func, ast.Attribute) else "no_grad()"
            edit = TextEdit(call.lineno, start, new, delete=len(old))
            out.append(Site(id=f"{file}:{call.lineno}:{start}:{KIND_NAME}", file=file,
                            line=call.lineno, col=start, kind=STATEMENT, target=old, code=new,
                            start=(call.lineno, start), end=(call.lineno, start), depth=0,
                            fix=KIND_NAME, rewrite=(edit,)))  # fmt: skip
    return out


class InferenceToNoGrad(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class != INFERENCE_TENSOR:
            return False
        try:
            return bool(sites(ctx))
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        each = sites(ctx)
        return ranked([[s] for s in each] + ([each] if len(each) > 1 else []))

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.target}` made `{site.code}` at {site.file}:{site.line}: what it "
            "computes there is an inference tensor, which the training graph cannot save "
            "for backward; under no_grad the same values are ordinary tensors that record "
            "no graph. No value changes."
        )


KIND = InferenceToNoGrad()
