"""``cached=True`` made ``cached=False`` where a layer built with it caches a tensor
carrying a graph later passes run into again (a graph convolution's normalisation made
from learned edge weights).

A layer's cache (PyG's ``GCNConv(cached=True)``) keeps what its first call computed and
hands it to every later call, with that call's graph: the first backward call frees it,
and the next pass's backward runs into it again ("Trying to backward through the graph a
second time"). The cache is only right when what it keeps never changes; here it is made
from parameters the optimizer updates. ``retain_graph=True`` would keep the stale graph
and a detach would stop those parameters' training. Without the cache the layer computes
the tensor from the current parameters at every call: the same values on the first
pass, so the backward calls the original completed must come out the same. Judged
otherwise like a cut: K steps with finite losses, every tensor still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from autoclone.classify import BACKWARD_TWICE, INPLACE_VERSION
from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis
from autoclone.edits import TextEdit
from autoclone.fixes._ast import called_name, char_col
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import innermost, parsed

KIND_NAME = "cache_flag"
_FLAGS = ("cached", "cache")


def _flag(call: ast.Call) -> ast.keyword | None:
    """The call's ``cached=True`` (or ``cache=True``) keyword."""
    return next((k for k in call.keywords if k.arg in _FLAGS and isinstance(k.value, ast.Constant)
                 and k.value.value is True), None)  # fmt: skip


def _built(found: Diagnosis, ctx: Context) -> Iterator[tuple[str, set[str], set[str]]]:
    """For each user file of a producer frame: the classes whose methods made the
    carried value, and the ``self.<attr>`` layers those frames' lines call."""
    frames = found.producer_frames or ((found.carry_producer,) if found.carry_producer else ())
    for file, line in frames:
        text = ctx.texts.get(file, "")
        if not text:
            continue
        cls = innermost(text, line, (ast.ClassDef,))
        classes = {cls.name} if isinstance(cls, ast.ClassDef) else set()
        called = {n.func.attr for n in ast.walk(parsed(text)) if isinstance(n, ast.Call)
                  and isinstance(n.func, ast.Attribute) and n.lineno <= line <= (n.end_lineno or 0)
                  and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"}  # fmt: skip
        yield file, classes, called


def sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """``cached=True`` on every construction of a layer the carried value was made in."""
    classes: set[str] = set()
    layers: set[str] = set()
    for _, made_in, called in _built(found, ctx):
        classes |= made_in
        layers |= called
    out: list[Site] = []
    for file, text in sorted(ctx.texts.items()):
        for node in ast.walk(parsed(text)):
            call = node.value if isinstance(node, ast.Assign) else node
            if not isinstance(call, ast.Call) or _flag(call) is None:
                continue
            attrs = {t.attr for t in getattr(node, "targets", ()) if isinstance(t, ast.Attribute)}
            if called_name(call.func) in classes or attrs & layers:
                site = _site(file, text, call)
                if site not in out:
                    out.append(site)
    return out


def _site(file: str, text: str, call: ast.Call) -> Site:
    keyword = _flag(call)
    assert keyword is not None
    value = keyword.value
    line = text.splitlines()[value.lineno - 1]
    col = char_col(line, value.col_offset)
    code = f"{called_name(call.func)}(..., {keyword.arg}=False)"
    return Site(id=f"{file}:{value.lineno}:{col}:{KIND_NAME}", file=file, line=value.lineno,
                col=col, kind=STATEMENT, target=f"{keyword.arg}=True", code=code,
                start=(value.lineno, col), end=(value.lineno, col), depth=0, fix=KIND_NAME,
                rewrite=(TextEdit(value.lineno, col, "False", delete=len("True")),))  # fmt: skip


class CacheFlag(Kind):
    name = KIND_NAME
    classes = (BACKWARD_TWICE, INPLACE_VERSION)
    reference = NONE
    keeps_prefix = True

    def edits(self, found: Diagnosis, ctx: Context) -> list[Site]:
        return sites(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        found_sites = sites(found, ctx)
        return [Candidate(-1.0, tuple(found_sites))] if found_sites else []

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix: `{site.code}` at {site.file}:{site.line}: the layer's cache handed every "
            "later call what its first call computed, with a graph the first backward call "
            "freed, though it is made from parameters the optimizer updates; without the "
            "cache each call computes it from the current parameters (the same values on the "
            "first pass)."
        )


KIND = CacheFlag()
