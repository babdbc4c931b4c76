"""``inference_mode=False`` on the Lightning ``Trainer``: ``trainer.test()`` runs in
inference mode, where no step records a graph.

Lightning runs ``test``, ``validate`` and ``predict`` under ``torch.inference_mode()``
unless the Trainer is told otherwise, and no ``torch.enable_grad()`` in a ``test_step``
can record a graph there ("element 0 of tensors does not require grad"); a tensor such a
loop made (a rotary cache built lazily by a baseline ``trainer.validate()``) cannot be
saved for backward by ``fit()`` later ("Inference tensors cannot be saved for
backward"). ``Trainer(inference_mode=False)`` runs the same loops under
``torch.no_grad()``, which ``enable_grad()`` overrides and whose tensors are ordinary:
the maintainers' cure (Lightning issues 17653, 19910). The flag changes no value, only
how evaluation disables grad, so the backward calls the original completed before it
must come out the same.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from autoclone.classify import INFERENCE_TENSOR, INPUT_NO_GRAD, NO_GRAPH
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis
from autoclone.edits import TextEdit
from autoclone.fixes._ast import char_col
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked
from autoclone.parsed import parsed

KIND_NAME = "trainer_inference_mode"
_CLASSES = frozenset({NO_GRAPH, INFERENCE_TENSOR, INPUT_NO_GRAD})
_KEYWORD = "inference_mode=False"
_EVALUATION_CALL = re.compile(r"\.(?:validate|test|predict)\(")


def _edit(call: ast.Call, lines: list[str]) -> TextEdit | None:
    """The keyword inserted after the call's last argument (or into its empty parentheses)."""
    given: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    last = max(given, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0), default=None)
    if last is None:
        end_line = call.end_lineno or call.lineno
        return TextEdit(end_line, char_col(lines[end_line - 1], call.end_col_offset or 1) - 1,
                        _KEYWORD)  # fmt: skip
    line, col = last.end_lineno or last.lineno, last.end_col_offset or 0
    rest = lines[line - 1][char_col(lines[line - 1], col):]
    if rest.lstrip().startswith(","):  # a trailing comma: one argument per line
        indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
        return TextEdit(line + 1, 0, f"{indent}{_KEYWORD},\n")
    return TextEdit(line, char_col(lines[line - 1], col), f", {_KEYWORD}")


def _trainer_calls(text: str) -> list[ast.Call]:
    """``Trainer(...)`` calls of a file that imports Lightning, without ``inference_mode``."""
    if "lightning" not in text:
        return []
    return [n for n in ast.walk(parsed(text)) if isinstance(n, ast.Call)
            and ast.unparse(n.func).split(".")[-1] == "Trainer"
            and not any(k.arg == "inference_mode" for k in n.keywords)]  # fmt: skip


def sites(ctx: Context) -> list[Site]:
    """One site per Lightning ``Trainer(...)`` call of the user's files, in file order."""
    out = []
    for file, text in sorted(ctx.texts.items()):
        lines = ctx.lines.get(file, [])
        for call in _trainer_calls(text):
            edit = _edit(call, lines)
            if edit is not None:
                out.append(Site(id=f"{file}:{call.lineno}:{call.col_offset}:{KIND_NAME}",
                                file=file, line=call.lineno, col=call.col_offset,
                                kind=STATEMENT, target=ast.unparse(call.func), code=_KEYWORD,
                                start=(call.lineno, call.col_offset),
                                end=(call.lineno, call.col_offset), depth=0, fix=KIND_NAME,
                                rewrite=(edit,)))  # fmt: skip
    return out


def _evaluates(ctx: Context) -> bool:
    """The user's files run an evaluation loop (``trainer.validate(...)`` before ``fit``):
    a tensor it made under inference mode (a lazily built cache) may be what training
    cannot save."""
    return any(_EVALUATION_CALL.search(text) for text in ctx.texts.values())


class TrainerInferenceMode(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        in_loop = found.inference_loop and found.error_class in _CLASSES
        if not in_loop and not (found.error_class == INFERENCE_TENSOR and _evaluates(ctx)):
            return False
        try:
            return bool(sites(ctx))
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        each = sites(ctx)
        return ranked([[s] for s in each] + ([each] if len(each) > 1 else []), -1.0)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        after = (
            "where no torch.enable_grad() records a graph; with the flag off they run under "
            "torch.no_grad(), which enable_grad() overrides"
            if found.inference_loop
            else "and a tensor they make (a cache built on first use) is an inference tensor "
            "that training cannot save for backward; with the flag off they run under "
            "torch.no_grad() and make ordinary tensors"
        )
        return (
            f"Fix: `{site.target}(..., {_KEYWORD})` at {site.file}:{site.line}: Lightning runs "
            f"test, validate and predict under torch.inference_mode(), {after}. No value "
            "changes."
        )


KIND = TrainerInferenceMode()
