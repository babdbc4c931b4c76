"""A call's ``out=`` dropped where autograd refuses it ("cat(): functions with out=...
arguments don't support automatic differentiation, but one of the arguments requires
grad").

A "memory-efficient" DenseNet writes each layer's concatenated input into one shared
buffer, ``concat = torch.cat(features, 1, out=buf[:, :width])``, to save memory. A call
that writes into ``out=`` records no graph, so autograd refuses it for inputs that
require grad. The values the program reads are the call's result: without ``out=`` the
result is the same tensor of numbers in new memory, and the graph is recorded. Wrapping
the call in ``no_grad`` or detaching its inputs instead runs into the next layer's write
over the saved buffer, or trains nothing through the concatenation.

Offered where the result is read (assigned, or an argument), and the buffer given as
``out=`` is read nowhere else (it would then miss the values the call no longer writes
into it): in the function, for a local name; in the file, for an attribute. Judged like
a cut (the original completed no call past this one): K steps with finite losses, every
tensor an optimizer updates still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import OUT_ARGUMENT
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import FUNCTIONS, argument_cut
from autoclone.fixes.base import NONE, Context, Kind
from autoclone.parsed import innermost, parsed

KIND_NAME = "out_dropped"


def _root(node: ast.expr) -> str | None:
    """The name an ``out=`` expression writes into: ``buf`` of ``buf[:, :width]``."""
    while isinstance(node, ast.Subscript | ast.Attribute) and not (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):  # fmt: skip
        node = node.value
    return ast.unparse(node) if isinstance(node, ast.Name | ast.Attribute) else None


def _read_elsewhere(scope: ast.AST, root: str, out: ast.expr) -> bool:
    """``root`` is read in ``scope`` outside the ``out=`` expression itself."""
    inside = {id(n) for n in ast.walk(out)}
    return any(
        isinstance(n, ast.Name | ast.Attribute) and isinstance(n.ctx, ast.Load)
        and ast.unparse(n) == root and id(n) not in inside
        for n in ast.walk(scope)
    )  # fmt: skip


def site(found: Diagnosis, ctx: Context) -> Site | None:
    """``, out=...`` removed from the failing line's call whose result is read."""
    if found.failing is None:
        return None
    file, line = found.failing
    text = ctx.texts.get(file, "")
    if not text:
        return None
    tree = parsed(text)
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and call.lineno <= line <= (call.end_lineno or 0)):
            continue
        out = next((k for k in call.keywords if k.arg == "out"), None)
        if out is None or isinstance(parents.get(id(call)), ast.Expr):
            continue  # the result discarded: the buffer is what the program reads
        root = _root(out.value)  # an attribute may be read by any method of the file
        scope = tree if root is None or "." in root else innermost(text, line, FUNCTIONS) or tree
        if root is None or _read_elsewhere(scope, root, out.value):
            return None
        return _dropped(file, text, call, out, root)
    return None


def _dropped(file: str, text: str, call: ast.Call, out: ast.keyword, root: str) -> Site | None:
    """``out=`` removed with the separator before it (``fixes._ast.argument_cut``)."""
    cut = argument_cut(text.splitlines(), call, out)
    if cut is None:
        return None
    line_text = text.splitlines()[cut.line - 1]
    source = ast.get_source_segment(text, call) or ""
    code = source.replace(line_text[cut.col : cut.col + cut.delete], "", 1)
    return Site(id=f"{file}:{call.lineno}:{call.col_offset}:{KIND_NAME}", file=file,
                line=cut.line, col=cut.col, kind="keyword", target=root, code=code,
                start=(cut.line, cut.col), end=(cut.line, cut.col + cut.delete), depth=0,
                fix=KIND_NAME, rewrite=(cut,))  # fmt: skip


class OutDropped(Kind):
    name = KIND_NAME
    classes = (OUT_ARGUMENT,)
    reference = NONE
    keeps_prefix = True

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return [s for s in (site(found, ctx),) if s is not None]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: a call that writes "
            f"into `out=` records no graph; the program reads its result, which without "
            f"`out=` holds the same numbers in new memory, with the graph recorded. Nothing "
            f"else reads `{site.target}`."
        )

    def advice(self, found: Diagnosis, ctx: Context) -> str:
        return (
            "Drop out= where the result is what the program reads; a buffer reused across "
            "layers cannot also hold what autograd saved (gradient checkpointing saves the "
            "memory instead)"
        )


KIND = OutDropped()
