"""Turn any subset of sites into text edits, for the user (``.clone()``) or for trials.

Both renderings come from the same ``Site`` records, so the instrumented trial and the
patch shown to the user can never disagree about where an edit goes. Instrumentation
inserts text on existing lines only, so line numbers in trial tracebacks are the user's.
"""

from __future__ import annotations

from collections.abc import Iterable

from autoclone.codemods.sites import (
    CLONE,
    DETACH,
    INPLACE,
    INPLACE_FALSE,
    ITEM,
    NO_GRAD,
    OUT_OF_PLACE,
    STATEMENT,
    Site,
)
from autoclone.edits import TextEdit

#: Name of the run-time switch the trial bootstrap installs in ``builtins``.
SWITCH = "__autoclone__"

_Keyed = tuple[tuple[int, int, int, int], TextEdit]


def _keyed(site: Site, prefix: str, suffix: str) -> list[_Keyed]:
    """Order edits at one position: statements first, then closing text (innermost first),
    then opening text (outermost first), so nested expressions stay well formed."""
    (sl, sc), (el, ec) = site.start, site.end
    return [
        ((el, ec, 1, -site.depth), TextEdit(el, ec, suffix)),
        ((sl, sc, 2, site.depth), TextEdit(sl, sc, prefix)),
    ]


def _rewrite_edits(site: Site) -> list[_Keyed]:
    """An out-of-place rewrite: ``x = `` before the statement goes after a clone statement
    at the same place; parentheses around a right side nest like any other opening and
    closing text (the statement is shallower than anything inside it)."""
    keyed = []
    for edit in site.rewrite:
        if edit.text == "(":
            key = (edit.line, edit.col, 2, site.depth)
        elif edit.text == ")":
            key = (edit.line, edit.col, 1, -site.depth)
        else:
            key = (edit.line, edit.col, 0, 1)
        keyed.append((key, edit))
    return keyed


def _patch_edits(site: Site) -> list[_Keyed]:
    line, col = site.start
    if site.fix == NO_GRAD:  # its ``rewrite``: ``import torch`` where the file lacks it
        text = f"with torch.no_grad():\n{site.indent}    "
        indents = [((n, 0, 0, 0), TextEdit(n, 0, "    ")) for n in site.block]
        imports = [((e.line, e.col, -1, 0), e) for e in site.rewrite]
        return [*imports, ((line, col, 0, 0), TextEdit(line, col, text)), *indents]
    if site.rewrite:  # out of place, retain_graph, an accumulator's update as a number
        return _rewrite_edits(site)
    if site.fix == INPLACE_FALSE:
        return [((line, col, 0, 0), TextEdit(line, col, "False", delete=len("True")))]
    if site.fix == ITEM:
        return _keyed(site, "float(", ")")
    method = ".detach()" if site.fix == DETACH else ".clone()"
    if site.kind in (INPLACE, STATEMENT):  # a statement of its own, just before
        if site.own_line:
            return [((line, 0, 0, 0), TextEdit(line, 0, f"{site.indent}{site.code}\n"))]
        return [((line, col, 0, 0), TextEdit(line, col, f"{site.code}; "))]
    if site.parens:
        return _keyed(site, "(", f"){method}")
    return [((site.end[0], site.end[1], 1, -site.depth), TextEdit(*site.end, method))]


def _switch_edits(site: Site) -> list[_Keyed]:
    """An ``out_of_place`` site switches like an ``inplace`` clone: ``x = x.clone()`` then
    the original in-place statement leaves the old tensor intact and binds ``x`` to the
    same numbers ``x = x + y`` gives, without repeating (and so un-instrumenting) ``y``."""
    line, col = site.start
    if site.kind == INPLACE or site.fix == OUT_OF_PLACE:
        text = f"{site.target} = {SWITCH}({site.id!r}, {site.target}); "
        return [((line, col, 0, 0), TextEdit(line, col, text))]
    return _keyed(site, f"{SWITCH}({site.id!r}, ", ")")


def _ordered(keyed: Iterable[_Keyed]) -> list[TextEdit]:
    """The edits by position; an import that several sites add (the ``import torch`` of two
    ``no_grad`` blocks in one file, keyed ``-1``) once. Other equal edits all stay: nested
    switches close with equal parentheses at one place."""
    ordered = sorted(keyed, key=lambda pair: pair[0])
    imports = list(dict.fromkeys(edit for key, edit in ordered if key[2] == -1))
    return [*imports, *(edit for key, edit in ordered if key[2] != -1)]


def patch_edits(sites: Iterable[Site]) -> list[TextEdit]:
    """The plain edits a user reads in the patch: ``.clone()``, ``x = x + y``, ..."""
    return _ordered(k for site in sites for k in _patch_edits(site))


def instrument_edits(sites: Iterable[Site]) -> list[TextEdit]:
    """Every clone and out-of-place site wrapped in the run-time switch; disabled sites
    return their value as is. Other fixes are only ever tried as plain patched runs."""
    switched = (CLONE, OUT_OF_PLACE)
    return _ordered(k for site in sites if site.fix in switched for k in _switch_edits(site))
