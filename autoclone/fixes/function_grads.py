"""``None`` appended to what a custom Function's ``backward`` returns, one per forward
input it gives no gradient for ("returned an incorrect number of gradients (expected 2,
got 1)").

``backward`` must return one gradient per input of ``forward``; an input that needs none
(a Python float bound, a flag) gets ``None``, which is what the missing ones mean when
the author wrote the gradients of the leading inputs only. Where an omitted input is a
tensor the program trains, ``None`` would silently stop its training: the judge rejects
that (every tensor the original trained must still get a gradient), and the report
leaves the gradient to the author. Judged like a cut: K steps with finite losses.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from autoclone.classify import CUSTOM_FUNCTION
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis
from autoclone.edits import TextEdit
from autoclone.fixes._ast import char_col
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.oracle import Reference, shape_text
from autoclone.outcomes import Failed, Outcome, Passed
from autoclone.parsed import parsed
from autoclone.trial import RunResult

KIND_NAME = "function_grads"
_COUNT = re.compile(
    r"function (\w+?)Backward returned an incorrect number of gradients "
    r"\(expected (\d+), got (\d+)\)",
    re.IGNORECASE,
)


def _returns(cls: ast.ClassDef) -> list[ast.Return]:
    fns = [f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "backward"]
    return [n for f in fns for n in ast.walk(f) if isinstance(n, ast.Return)]


def _count(value: ast.expr | None) -> int:
    return len(value.elts) if isinstance(value, ast.Tuple) else (0 if value is None else 1)


def padded(found: Diagnosis, ctx: Context) -> list[Site]:
    """Every ``return`` of the named Function's ``backward`` with the missing ``None``s,
    where each returns as many values as the message says it got."""
    match = _COUNT.search(found.message)
    if match is None:
        return []
    name, expected, got = match.group(1), int(match.group(2)), int(match.group(3))
    if got >= expected:
        return []
    for file, text in sorted(ctx.texts.items()):
        for cls in ast.walk(parsed(text)):
            if isinstance(cls, ast.ClassDef) and cls.name == name:
                returns = _returns(cls)
                fits = returns and all(_count(r.value) == got and r.lineno == r.end_lineno
                                       for r in returns)  # fmt: skip
                return [_site(file, text, r, expected - got) for r in returns] if fits else []
    return []


def _site(file: str, text: str, ret: ast.Return, missing: int) -> Site:
    value = ret.value
    assert value is not None
    old = ast.get_source_segment(text, value) or ""
    elts = value.elts if isinstance(value, ast.Tuple) else [value]
    new = ", ".join([*(ast.get_source_segment(text, e) or "" for e in elts), *["None"] * missing])
    line = text.splitlines()[ret.lineno - 1]
    col = char_col(line, value.col_offset)
    return Site(id=f"{file}:{ret.lineno}:{col}:{KIND_NAME}", file=file, line=ret.lineno,
                col=col, kind=STATEMENT, target=old, code=f"return {new}",
                start=(ret.lineno, col), end=(ret.lineno, col), depth=0, fix=KIND_NAME,
                rewrite=(TextEdit(ret.lineno, col, new, delete=len(old)),))  # fmt: skip


class FunctionGrads(Kind):
    name = KIND_NAME
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class != CUSTOM_FUNCTION:
            return False
        try:
            return bool(padded(found, ctx))
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        sites = padded(found, ctx)
        return [Candidate(0.0, tuple(sites))] if sites else []

    def judge(self, run: RunResult, reference: Reference, ctx: Context) -> Outcome:
        """As a cut, and no tensor an optimizer updates left without a gradient: a
        ``None`` for an input the program trains would freeze it."""
        outcome = super().judge(run, reference, ctx)
        if not isinstance(outcome, Passed) or not run.ungraded:
            return outcome
        shapes = ", ".join(shape_text(s) for s in sorted(run.ungraded))
        return Failed("numbers", f"no gradient reaches tensors an optimizer updates ({shapes}): "
                      "an input given None is trained")  # fmt: skip

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        if not padded(found, ctx):
            return ""
        return (
            "the inputs backward gives no gradient for include a tensor the program trains, "
            "so None would freeze it: that gradient is the Function's author's to write"
        )

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` at {site.file}:{site.line}: backward returns one gradient per "
            "input of forward, and None for an input that needs none (a number, a flag); "
            "every tensor the program trains was checked to still get its gradient."
        )


KIND = FunctionGrads()
