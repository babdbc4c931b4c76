"""Fixes other than a clone, derived from the clone sites so ids and positions agree.

* ``detach``: the same place as a clone site, ``.detach()`` instead of ``.clone()``;
  allowed only where the tracer shows a graph reaching across iterations. A state held
  as one tuple gets ``hidden = tuple(h.detach() for h in hidden)`` before its reader.
* ``item``: an accumulator's value without its graph, ``float(total_loss)``.
* ``inplace_false``: ``inplace=True`` turned off where a library module was built.
* ``no_grad``: an in-place statement wrapped in ``with torch.no_grad():``; the cure for
  updating a leaf that requires grad (manual SGD).
* ``retain_graph``: ``retain_graph=True`` on the first of two backward calls that run
  through one graph in one iteration (two losses, one forward pass).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import replace

from autoclone.codemods.sites import (
    ARG,
    DETACH,
    INPLACE,
    INPLACE_FALSE,
    ITEM,
    NO_GRAD,
    OUT_OF_PLACE,
    RETAIN_GRAPH,
    STATEMENT,
    Site,
)
from autoclone.edits import TextEdit

_IMPORTS_TORCH = re.compile(r"^import torch\s*(#.*)?$", re.MULTILINE)
_INPLACE_TRUE = re.compile(r"\binplace\s*=\s*(True)\b")
_COMPOUND = frozenset({"if", "elif", "else:", "for", "while", "with", "try:", "def", "class"})
_BACKWARD = re.compile(r"(\.backward|\bautograd\.backward)\(")


def imports_torch(source: str) -> bool:
    """``import torch`` at the top level: an edit may then name ``torch``."""
    return _IMPORTS_TORCH.search(source) is not None


def as_detach(site: Site) -> Site | None:
    """The clone site read as a detach; in-place targets have no detach form."""
    if site.kind == INPLACE:
        return None
    return replace(site, id=f"{site.id}:detach", fix=DETACH,
                   code=site.code.removesuffix(".clone()") + ".detach()")  # fmt: skip


def as_tuple_detach(site: Site) -> Site | None:
    """A carried state held as one tuple (an LSTM's ``hidden = (h, c)``) has no
    ``.detach()``: each of its tensors is detached, on a line of its own just before the
    statement that carries it into the next iteration, where people write it."""
    return _line_detach(site, many=True, maybe_none=False)


def as_optional_detach(site: Site) -> Site | None:
    """A state that starts as ``None`` (``h = None`` before the loop, as in most RNN
    tutorials): ``h = None if h is None else h.detach()`` before the carrying statement."""
    return _line_detach(site, many=False, maybe_none=True)


def as_optional_tuple_detach(site: Site) -> Site | None:
    """A tuple state that starts as ``None``: detached tensor by tensor once it exists."""
    return _line_detach(site, many=True, maybe_none=True)


def detach_after(
    file: str, line: int, text: str, name: str, *, many: bool = False, maybe_none: bool = False
) -> Site | None:
    """``name = name.detach()`` on a line of its own right after the backward call on
    ``text``: the graph is cut exactly where backward has used it, so values accumulated
    between two backward calls (gradient accumulation) keep their graph, and only what
    outlives a backward call loses it. None for a call that is not a statement of its own."""
    span = _backward_span(text)
    stripped = text.strip()
    if span is None or text[span[1] + 1 :].strip()[:1] not in ("", "#"):
        return None
    if stripped.endswith(":") or stripped.split(" ", 1)[0] in _COMPOUND:
        return None
    indent = text[: len(text) - len(text.lstrip())]
    value = _detached(name, many=many, maybe_none=maybe_none)
    kind = ("tuple" if many else "tensor") + ("_or_none" if maybe_none else "")
    start = (line + 1, len(indent))
    return Site(id=f"{file}:{line}:0:detach_after:{name}:{kind}", file=file, line=line + 1,
                col=len(indent), kind=STATEMENT, target=name, code=f"{name} = {value}",
                start=start, end=start, depth=0, own_line=True, indent=indent, fix=DETACH,
                assigned=name, after=line)  # fmt: skip


def together(sites: Sequence[Site]) -> Site:
    """Several ``name = name.detach()`` statements at one place as the one line people
    write for a state of several tensors: ``h, c = h.detach(), c.detach()``."""
    names, values = zip(*(site.code.split(" = ", 1) for site in sites), strict=True)
    first = sites[0]
    return replace(first, id="+".join(site.id for site in sites), target=", ".join(names),
                   code=f"{', '.join(names)} = {', '.join(values)}", assigned="")  # fmt: skip


def detach_before(file: str, line: int, indent: str, name: str) -> Site:
    """``name = name.detach()`` on a line of its own just before ``line`` (a loop that
    carries ``name`` from one call of its function into the next)."""
    start = (line, len(indent))
    return Site(id=f"{file}:{line}:0:detach_before:{name}", file=file, line=line,
                col=len(indent), kind=STATEMENT, target=name, code=f"{name} = {name}.detach()",
                start=start, end=start, depth=0, own_line=True, indent=indent, fix=DETACH,
                assigned=name)  # fmt: skip


def _detached(name: str, *, many: bool, maybe_none: bool) -> str:
    each = "t" if name == "h" else "h"
    value = f"tuple({each}.detach() for {each} in {name})" if many else f"{name}.detach()"
    return f"None if {name} is None else {value}" if maybe_none else value


def _line_detach(site: Site, *, many: bool, maybe_none: bool) -> Site | None:
    if site.kind != ARG or not site.before or not site.target.isidentifier():
        return None
    name = site.target
    value = _detached(name, many=many, maybe_none=maybe_none)
    suffix = ("detach_tuple" if many else "detach_line") + ("_or_none" if maybe_none else "")
    start = (site.before, len(site.indent))
    return replace(site, id=f"{site.id}:{suffix}", kind=STATEMENT, fix=DETACH,
                   code=f"{name} = {value}", line=site.before, col=start[1], start=start,
                   end=start, own_line=True, parens=False)  # fmt: skip


def as_item(site: Site) -> Site | None:
    """An accumulator read as a plain number: ``float(total)`` works for a 0 start value
    and for a one-element tensor alike, and drops the tensor's graph."""
    if site.kind == INPLACE:
        return None
    return replace(site, id=f"{site.id}:item", fix=ITEM, code=f"float({site.target})")


def as_item_update(site: Site) -> Site | None:
    """An accumulator updated in place (``total += loss``), as a plain number plus this
    step's term: ``total = float(total) + loss``, from the statement's out-of-place form."""
    if site.fix != OUT_OF_PLACE or not site.rewrite:
        return None
    first, *rest = site.rewrite
    prefix = f"= {site.target} "
    if not first.text.startswith(prefix) or not site.code.startswith(f"{site.target} {prefix}"):
        return None
    text = f"= float({site.target}) " + first.text[len(prefix) :]
    code = site.code.replace(prefix, f"= float({site.target}) ", 1)
    return replace(site, id=f"{site.id}:item", fix=ITEM, code=code,
                   rewrite=(replace(first, text=text), *rest))  # fmt: skip


def as_no_grad(site: Site, source: str, block: tuple[int, ...] = ()) -> Site | None:
    """The in-place statement of an ``inplace`` site, and the update statements right
    below it (``block``), run under ``torch.no_grad()``; in a module that imports only
    ``torch.nn.functional as F`` (a training step's own file), with ``import torch``."""
    if site.kind != INPLACE or not site.own_line:
        return None
    imported = () if imports_torch(source) else torch_import(source)
    if imported is None:
        return None
    lines = source.splitlines()
    body = "; ".join(lines[n - 1].strip() for n in (site.line, *block))
    return replace(site, id=f"{site.id}:no_grad", fix=NO_GRAD, block=block,
                   code=f"with torch.no_grad(): {body}", rewrite=imported)  # fmt: skip


def torch_import(source: str) -> tuple[TextEdit] | None:
    """``import torch`` on a line of its own before the module's first import (after its
    docstring and ``from __future__`` imports), or None where the source does not parse."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    future = [n for n in body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    docstring = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(
        getattr(body[0], "value", None), ast.Constant) else []  # fmt: skip
    rest = [n for n in body if n not in future and n not in docstring]
    imports = [n for n in rest if isinstance(n, (ast.Import, ast.ImportFrom))]
    if imports:
        return (TextEdit(imports[0].lineno, 0, "import torch\n"),)
    after = (future or docstring)[-1:]
    line = (after[0].end_lineno or after[0].lineno) + 1 if after else 1
    return (TextEdit(line, 0, "import torch\n"),)


def inplace_false(file: str, line: int, text: str) -> list[Site]:
    """``inplace=True`` on a module's construction line, turned off: the module then
    writes its result into a new tensor and the one autograd saved stays intact."""
    sites = []
    for match in _INPLACE_TRUE.finditer(text):
        col = match.start(1)
        code = text[: match.start(1)].strip() + "False" + text[match.end(1) :].rstrip()
        sites.append(Site(id=f"{file}:{line}:{col}:inplace_false", file=file, line=line,
                          col=col, kind="keyword", target="inplace=True", code=code,
                          start=(line, col), end=(line, col + 4), depth=0,
                          fix=INPLACE_FALSE))  # fmt: skip
    return sites


def retain_graph(file: str, line: int, text: str) -> list[Site]:
    """``retain_graph=True`` in the backward call on ``text``: the graph's buffers then
    outlive it, for the second backward call through the same graph. Only a call that
    opens and closes on this line and does not set ``retain_graph`` already."""
    span = _backward_span(text)
    if span is None or "retain_graph" in text:
        return []
    opened, close = span
    inner = text[opened:close].strip()
    if not inner:
        insert = "retain_graph=True"
    else:
        insert = (" " if inner.endswith(",") else ", ") + "retain_graph=True"
    code = (text[:close] + insert + text[close:]).strip()
    return [Site(id=f"{file}:{line}:{close}:retain_graph", file=file, line=line, col=close,
                 kind="keyword", target=backward_call(text) or "", code=code,
                 start=(line, close), end=(line, close), depth=0, fix=RETAIN_GRAPH,
                 rewrite=(TextEdit(line, close, insert),))]  # fmt: skip


def backward_call(text: str) -> str | None:
    """The backward call on ``text`` (``loss.backward()``), with what comes before it on
    the line, when it opens and closes there."""
    span = _backward_span(text)
    return text[: span[1] + 1].strip() if span else None


def _backward_span(text: str) -> tuple[int, int] | None:
    """Where the backward call's arguments start and its closing parenthesis stands."""
    match = _BACKWARD.search(text)
    close = _closing(text, match.end()) if match else None
    return (match.end(), close) if match and close is not None else None


def _closing(text: str, start: int) -> int | None:
    """Index of the parenthesis closing the one opened just before ``start``."""
    depth = 1
    for index in range(start, len(text)):
        if text[index] in "([{":
            depth += 1
        elif text[index] in ")]}":
            depth -= 1
            if depth == 0:
                return index
        elif text[index] in "\"'#":
            return None  # strings and comments: leave such lines alone
    return None


def statement_replaced(
    file: str, node: ast.stmt, code: str, fix: str, key: str, target: str
) -> Site:
    """``node``'s lines replaced by the one statement ``code`` at its indentation: a loop
    rewritten as the list it means, a loop of in-place detaches as one detach."""
    indent = " " * node.col_offset
    end = node.end_lineno or node.lineno
    drops = tuple(TextEdit(n, 0, "", drop_line=True) for n in range(node.lineno, end + 1))
    edits = (*drops, TextEdit(node.lineno, 0, f"{indent}{code}\n"))
    return Site(id=f"{file}:{node.lineno}:{node.col_offset}:{key}", file=file, line=node.lineno,
                col=node.col_offset, kind=STATEMENT, target=target, code=code,
                start=(node.lineno, node.col_offset), end=(end, 0), depth=0, indent=indent,
                fix=fix, rewrite=edits)  # fmt: skip


def line_dropped(
    file: str, line: int, code: str, target: str, fix: str, end: int | None = None
) -> Site:
    """The statement ``code`` on ``line`` (to ``end``) removed: a decorator that disables
    grad or caches a tensor, a memo's early return."""
    last = end or line
    return Site(id=f"{file}:{line}:0:{fix}", file=file, line=line, col=0, kind=STATEMENT,
                target=target, code=code, start=(line, 0), end=(last, 0), depth=0, fix=fix,
                rewrite=tuple(TextEdit(n, 0, "", drop_line=True)
                              for n in range(line, last + 1)))  # fmt: skip


def statement_moved(file: str, line: int, code: str, to: int, indent: str, fix: str) -> Site:
    """The one-line statement ``code`` on ``line`` dropped and written again before line
    ``to`` at ``indent``: an optimizer step after the last differentiation of its graph,
    a ``requires_grad_()`` above the forward that needs it."""
    edits = (TextEdit(line, 0, "", drop_line=True), TextEdit(to, 0, f"{indent}{code}\n"))
    return Site(id=f"{file}:{line}:0:{fix}:{to}", file=file, line=to, col=len(indent),
                kind=STATEMENT, target=code, code=code, start=(to, 0), end=(to, 0), depth=0,
                indent=indent, fix=fix, rewrite=edits)  # fmt: skip
