"""``.detach()`` (or ``float()`` for an accumulator) of a state carried from one iteration
into the next: ``h = h_next.detach()``, ``hidden = tuple(h.detach() for h in hidden)``,
``total_loss = float(total_loss) + loss``. It changes what is differentiated, so it is
offered only where the tracer's carry edge shows a graph reaching across iterations,
first right after the backward call (where the graph's use ends), and the report says
what is no longer differentiated. A patch is judged by K steps with finite losses.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence

from autoclone.codemods.rewrites import (
    as_detach,
    as_item,
    as_item_update,
    as_optional_detach,
    as_optional_tuple_detach,
    as_tuple_detach,
    detach_after,
    detach_before,
    together,
)
from autoclone.codemods.sites import (
    ARG,
    ASSIGN,
    DETACH,
    ITEM,
    OPERAND,
    OUT_OF_PLACE,
    STATEMENT,
    SUBSCRIPT,
    Site,
)
from autoclone.diagnose import Diagnosis, Frame, crosses_iterations, where
from autoclone.fixes._ast import (
    FUNCTIONS,
    LOOPS,
    Store,
    expression_names,
    holding,
    innermost,
    lines_of,
    made_in_constructor,
    self_attribute,
    stores_made_at,
)
from autoclone.fixes.base import NONE, Candidate, Context, Kind, ranked
from autoclone.parsed import parsed

_IDENTIFIER = re.compile(r"^[A-Za-z_][\w.]*$")
_BUILDS_LSTM = re.compile(r"\bLSTM(Cell)?\(")
_IDENTS = re.compile(r"[A-Za-z_]\w*")


def _carried(frame: Frame, sites: Sequence[Site], text: str = "") -> list[str]:
    """Variables read on the consumer line that are assigned on or after it: values that
    survive into the next iteration. Best first: assigned later in the loop body. Within
    the loop around the line (when ``text`` shows one), a name the loop assigns before
    the read (``data, y = get_batch(i)``) is fresh each pass, however often the function
    assigns it again further down (a validation loop), so it is not carried."""
    file, line = frame
    read = [s.target for s in sites if (s.file, s.line) == (file, line)
            and s.kind in (ARG, OPERAND) and _IDENTIFIER.match(s.target)]  # fmt: skip
    binds = [(name, s.line) for s in sites if s.file == file and s.kind == ASSIGN
             for name in s.bound]  # fmt: skip
    first, last = loop_of(text, line) if text else (0, 0)
    if first:
        fresh = stored(text, first, line - 1)
        binds = [(name, at) for name, at in binds if at <= last and name not in fresh]
    assigned: dict[str, int] = {}
    for name, at in binds:
        if at >= line:
            assigned[name] = at
    carried = [name for name in dict.fromkeys(read) if name in assigned]
    return sorted(carried, key=lambda name: -assigned[name])


def _carry_sets(frame: Frame, sites: Sequence[Site], text: str) -> list[list[Site | None]]:
    file, line = frame
    on_line = [s for s in sites if (s.file, s.line) == (file, line)]
    carried = _carried(frame, sites, text)
    reads = {n: [s for s in on_line if s.target == n and s.kind == ARG] for n in carried}
    sets: list[list[Site | None]] = []
    together = [as_detach(r[0]) for r in reads.values() if r]
    if len(together) > 1:
        sets.append(together)
    for name in carried:
        later = [s for s in sites if s.file == file and s.kind == ASSIGN and s.assigned == name
                 and s.line > line]  # fmt: skip
        sets += [[as_detach(s)] for s in sorted(later, key=lambda s: -s.line)]
        mine = [s for s in on_line if s.target == name and s.kind in (ARG, OPERAND)]
        variants = _read_variants(sites, _starts_as_none(name, text))
        sets += [[variant(s)] for s in mine for variant in variants]
    updates = [s for s in on_line if s.fix == OUT_OF_PLACE and s.kind == STATEMENT]
    sets += [[as_item_update(s)] for s in updates]  # ``total += loss`` carries ``total``
    return sets


def _after_backward_sets(
    found: Diagnosis, frames: Sequence[Frame], sites: Sequence[Site], texts: Mapping[str, str]
) -> list[list[Site | None]]:
    """The carried variables detached right after the backward call, tried first: that
    cuts the graph exactly at backward boundaries. A cut at every read would also cut
    between micro-steps of gradient accumulation, silently training on less data."""
    call = _end_of_pass(found, texts)
    if call is None:
        return []
    file, line = call
    lines = texts.get(file, "").splitlines()
    if not 0 < line < len(lines):
        return []
    scope = scope_of(texts[file], line)
    outer = next((f for f in frames if f[0] == file and scope_of(texts[file], f[1]) == scope),
                 None)  # fmt: skip
    if outer is None:
        return []
    updated = [s.target for s in sites if (s.file, s.line) == outer
               and s.fix == OUT_OF_PLACE and s.kind == STATEMENT]  # fmt: skip
    names = _made_first_names(
        found, file, texts[file], list(dict.fromkeys(_carried(outer, sites, texts[file]) + updated))
    )
    lstm = any(s.kind == ASSIGN and _BUILDS_LSTM.search(s.target) for s in sites)
    many = lstm and len(names) == 1  # an LSTM's state in one variable is the pair (h, c)
    text = lines[line - 1]
    each = [detach_after(file, line, text, name, many=many) for name in names]
    return _together_then_each(each)


def _end_of_pass(found: Diagnosis, texts: Mapping[str, str]) -> Frame | None:
    """The backward call after which a pass's carried state is cut: the previous call, or
    the failing one where both are in one body and it comes later (an actor's backward
    call, then the critic's whose graph held the state: after the critic's)."""
    before, failing = found.previous_backward, found.failing
    if before is None or failing is None or before[0] != failing[0]:
        return before or failing
    text = texts.get(failing[0], "")
    same = bool(text) and scope_of(text, before[1]) == scope_of(text, failing[1])
    return failing if same and failing[1] > before[1] else before


def _stored_by_producer(found: Diagnosis, file: str, text: str) -> set[str]:
    """The names the lines of ``file`` that made the older graph store."""
    return {n for f, at in found.producer_frames if f == file for n in stored(text, at, at)}


def _made_first_names(found: Diagnosis, file: str, text: str, names: list[str]) -> list[str]:
    """Of the names the consuming line carries, those the older graph's own line stores
    (``h``, not the observation ``state`` that also runs on from pass to pass without a
    graph), when the producer is a line of this file that stores one of them."""
    made = _stored_by_producer(found, file, text)
    return [n for n in names if n in made] or names


def _together_then_each(each: list[Site | None]) -> list[list[Site | None]]:
    """Several carried names cut at once first (a state of several tensors, on one line),
    then each."""
    sites = [site for site in each if site is not None]
    first: list[list[Site | None]] = []
    if len(sites) > 1 and len(sites) == len(each):
        first.append([together(sites)])
    return first + [[site] for site in each]


def _loop_entry_sets(
    found: Diagnosis, frames: Sequence[Frame], sites: Sequence[Site], texts: Mapping[str, str]
) -> list[list[Site | None]]:
    """A state kept on ``self`` that a loop carries from one call of its function into the
    next, where the backward call is in another function (a rollout collected by one
    method, backpropagated by another): detached just before the loop, so each call's
    passes keep their graph to the state (backpropagation through the rollout) and the
    next call starts from the values. A cut at each read would truncate every pass."""
    call = found.previous_backward or found.failing
    for file, line in reversed(frames):
        text = texts.get(file, "")
        loop = innermost(text, line, LOOPS) if text and call is not None else None
        if call is None or not isinstance(loop, LOOPS):
            continue
        if call[0] == file and scope_of(text, call[1]) == scope_of(text, line):
            return []  # the loop itself calls backward: cut right after it
        made = _stored_by_producer(found, file, text)
        names = [n for n in _carried((file, line), sites, text)
                 if n.startswith("self.") and n in made]  # fmt: skip
        each: list[Site | None] = [
            detach_before(file, loop.lineno, " " * loop.col_offset, n) for n in names
        ]
        if each:
            return _together_then_each(each)
    return []


def _attribute_store_sets(
    found: Diagnosis, sites: Sequence[Site], texts: Mapping[str, str]
) -> list[list[Site | None]]:
    """A value stored on an attribute in one step (``self.memory = feats[:n]``, a memory
    bank filled in ``forward``) and read by the next: detached where it is stored (its
    own element of a tuple assignment; every entry of a dict stored whole, as an
    Infini-attention memory ``self.memory = {"M": m, "z": z}``), where the line or the
    function that read it names the attribute. Where a framework calls backward (the Hugging Face
    ``Trainer``, Lightning) there is no loop of the user's to cut in after the backward
    call; the detach kind's check that the calls the original completed come out the
    same rejects it where the current step reads the stored value too (a running
    statistic updated before its use)."""
    read = found.carry_consumer
    lines = texts.get(read[0], "").splitlines() if read else []
    line = lines[read[1] - 1] if read and 0 < read[1] <= len(lines) else ""
    if not line:
        return []
    reader = innermost(texts.get(read[0], ""), read[1], FUNCTIONS) if read else None
    where_read = line + (ast.unparse(reader) if reader is not None else "")
    out: list[list[Site | None]] = []
    for group in [[store] for store in stores_made_at(found, texts)] + _augmented(found, texts):
        file, text, name, made = group[0]
        held = name.value if isinstance(name, ast.Subscript) else name  # ``self.memory["M"]``
        attribute = ast.unparse(held) if isinstance(held, ast.Attribute) else ""
        if not attribute or not re.search(rf"\b{re.escape(attribute)}\b", where_read):
            continue
        if isinstance(made, ast.Dict):  # ``self.memory = {"M": m, "z": z}``: every entry
            out.append([detach_at(file, text, v) for v in made.values])
        else:
            out.append([detach_at(file, text, store[3]) for store in group])
    return out


def _container_store_sets(
    found: Diagnosis, texts: Mapping[str, str]
) -> list[list[Site | None]]:
    """A value stored by slice assignment into a tensor kept across passes and read from
    it by a later pass (a sample pool: ``pool[idx] = x``, then ``x0 = pool[idx]``; a
    ``self.pool`` alike): detached where it is stored, which keeps the pool free of every
    pass's graph (a cut at the read would leave the pool chaining them all). The check
    that the calls the original completed come out the same rejects it where the pass
    reads what it stored (a cache read back in the same step)."""
    read = found.carry_consumer
    text = texts.get(read[0], "") if read else ""
    tree = parsed(text) if text else None
    held = holding(tree, read[1]) if tree is not None and read else None
    if held is None or read is None or tree is None:
        return []
    reader = held[1][held[2]]
    names = {ast.unparse(n.value) for n in ast.walk(reader) if isinstance(n, ast.Subscript)
             and isinstance(n.value, ast.Name | ast.Attribute)
             and isinstance(n.ctx, ast.Load)}  # fmt: skip
    scope: ast.AST = innermost(text, read[1], FUNCTIONS) or tree
    stores = [n for n in ast.walk(scope) if isinstance(n, ast.Assign) and len(n.targets) == 1
              and isinstance(n.targets[0], ast.Subscript)
              and ast.unparse(n.targets[0].value) in names]
    return [[detach_at(read[0], text, store.value, "stored")] for store in stores
            if not isinstance(store.value, ast.Constant)]  # fmt: skip


def _augmented(found: Diagnosis, texts: Mapping[str, str]) -> list[list[Store]]:
    """``(file, text, target, increment)`` of an augmented store on a line that made the
    carried graph (``self.memory["M"] += kv``, once made out of place), with the augmented
    stores into the other entries of the same mapping in its function (``["z"]``): the
    increments detached, the entries carry no graph where what they add to carries none."""
    out: list[list[Store]] = []
    for file, number in found.producer_frames:
        text = texts.get(file, "")
        node = innermost(text, number, (ast.AugAssign,)) if text else None
        if not isinstance(node, ast.AugAssign):
            continue
        group: list[Store] = [(file, text, node.target, node.value)]
        scope = innermost(text, number, FUNCTIONS)
        if isinstance(node.target, ast.Subscript) and scope is not None:
            holder = ast.unparse(node.target.value)
            group += [(file, text, n.target, n.value) for n in ast.walk(scope)
                      if isinstance(n, ast.AugAssign) and n is not node
                      and isinstance(n.target, ast.Subscript)
                      and ast.unparse(n.target.value) == holder]  # fmt: skip
        out.append(group)
    return out


def _module_state_sets(found: Diagnosis, texts: Mapping[str, str]) -> list[list[Site | None]]:
    """A graph carried in a module's attribute (a running statistic updated from itself in
    ``forward``: ``self.rms = m * self.rms + (1 - m) * batch_rms``), cut in the loop right
    after the backward call: ``self.model.norm.rms = self.model.norm.rms.detach()``. The
    step keeps the gradient through its own batch; a detach inside ``forward`` would cut
    that too, where the update comes before its use."""
    if not found.module_state or found.state_at is None:
        return []
    file, line = found.state_at
    lines = texts.get(file, "").splitlines()
    if not 0 < line <= len(lines):
        return []
    exprs = [expr for expr, _ in found.module_states] or [found.module_state]
    after: list[Site | None] = [detach_after(file, line, lines[line - 1], e) for e in exprs]
    inside = _rebound_reads(found, texts)
    if len(exprs) > 1 and inside:  # the same state in several instances (each layer's
        return [inside, after]  # cache): cut in their class, whatever their number
    return [after, inside] if inside else [after]


def _rebound_reads(found: Diagnosis, texts: Mapping[str, str]) -> list[Site | None]:
    """The reads of each carried attribute where its class binds it again from itself
    (``self.cache_k = self.cache_k.to(x)``, ``self.rms = m * self.rms + ...``), detached:
    one edit for every instance of the class, and the step's own contribution keeps its
    graph. The class is the one whose method made the carried graph."""
    out: dict[str, Site] = {}
    for expr, made in found.module_states:
        text = texts.get(made[0], "") if made else ""
        cls = innermost(text, made[1], (ast.ClassDef,)) if made and text else None
        attribute = expr.rsplit(".", 1)[-1]
        for node in ast.walk(cls) if cls is not None else ():
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and _is_self(node.targets[0], attribute)):  # fmt: skip
                continue
            for read in ast.walk(node.value):
                if _is_self(read, attribute):
                    site = detach_at(made[0], text, read, "rebound")  # type: ignore[index, arg-type]
                    out.setdefault(site.id, site)
    return list(out.values())


def _is_self(node: ast.AST, attribute: str) -> bool:
    """``self.<attribute>``."""
    found = self_attribute(node)
    return found is not None and found.attr == attribute


def loop_of(source: str, line: int) -> tuple[int, int]:
    """Lines of the innermost ``for``/``while`` around ``line`` (none: ``(0, 0)``)."""
    return lines_of(innermost(source, line, LOOPS))


def scope_of(source: str, line: int) -> tuple[int, int]:
    """Lines of the innermost function around ``line`` (the module: ``(0, 0)``): a frame
    whose variables the statement after the backward call can see."""
    return lines_of(innermost(source, line, FUNCTIONS))


def _starts_as_none(name: str, text: str) -> bool:
    """``h = None`` somewhere, or ``h=None`` as a parameter default."""
    return re.search(rf"(^\s*{re.escape(name)}\s*=\s*None\b|\b{re.escape(name)}\s*=\s*None\s*[,)])",
                     text, re.MULTILINE) is not None  # fmt: skip


def _read_variants(
    sites: Sequence[Site], maybe_none: bool
) -> tuple[Callable[[Site], Site | None], ...]:
    """Ways to cut a carried read, best first. A state held as one tuple cannot be
    ``.detach()``-ed as a whole; when the program builds an LSTM (whose state is the pair
    ``(h, c)``) the tuple's tensors are detached first, else right after a plain detach.
    A state that starts as ``None`` is only detached once it exists."""
    lstm = any(s.kind == ASSIGN and _BUILDS_LSTM.search(s.target) for s in sites)
    if maybe_none:
        if lstm:
            return (as_optional_tuple_detach, as_optional_detach)
        return (as_optional_detach, as_optional_tuple_detach)
    if lstm:
        return (as_tuple_detach, as_detach, as_item)
    return (as_detach, as_tuple_detach, as_item)


def detach_candidates(
    found: Diagnosis, sites: Sequence[Site], texts: Mapping[str, str] | None = None
) -> list[list[Site]]:
    """Edit sets to try, best first, for each user frame of the consuming node from the
    outermost (the training loop that carries state) in: ``h = h_next.detach()`` where
    the carried variable is reassigned later in the loop; for a state of several tensors
    (``(h, c)``) all of its reads together; for an accumulator (reassigned on the line
    that reads it) its read, detached or as a plain number. Last, single reads on the
    innermost consuming line. A state that starts as ``None`` gets a None-safe detach."""
    frames = found.carry_frames or ((found.carry_consumer,) if found.carry_consumer else ())
    if not frames:
        return []
    texts = texts or {}
    sets: list[list[Site | None]] = [
        [site] for frame in frames for site in _half_detached(frame, sites, texts)
    ]  # the program's own cut, completed: first
    sets += _module_state_sets(found, texts)
    sets += _after_backward_sets(found, frames, sites, texts)
    sets += _loop_entry_sets(found, frames, sites, texts)
    sets += _attribute_store_sets(found, sites, texts)
    sets += _container_store_sets(found, texts)
    sets += [edit_set for frame in reversed(frames)
             for edit_set in _carry_sets(frame, sites, texts.get(frame[0], ""))]  # fmt: skip
    file, line = frames[0]
    # a reading node kept from an earlier pass (``seen.append(err.abs())`` after that pass's
    # backward call) read its own pass's value after it was differentiated: a detach there
    # cuts only what later passes receive
    fresh = set() if found.consumer_kept else _made_by_this_pass(file, line, sites,
                                                                  texts.get(file, ""))
    rest = sorted((s for s in sites if (s.file, s.line) == (file, line)
                   and s.kind in (ARG, OPERAND, SUBSCRIPT) and not values_read(s.target) & fresh),
                  key=lambda s: -s.depth)  # fmt: skip
    sets += [[as_detach(s)] for s in rest]
    sets += _stored_sets(found, rest, sites)
    unique: dict[tuple[str, ...], list[Site]] = {}
    for edit_set in sets:
        if edit_set and all(s is not None for s in edit_set):
            chosen = [s for s in edit_set if s is not None]
            unique.setdefault(tuple(s.id for s in chosen), chosen)
    elsewhere = _read_elsewhere(found, sites)
    ranked = sorted(unique.values(), key=lambda chosen: any(s.target in elsewhere
                                                            for s in chosen))  # fmt: skip
    return ranked


def _read_elsewhere(found: Diagnosis, sites: Sequence[Site]) -> set[str]:
    """Names the consuming line reads outside the expression that read the older value
    (``Z`` in ``Z = ALPHA * Z + (1 - ALPHA) * outputs``, where the tracer saw ``(1 -
    ALPHA) * outputs`` take it in): cuts of those come after the others."""
    read = expression_names(found.carry_read)
    if not read or found.carry_consumer is None:
        return set()
    on_line = {s.target for s in sites if (s.file, s.line) == found.carry_consumer
               and s.kind in (ARG, OPERAND)}  # fmt: skip
    return {name for name in on_line - read if _IDENTIFIER.match(name)}


def _made_by_this_pass(file: str, line: int, sites: Sequence[Site], text: str) -> set[str]:
    """Names the loop around ``line`` assigns before it: each pass makes them afresh, so a
    detach of an expression that reads one (``(new_logp - old_logp).detach()``) cuts this
    pass's own gradient, not what was carried."""
    first, _ = loop_of(text, line) if text else (0, 0)
    return stored(text, first, line - 1) if first else set()


def stored(text: str, first: int, last: int) -> set[str]:
    """Names (and ``self.x`` attributes) that statements on lines ``first..last`` bind:
    assignments of any form, loop targets, ``with ... as``."""
    try:
        tree = parsed(text)
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            if first <= node.lineno <= last:
                out.add(ast.unparse(node))
    return out


def values_read(expression: str) -> set[str]:
    """Names an expression reads as values, not as indices (``idx`` in ``x[idx]``)."""
    while True:
        shorter = re.sub(r"\[[^\[\]]*\]", "", expression)
        if shorter == expression:
            return set(_IDENTS.findall(expression))
        expression = shorter


def _half_detached(frame: Frame, sites: Sequence[Site], texts: Mapping[str, str]) -> list[Site]:
    """A state the program already cuts, but only in part: ``self.state = (h.detach(), c)``
    (an LSTM's cell state forgotten) gets the same ``.detach()`` on what it left out."""
    file = frame[0]
    text = texts.get(file, "")
    try:
        tree = parsed(text)
    except SyntaxError:
        return []
    carried = set(_carried(frame, sites, text))
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple)):
            continue
        if ast.get_source_segment(text, node.targets[0]) not in carried:
            continue
        parts = node.value.elts
        cut = [p for p in parts if isinstance(p, ast.Call) and isinstance(p.func, ast.Attribute)
               and p.func.attr == "detach"]  # fmt: skip
        left = [p for p in parts if isinstance(p, (ast.Name, ast.Attribute, ast.Subscript))]
        if cut and left and len(cut) + len(left) == len(parts):
            out += [detach_at(file, text, p) for p in left]
    return out


def detach_at(file: str, text: str, node: ast.expr, how: str = "half_detached") -> Site:
    """``.detach()`` of the whole expression ``node`` (in parentheses unless it is a name,
    an attribute, a subscript or a call: ``(m * c + (1 - m) * x).detach()``)."""
    name = ast.get_source_segment(text, node) or ""
    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
    parens = not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))
    return Site(id=f"{file}:{node.lineno}:{node.col_offset}:{how}:{name}", file=file,
                line=node.lineno, col=node.col_offset, kind=OPERAND, target=name,
                code=f"({name}).detach()" if parens else f"{name}.detach()",
                start=(node.lineno, node.col_offset), end=end, depth=1, fix=DETACH,
                parens=parens)  # fmt: skip


def _stored_sets(
    found: Diagnosis, reads: Sequence[Site], sites: Sequence[Site]
) -> list[list[Site | None]]:
    """A value kept across iterations in a container (a per-epoch history of losses):
    every read of that container on the consuming line together, then the kept value
    detached where it is made (``avg[k] += task_loss[k].detach() / n``)."""
    heads: dict[str, list[Site]] = {}
    for site in reads:
        if site.kind == SUBSCRIPT and site.depth == min(
            r.depth for r in reads if r.target == site.target
        ):
            heads.setdefault(site.target.split("[")[0], []).append(site)
    sets: list[list[Site | None]] = [[as_detach(s) for s in group] for group in heads.values()
                                     if len(group) > 1]  # fmt: skip
    made = found.carry_producer
    if made is not None:
        produced = [s for s in sites if (s.file, s.line) == made
                    and s.kind in (ARG, OPERAND, SUBSCRIPT)]  # fmt: skip
        sets += [[as_detach(s)] for s in sorted(produced, key=lambda s: s.depth)]
    return sets


def consequences(
    found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
) -> list[str]:
    """What the edits change, said plainly: the report owes the user this."""
    notes: list[str] = []
    site = chosen[0]
    carried = ", ".join(f"`{s.assigned or s.target}`" for s in chosen)
    if site.fix == DETACH and _backpropagated(site, lines):
        notes.append(
            f"this changes what is differentiated: each backward call now differentiates "
            f"only what {carried} gathered since the previous one; the values it keeps (and "
            "prints) are unchanged"
        )
    elif site.fix == DETACH:
        notes.append(
            f"this changes what is differentiated: gradients no longer flow from one "
            f"iteration into the previous one through {carried} (truncated "
            "backpropagation through time, the usual cure for a carried state)"
        )
    elif site.fix == ITEM:
        notes.append(
            f"this changes what is differentiated: {carried} keeps the value of earlier "
            "iterations but not their graphs, so each backward differentiates only the "
            "current step's part"
        )
    if site.fix in (DETACH, ITEM):
        failing = found.failing
        text = lines.get(failing[0], [""] * failing[1])[failing[1] - 1] if failing else ""
        if "retain_graph=True" in text:
            notes.append(
                f"`retain_graph=True` at {where(failing, lines)} is then unnecessary and "
                "keeps every step's graph in memory; consider removing it"
            )
    return notes


def _backpropagated(site: Site, lines: Mapping[str, list[str]]) -> bool:
    """The detached variable is the one backward was called on: an accumulator."""
    text = lines.get(site.file, [])
    if not site.after or not 0 < site.after <= len(text):
        return False
    return text[site.after - 1].strip().startswith(f"{site.target}.backward(")


class Detach(Kind):
    name = DETACH
    reference = NONE
    keeps_prefix = True  # a cut at an iteration's boundary leaves the first calls alone

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        return crosses_iterations(found) and not made_in_constructor(found, ctx)

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        return ranked(detach_candidates(found, ctx.sites, ctx.texts))

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        at = where((site.file, site.line), lines)
        carried = site.assigned or site.target
        fix = f"Fix at {at}: `{site.code}`"
        if site.kind == STATEMENT:  # a statement of its own, inserted before the reading one
            fix = f"Fix: `{site.code}` just before {at}"
        if site.after:  # inserted after the backward call that used the graph
            fix = f"Fix: `{site.code}` right after {where((site.file, site.after), lines)}"
        return (
            f"{fix}: the graph built in one iteration is no longer "
            f"carried into the next through `{carried}`, so backward stops at this iteration."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        return consequences(found, chosen, lines)


KIND = Detach()
