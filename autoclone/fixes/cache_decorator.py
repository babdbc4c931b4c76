"""A cache decorator undone where a later pass runs into the graph it kept: ``@lru_cache``
removed, ``@cached_property`` made ``@property``.

``@functools.lru_cache`` / ``@functools.cache`` are removed from the function that made
the graph (a relative-position bias gathered from a learned table and cached by sequence
length), and ``@functools.cached_property`` is made ``@property`` (every timestep's
embedding computed once from a trained MLP).

The cache hands every later call the tensor the first call made, with that call's graph;
the first backward call frees it, and the next pass's backward runs into it again ("Trying
to backward through the graph a second time"). ``retain_graph=True`` would keep the stale
graph (the table's later values never reach the bias), and a detach would freeze the
table. Without the cache the function computes its tensor from the current parameters at
every call: the same values on the first pass, so the backward calls the original
completed must come out the same. Judged otherwise like a cut: K steps with finite
losses, every tensor still trained.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autoclone.classify import BACKWARD_TWICE, INPLACE_VERSION
from autoclone.codemods.rewrites import line_dropped
from autoclone.codemods.sites import Site
from autoclone.diagnose import Diagnosis
from autoclone.edits import TextEdit
from autoclone.fixes._ast import FUNCTIONS
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked
from autoclone.parsed import innermost

KIND_NAME = "cache_decorator"
_CACHES = ("lru_cache", "cache")


def _caching(deco: ast.expr) -> bool:
    """``@functools.lru_cache(...)``, ``@lru_cache``, ``@functools.cache``, ``@cache``."""
    func = deco.func if isinstance(deco, ast.Call) else deco
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    owner = func.value if isinstance(func, ast.Attribute) else None
    return name in _CACHES and (owner is None or ast.unparse(owner) == "functools")


def sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """The cache decorator of each user function the carried graph was made in."""
    frames = found.producer_frames or ((found.carry_producer,) if found.carry_producer else ())
    out: list[Site] = []
    for file, line in frames:
        text = ctx.texts.get(file, "")
        fn = innermost(text, line, FUNCTIONS) if text else None
        if not isinstance(fn, FUNCTIONS):
            continue
        for deco in fn.decorator_list:
            if _caching(deco) and deco.lineno == deco.end_lineno:
                code = ctx.line(file, deco.lineno).strip()
                site = line_dropped(file, deco.lineno, code, fn.name, KIND_NAME)
            elif _cached_property(deco):
                site = _as_property(file, deco, fn.name)
            else:
                continue
            if site not in out:
                out.append(site)
    return out


def _cached_property(deco: ast.expr) -> bool:
    """``@functools.cached_property`` or ``@cached_property``: the first value, with its
    graph, kept on the instance for good."""
    return isinstance(deco, ast.Name | ast.Attribute) and ast.unparse(deco) in (
        "cached_property", "functools.cached_property")  # fmt: skip


def _as_property(file: str, deco: ast.expr, name: str) -> Site:
    """``@cached_property`` made ``@property``: read as before, computed at each read."""
    line, col, text = deco.lineno, deco.col_offset, ast.unparse(deco)
    return Site(id=f"{file}:{line}:{col}:{KIND_NAME}", file=file, line=line, col=col,
                kind="decorator", target=name, code="@property", start=(line, col),
                end=(line, col + len(text)), depth=0, fix=KIND_NAME,
                rewrite=(TextEdit(line, col, "property", delete=len(text)),))  # fmt: skip


class CacheDecorator(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class not in (BACKWARD_TWICE, INPLACE_VERSION):
            return False
        try:
            return bool(sites(found, ctx))
        except SyntaxError:
            return False

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return ranked([[s] for s in sites(found, ctx)], -1.0)

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        if site.code == "@property":
            return (
                f"Fix: `@cached_property` made `@property` on `{site.target}` "
                f"({site.file}:{site.line}): the instance kept the first value with a graph the "
                "first backward call freed; as a property each read computes it from the "
                "current parameters (the same values on the first pass)."
            )
        return (
            f"Fix: `{site.code}` removed from `{site.target}` ({site.file}:{site.line}): the "
            "cache handed every later call the tensor the first call made, with a graph the "
            "first backward call freed; without it each call computes its tensor from the "
            "current parameters (the same values on the first pass)."
        )


KIND = CacheDecorator()
