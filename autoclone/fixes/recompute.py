"""A value computed once in ``__init__`` from parameters becomes a property, computed at
each use: ``self.lengthscale = torch.exp(self.log_lengthscale)`` in a module's
constructor carries the graph of that one computation into every forward pass; the
first backward call frees it and the second runs into it ("Trying to backward through
the graph a second time"), or an optimizer step changes the parameter it saved. Even
where it ran, the value would stay at its initial number while the optimizer moved the
parameter it was meant to follow.

Recognised from the tracer's carry edge when the older graph was made by an assignment
``self.NAME = expr`` directly in a class's ``__init__``, and ``expr`` reads nothing of the
constructor's own (its arguments or locals), draws no random numbers, and ``NAME`` is
assigned nowhere else. The edit moves ``expr`` into ``@property def NAME(self)`` after
``__init__``, for that attribute and then with its siblings made the same way. A
``.detach()`` there would remove the error too, and freeze the parameter.

Judged like every detach (K steps with finite losses), and more strictly: the backward
calls the original completed must give the same losses and gradients, which a property
that recomputes the same value does (a random draw or a changed parameter would not).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone.codemods.sites import STATEMENT, Site
from autoclone.diagnose import Diagnosis, crosses_iterations, where
from autoclone.edits import TextEdit
from autoclone.fixes._ast import made_in_constructor
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.parsed import parsed

KIND_NAME = "recompute"
_RANDOM = frozenset({"rand", "randn", "randint", "randperm", "rand_like", "randn_like",
                     "normal", "normal_", "uniform_", "bernoulli", "multinomial", "dropout",
                     "random", "choice", "shuffle"})  # fmt: skip


def _init_of(tree: ast.Module, line: int) -> tuple[ast.ClassDef, ast.FunctionDef] | None:
    """The class and its ``__init__`` whose body holds, directly, the statement at ``line``."""
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                if any(s.lineno == line for s in fn.body):
                    return cls, fn
    return None


def _own_names(fn: ast.FunctionDef) -> set[str]:
    """The constructor's arguments and locals: a property cannot read them."""
    args = fn.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    stores = (n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Store))  # fmt: skip
    return (names | set(stores)) - {"self"}


def _movable(stmt: ast.stmt, own: set[str]) -> str:
    """``NAME`` when ``stmt`` is ``self.NAME = expr`` with an ``expr`` a property can
    recompute: it reads ``self`` and no constructor name, and draws nothing at random."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return ""
    target = stmt.targets[0]
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
        return ""
    if target.value.id != "self" or isinstance(stmt.value, (ast.Name, ast.Attribute)):
        return ""
    looped = {n.id for c in ast.walk(stmt.value) if isinstance(c, ast.comprehension)
              for n in ast.walk(c.target) if isinstance(n, ast.Name)}  # ``for w in ...``
    read = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)} - looped
    called = {n.attr for n in ast.walk(stmt.value) if isinstance(n, ast.Attribute)}
    called |= read
    if "self" not in read or read & own or called & _RANDOM:
        return ""
    return target.attr


def _assigned_once(tree: ast.Module, name: str) -> bool:
    stores = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == name
              and isinstance(n.ctx, ast.Store)]  # fmt: skip
    return len(stores) == 1


def _site(file: str, text: str, stmt: ast.Assign, fn: ast.FunctionDef, name: str) -> Site:
    """The edit: the statement's lines go, a property after ``__init__`` returns its value."""
    value = ast.get_source_segment(text, stmt.value) or ""
    indent = " " * fn.col_offset
    body = f"\n{indent}@property\n{indent}def {name}(self):\n{indent}    return {value}\n"
    end = stmt.end_lineno or stmt.lineno
    drops = tuple(TextEdit(n, 0, "", drop_line=True) for n in range(stmt.lineno, end + 1))
    after = (fn.end_lineno or fn.lineno) + 1
    return Site(id=f"{file}:{stmt.lineno}:0:recompute:{name}", file=file, line=stmt.lineno,
                col=stmt.col_offset, kind=STATEMENT, target=f"self.{name}", code=value,
                start=(stmt.lineno, stmt.col_offset), end=(end, stmt.end_col_offset or 0),
                depth=0, fix=KIND_NAME, rewrite=(*drops, TextEdit(after, 0, body)),
                after=after - 1)  # fmt: skip


def movable_sites(found: Diagnosis, ctx: Context) -> list[Site]:
    """The producing assignment, then its siblings in the same ``__init__``."""
    made = found.carry_producer
    text = ctx.texts.get(made[0], "") if made else ""
    try:
        tree = parsed(text)
    except SyntaxError:
        return []
    where_ = _init_of(tree, made[1]) if made else None
    if made is None or where_ is None:
        return []
    fn, own = where_[1], _own_names(where_[1])
    out = []
    for stmt in sorted(fn.body, key=lambda s: (s.lineno != made[1], s.lineno)):
        name = _movable(stmt, own)
        if name and _assigned_once(tree, name) and len(fn.body) > 1:
            out.append(_site(made[0], text, stmt, fn, name))  # type: ignore[arg-type]
    return out if out and out[0].line == made[1] else []


class Recompute(Kind):
    name = KIND_NAME
    reference = NONE
    keeps_prefix = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return crosses_iterations(found) and made_in_constructor(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        sites = movable_sites(found, ctx)
        every = tuple(sorted(sites, key=lambda s: s.line))  # properties in the file's order
        sets = [tuple(sites[:1]), every] if len(sites) > 1 else [every]
        return [Candidate(-2.0 + i / 100, s) for i, s in enumerate(sets)]  # before a detach

    def refusal(self, found: Diagnosis, ctx: Context) -> str:
        return (
            f"the graph was built in a constructor, at {where(found.carry_producer, ctx.lines)}"
            ", from values that train: a detach would stop them training, and that value "
            "cannot be moved into a property as it is (it reads the constructor's own "
            "arguments or locals, draws random numbers, or is assigned elsewhere)"
        )

    def advice(self, found: Diagnosis, ctx: Context) -> str:
        return (
            "Compute that value where it is used (in `forward`, or in a `@property`), from "
            "the parameters, so each forward pass builds its own graph."
        )

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.target}` becomes a "
            f"property returning `{site.code}`: computed once in `__init__`, it carried the "
            "graph of that one computation into every forward pass, and the backward call at "
            f"{where(found.previous_backward or found.failing, lines)} freed it. Recomputed "
            "at each use, every forward pass builds its own graph from the parameters as "
            "they are now."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        names = ", ".join(f"`{s.target}`" for s in chosen)
        return [
            f"this changes what later steps compute, as training means: {names} now follow "
            "the parameters they are computed from after each optimizer step (the original "
            "would have kept their values from construction)"
        ]


KIND = Recompute()
