"""``.detach()`` where a value read by every pass of a loop is assigned: the old
log-probabilities of a PPO update computed once before the update epochs, a target
computed outside the inner loop, the previous epoch's logits kept as a soft target. The
first pass's backward frees the value's graph and the second pass runs into it. The
value is meant as a constant target, so it is detached where it is made, once.

Recognised from the tracer's carry edge (the graph the failing backward reached was
built before the previous backward call) when the carried name is read on the line that
consumed it and bound on the line that produced it (or rebound later in the loop, as in
``prev_logits = logits``). Judged like every detach: K steps with finite losses.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence

from autoclone.codemods.rewrites import as_detach
from autoclone.codemods.sites import ARG, ASSIGN, OPERAND, SUBSCRIPT, Site
from autoclone.diagnose import Diagnosis, Frame, crosses_iterations, where
from autoclone.fixes._ast import FUNCTIONS, innermost, made_in_constructor
from autoclone.fixes.base import NONE, Candidate, Context, Kind
from autoclone.fixes.detach import loop_of, scope_of, stored, values_read

_HEAD = re.compile(r"^[A-Za-z_][\w.]*")
#: A value read as it is: a name, an attribute, subscripts; no call, no arithmetic.
_VALUE = re.compile(r"^[A-Za-z_][\w.]*(\[[^()]*\])*$")


def _read(frame: Frame, sites: Sequence[Site]) -> list[str]:
    """Names (or attributes) read on the loop's line that consumed the older graph, also
    where only a slice of them is read (``old_log_probs[mb]``)."""
    heads = (_HEAD.match(s.target) for s in sites if (s.file, s.line) == frame
             and (s.kind in (ARG, OPERAND, SUBSCRIPT)
                  or s.kind == ASSIGN and _VALUE.match(s.target)))  # ``x = acts[idx]``  # fmt: skip
    return list(dict.fromkeys(m.group(0) for m in heads if m))


def _defines(site: Site, name: str) -> bool:
    """An assignment of ``name`` from a value that does not read ``name`` itself: a
    target, not a recurrent state (``h = rnn(x, h)`` is cut by the detach kind)."""
    binds = site.kind == ASSIGN and (site.assigned == name or name in site.bound)
    return binds and not _reads(site.target, name)


def _reads(value: str, name: str) -> bool:
    """``value``'s text reads ``name`` (not as a part of another name or attribute)."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", value) is not None


def _recurrent(text: str, site: Site, name: str) -> bool:
    """``name`` is bound from itself through locals of the site's function (a spiking
    neuron's ``mem = beta * self.mem + x`` ... ``self.mem = mem - spk``): a state carried
    from step to step, which a detach there would cut inside the sequence."""
    fn = innermost(text, site.line, FUNCTIONS) if text else None
    if fn is None:
        return False
    assigned = [(ast.unparse(t), ast.unparse(n.value)) for n in ast.walk(fn)
                if isinstance(n, ast.Assign) and n.lineno < site.line
                for t in n.targets if isinstance(t, ast.Name)]  # fmt: skip
    tainted, grew = {name}, True
    while grew:
        grew = False
        for local, value in assigned:
            if local not in tainted and any(_reads(value, t) for t in tainted):
                tainted.add(local)
                grew = True
    return any(_reads(site.target, t) for t in tainted - {name})


def target_assignments(
    found: Diagnosis, sites: Sequence[Site], texts: Mapping[str, str]
) -> list[Site]:
    """Where to cut a value that every pass of a loop reads and that was made before the
    pass: for each loop frame of the consuming node, outermost first (a function that
    each pass calls, a ``train_step``, counts as one pass): its assignment on the producing
    line, when that line is outside the loop
    (computed once, maybe in a helper such as ``rollout()``), then later in the reading
    loop's own scope (``prev_logits = logits``), then the read itself when the value was
    made outside the loop in another function (``batch["old_log_probs"][mb]`` in a
    Trainer's ``update``, made by its ``collect_rollout``). A name the loop assigns before
    the read is made afresh by each pass: never a target."""
    made = found.carry_producer
    frames = found.carry_frames or ((found.carry_consumer,) if found.carry_consumer else ())
    if made is None:
        return []
    out: list[Site] = []
    called = False  # the frame runs in the function a loop's line calls
    once = _made_once(found, texts)
    for frame in reversed(frames):
        text = texts.get(frame[0], "")
        loop = loop_of(text, frame[1]) if text else (0, 0)
        in_loop = bool(loop[0])
        reads_here = frame == frames[0]  # the step itself read it, not a module it called
        if called and reads_here and not in_loop and _a_step(text, frame[1]):  # one pass
            loop = scope_of(text, frame[1])
        called = in_loop
        out += [s for s in _targets_at(frame, loop, found, sites, text, once) if s not in out]
    return [s for s in out if not (s.kind == ASSIGN and any(
        _recurrent(texts.get(s.file, ""), s, n) for n in {s.assigned, *s.bound} if n))]


def _made_once(found: Diagnosis, texts: Mapping[str, str]) -> bool:
    """No user frame of the producer runs in a loop: the value was made once (a
    normalisation after harvesting activations), not by each pass (a module's state)."""
    frames = found.producer_frames or ((found.carry_producer,) if found.carry_producer else ())
    return bool(frames) and all(
        f in texts and not loop_of(texts[f], n)[0] for f, n in frames
    )


def _a_step(text: str, line: int) -> bool:
    """The function around ``line`` is a step the loop calls (``train_step``, a Trainer's
    ``minibatch_step``), not a module's ``forward``: a value a ``forward`` reads from
    ``self`` is the module's state (the detach kind cuts it after the backward call)."""
    node = innermost(text, line, FUNCTIONS)
    return isinstance(node, FUNCTIONS) and node.name not in ("forward", "__call__")


def _targets_at(
    frame: Frame,
    loop: tuple[int, int],
    found: Diagnosis,
    sites: Sequence[Site],
    text: str,
    once: bool = False,
) -> list[Site]:
    made = found.carry_producer
    assert made is not None
    fresh = stored(text, loop[0], frame[1] - 1) if loop[0] else set()
    names = [n for n in _read(frame, sites) if n not in fresh]  # each pass makes its own
    outside = made[0] != frame[0] or not loop[0] <= made[1] <= loop[1]
    scope = scope_of(text, frame[1]) if text else (0, 0)
    elsewhere = made[0] != frame[0] or scope_of(text, made[1]) != scope
    looped = stored(text, loop[0], loop[1]) if loop[0] else set()
    reads = [s for s in sites if (s.file, s.line) == frame and s.kind in (ARG, OPERAND, SUBSCRIPT)
             and _VALUE.match(s.target) and _head(s.target) in _handed(frame, found, text)
             and _head(s.target) in names
             and not values_read(s.target) & (fresh | looped)]  # fmt: skip
    reads = sorted(reads, key=lambda s: -len(s.target)) if loop[0] and outside and elsewhere else []
    if reads:  # made in another function: where it is assigned there, else where it is read
        reads = [s for s in sites if (s.file, s.line) == made and s.kind == ASSIGN] + reads
    if made[0] != frame[0]:
        return reads
    defining = [s for s in sites if s.file == frame[0] and any(_defines(s, n) for n in names)]
    at_made = [s for s in defining if s.line == made[1] and outside]
    if outside and not at_made and once:  # made once, from itself
        at_made = [s for s in sites if (s.file, s.line) == made and s.kind == ASSIGN
                   and (s.assigned in names or set(s.bound) & set(names))]  # fmt: skip
    later = [s for s in defining if s.line > frame[1] and scope_of(text, s.line) == scope]
    return at_made + sorted(later, key=lambda s: -s.line) + reads


def _handed(frame: Frame, found: Diagnosis, text: str) -> set[str]:
    """Names in the frame's function that can hold the value made elsewhere: its
    parameters (``batch`` handed to ``update``), and names bound on a line of the producer's
    frames (``batch = self.collect_rollout()``). Any other name holds another value."""
    node = innermost(text, frame[1], FUNCTIONS) if text else None
    names: set[str] = set()
    if isinstance(node, FUNCTIONS):
        args = node.args
        names |= {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    for file, line in found.producer_frames:
        if file == frame[0]:
            names |= stored(text, line, line)
    return names


def _head(target: str) -> str:
    match = _HEAD.match(target)
    return match.group(0) if match else ""


class DetachTarget(Kind):
    name = "detach_target"
    reference = NONE

    def supports(self, found: Diagnosis, ctx: Context) -> bool:
        """The carried value is not a term of the loss: one added to it as it is (a weight
        penalty built once before the loop) would, detached, train nothing at all, where
        a target detached still trains the prediction it is compared with."""
        return (crosses_iterations(found) and not made_in_constructor(found, ctx)
                and not found.carry_loss_term)  # fmt: skip

    def candidates(self, found: Diagnosis, ctx: Context) -> list[Candidate]:
        edits = [as_detach(s) for s in target_assignments(found, ctx.sites, ctx.texts)]
        outermost: dict[tuple[str, int], Site] = {}  # one edit per assignment
        for site in edits:
            if site is not None:
                outermost.setdefault((site.file, site.line), site)
        return [Candidate(-1.0 + i / 100, (s,)) for i, s in enumerate(outermost.values())]

    def why(self, site: Site, found: Diagnosis, lines: Mapping[str, list[str]]) -> str:
        name = site.assigned or site.target
        return (
            f"Fix at {where((site.file, site.line), lines)}: `{site.code}`: `{name}` is a "
            f"constant target: read again by a later pass of the loop at "
            f"{where(found.carry_consumer, lines)}, after the backward call at "
            f"{where(found.previous_backward or found.failing, lines)} had freed the graph it "
            "was computed with. Detached where it is assigned, every pass reads its value "
            "and no backward call reaches into that older graph."
        )

    def notes(
        self, found: Diagnosis, chosen: Sequence[Site], lines: Mapping[str, list[str]]
    ) -> list[str]:
        names = ", ".join(f"`{s.assigned or s.target}`" for s in chosen)
        return [
            f"this changes what is differentiated: no gradient flows through {names} any "
            "more (in the original only the first pass could have backpropagated through it, "
            "and the second pass crashed); a value used as a target, an old policy's "
            "log-probability or a teacher's output is meant to be a constant"
        ]


KIND = DetachTarget()
