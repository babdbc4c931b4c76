"""An in-place write into a function's argument (``token += pos`` in a helper that two
decoders call on one tensor, ``x += pos`` in a helper that returns queries and keys made
from it), made out of place: ``token = token + pos``.

The write leaks into the caller's tensor, so the second caller reads what the first one
wrote. The program PyTorch would run without the error (``allow_mutation_on_saved_tensors``)
keeps that leak, and a clone of what was saved reproduces it: the numbers match, and the
model trains differently from what its author meant. The out-of-place write is almost
always the intent where the helper returns a result (the argument it wrote, or values made
from it), so it is tried first there; when it computes the original's numbers nothing
more is said, and when it does not (the leak reached a later read), it is accepted with K
finite steps and the report says, naming the read, that what the caller sees changes.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from autoclone import classify as cls
from autoclone.codemods.sites import CLONE, INPLACE, OUT_OF_PLACE, STATEMENT, Site
from autoclone.diagnose import Diagnosis, where
from autoclone.fixes._ast import FUNCTIONS, assigned_pairs, innermost, returns_value
from autoclone.fixes._conflict import is_conflict
from autoclone.fixes.base import Candidate, Context, Kind
from autoclone.oracle import FINITE, Reference, judge
from autoclone.outcomes import Failed, Outcome
from autoclone.trial import RunResult


def returned_parameters(source: str, line: int) -> set[str]:
    """Parameters of the innermost function around ``line`` whose in-place write is
    incidental: the function gives its caller a result (``return token``, or other
    values: ``return self.q(x), self.k(x)``), so what the caller passed is an input, not
    an output, and a caller that reads its tensor again (a residual) gets the write it
    never asked for. A helper that returns nothing, or is named ``center_``, writes in
    place by design, and its callers may rely on it: that write is not this kind's."""
    best = innermost(source, line, FUNCTIONS)
    if not isinstance(best, FUNCTIONS) or best.name.endswith("_"):
        return set()
    args = best.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]} - {"self"}
    return names if returns_value(best) else set()


#: Methods and attributes whose result shares memory with their receiver: a write into
#: ``patches = imgs.unfold(2, p, p)`` is a write into the caller's ``imgs``.
_ALIASING = frozenset(
    {"unfold", "view", "view_as", "reshape", "reshape_as", "transpose", "permute", "t",
     "narrow", "select", "squeeze", "unsqueeze", "expand", "expand_as", "flatten",
     "unflatten", "movedim", "moveaxis", "swapaxes", "diagonal", "as_strided", "detach",
     "data", "T", "mT"}
)  # fmt: skip


def _alias_root(value: ast.expr) -> ast.expr:
    """What ``value`` is a view of: ``imgs`` for ``imgs.unfold(2, p, p).unfold(3, p, p)``,
    ``x`` for ``x[:, 0].data``; ``value`` itself for anything that makes a new tensor."""
    while True:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in _ALIASING:
            value = value.func.value
        elif isinstance(value, ast.Attribute) and value.attr in _ALIASING:
            value = value.value
        elif isinstance(value, ast.Subscript) and _basic_index(value.slice):
            value = value.value
        else:
            return value


def _basic_index(index: ast.expr) -> bool:
    """Integers, slices and ``None``/``...`` (a view), not a tensor or a list (a copy)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(isinstance(p, ast.Slice | ast.Constant) or (isinstance(p, ast.UnaryOp)
               and isinstance(p.operand, ast.Constant)) for p in parts)  # fmt: skip


def written_argument(source: str, line: int, target: str) -> str | None:
    """The argument of the innermost function around ``line`` (one that returns a
    result: :func:`returned_parameters`) that a write into ``target`` reaches: ``target``
    itself, or the argument it is a view of where the function binds it once
    (``patches = imgs.unfold(2, p, p)``, then ``patches.sub_(mean)``)."""
    params = returned_parameters(source, line)
    if target in params:
        return target
    fn = innermost(source, line, FUNCTIONS)
    if fn is None:
        return None
    binds = [value for node in ast.walk(fn) for name, value in assigned_pairs(node)
             if isinstance(name, ast.Name) and name.id == target]  # fmt: skip
    if len(binds) != 1:
        return None
    root = _alias_root(binds[0])
    return root.id if isinstance(root, ast.Name) and root.id in params else None


def argument_writes(found: Diagnosis, ctx: Context) -> list[Site]:
    """The out-of-place rewrite of the write, when what it writes is an argument of a
    function that returns a result, or a view of one."""
    write = found.mutation
    if write is None:
        return []
    text = ctx.texts.get(write[0], "")
    return [s for s in ctx.sites if (s.file, s.line) == write and s.fix == OUT_OF_PLACE
            and s.kind == STATEMENT and written_argument(text, write[1], s.target)]  # fmt: skip


def leaf_argument_clones(found: Diagnosis, ctx: Context) -> list[Site]:
    """A write into a leaf that requires grad (images kept for an input saliency) made
    by a helper into its own argument, which it returns: ``batch = batch.clone()`` first,
    so the helper writes into its own tensor and the caller's leaf stays as it was.
    ``torch.no_grad()`` is tried first; it fails where the value written must train."""
    write = found.mutation or found.failing
    if found.error_class != cls.LEAF_INPLACE or write is None:
        return []
    params = returned_parameters(ctx.texts.get(write[0], ""), write[1])
    return [s for s in ctx.sites if (s.file, s.line) == write and s.fix == CLONE
            and s.kind == INPLACE and s.target in params]  # fmt: skip


def _in_forward(found: Diagnosis, ctx: Context) -> bool:
    """The leaf is written by a module's ``forward`` into what it was given (a
    parametrization's ``X.tril_()``, handed the parameter itself): under ``no_grad`` the
    call would rewrite the caller's parameter on every forward, a projection the
    reference computes too, so the clone, which keeps the forward a function of its
    input, is tried before it."""
    write = found.mutation or found.failing
    text = ctx.texts.get(write[0], "") if write else ""
    fn = innermost(text, write[1], FUNCTIONS) if write and text else None
    return isinstance(fn, FUNCTIONS) and fn.name == "forward"


class ArgumentWrite(Kind):
    name = "argument_write"
    lenient = True

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        if found.error_class == cls.LEAF_INPLACE:
            return bool(leaf_argument_clones(found, ctx))
        return is_conflict(found) and bool(argument_writes(found, ctx))

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        rank = -0.5 if _in_forward(found, ctx) else 1.0  # a helper's: after no_grad
        leaf = [Candidate(rank, (s,)) for s in leaf_argument_clones(found, ctx)]
        return leaf + [Candidate(-2.0, (s,)) for s in argument_writes(found, ctx)]

    def judge(self, run: RunResult, reference: Reference, ctx: Context) -> Outcome:
        outcome = judge(run, reference)
        if isinstance(outcome, Failed) and outcome.kind == "numbers":
            return judge(run, Reference(FINITE, (), (), reference.steps))
        return outcome

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        if site.fix == CLONE:
            return (
                f"Fix: `{site.code}` just before {where((site.file, site.line), lines)}: "
                f"`{site.target}` is an argument of this function, a leaf the caller keeps "
                "(it requires grad); written in place, autograd refused the write. Cloned "
                "first, the function writes into its own tensor, and gradients reach both "
                "what it writes and the caller's tensor."
            )
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: `{site.target}` is "
            f"{_argument_words(site, lines)}; written in place, the write reached the caller's "
            "tensor, which autograd had saved. Out of place, the function computes the same "
            "value into a new tensor and the caller's tensor stays as it was."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        site = chosen[0]
        if site.fix == CLONE:
            return []
        frames = found.mutation_frames  # innermost first: the write, then its caller
        caller = frames[1] if len(frames) > 1 else None
        return [
            f"this changes what the caller sees: before, the in-place write into "
            f"`{site.target}` ({_argument_words(site, lines)}) inside the "
            f"function also changed the tensor the caller passed in, and later code read "
            f"the changed tensor (the call at {where(caller, lines)} received it); now it "
            "does not, and that is why the numbers differ from the original's. "
            "A clone where the tensor was saved would keep the leak and the original numbers "
            "instead; the out-of-place write is what such a helper almost always means"
        ]


def _argument_words(site: Site, lines: Mapping[str, list[str]]) -> str:
    text = "\n".join(lines.get(site.file, []))
    argument = written_argument(text, site.line, site.target)
    if argument in (None, site.target):
        return "an argument of this function"
    return f"a view of `{argument}`, an argument of this function"


KIND = ArgumentWrite()
