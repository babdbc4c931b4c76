"""From the first run to a diagnosis: what failed, which line saved, which line wrote.

The tracer (``autoclone.tracer``) gives both ends of an in-place conflict; when it could
not run, anomaly mode gives the saving line only, and a plain traceback the failing
line only. The diagnosis orders the candidate sites so the edit the evidence points
at is tried first, and explains the conflict in plain words.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from autoclone import classify as cls
from autoclone.codemods.sites import (
    ARG,
    ASSIGN,
    CLONE,
    INPLACE,
    OPERAND,
    OUT_OF_PLACE,
    SUBSCRIPT,
    VALUE,
    Site,
)
from autoclone.parsed import innermost
from autoclone.trial import RunResult

Frame = tuple[str, int]

#: What a backward function keeps from the forward pass, in the words of seed 004.
SAVES = {
    "Exp": "its output (the derivative of exp(x) is exp(x))",
    "Sigmoid": "its output (sigmoid' = s * (1 - s))",
    "Tanh": "its output (tanh' = 1 - tanh^2)",
    "Relu": "its output (to know where it was positive)",
    "Softmax": "its output (softmax' is written in terms of softmax)",
    "LogSoftmax": "its output",
    "Pow": "its input (the derivative of x**2 is 2*x)",
    "Mul": "its inputs (each factor's gradient needs the other factor)",
    "Div": "its inputs",
    "Addmm": "its inputs (a linear layer needs its input for the weight gradient)",
    "Mm": "its inputs (a matrix product needs each side for the other's gradient)",
    "Bmm": "its inputs",
    "Linear": "its input (for the weight gradient)",
    "Sqrt": "its output",
    "Log": "its input",
    "Sin": "its input",
    "Cos": "its input",
}


@dataclass(frozen=True)
class Diagnosis:
    """Everything the first run showed about the error."""

    error_class: str
    message: str
    line: str
    failing: Frame | None = None
    #: The user's line that called a framework which made the failing backward call for
    #: them (``trainer.fit(...)``); ``failing`` is then where the loss was made
    backward_by: Frame | None = None
    saved: Frame | None = None
    saved_op: str = ""
    mutation: Frame | None = None
    mutation_op: str = ""
    mutation_frames: tuple[Frame, ...] = ()  # the write's user frames, innermost first
    mutation_epoch: int | None = None
    module: str = ""
    module_built: Frame | None = None
    through_view: bool = False
    saved_epoch: int | None = None
    optimizer_step: bool = False  # the write was an optimizer's step
    carry_consumer: Frame | None = None  # a node made here consumed ...
    carry_producer: Frame | None = None  # ... a value made here, before the last backward
    carry_frames: tuple[Frame, ...] = ()  # the consumer's user frames, innermost first
    carry_read: str = ""  # the consumer's expression on its line (``(1 - a) * outputs``)
    #: Lines where ``torch.tensor`` copied a tensor that has a graph (``autoclone.copies``)
    copied: tuple[Frame, ...] = ()
    producer_frames: tuple[Frame, ...] = ()  # the producer's user frames, innermost first
    #: The value was made above the line that read it, in the function where the two
    #: stacks part (None: not known; the innermost frames are compared)
    made_first: bool | None = None
    #: The node that read the value was itself made before an earlier backward call: a
    #: value read after one step's backward and kept for a later one (a callback's list of
    #: residuals, consumed at the epoch's end), whatever the order of the lines
    consumer_kept: bool = False
    #: The carried graph reaches a parameter an optimizer steps on (None: not known)
    carry_trains: bool | None = None
    #: an optimizer that stepped between the two backward calls trains what made the
    #: carried value (the first loss was that optimizer's own)
    carry_stepped: bool = False
    #: The carried value is a term of the loss an earlier call backpropagated (a running
    #: mean of the loss kept on a meter), not a state the model computes
    carry_loss_term: bool = False
    #: Where the first loss read the value the failing one reads again, when that is
    #: another line (``first_read``)
    first_read: Frame | None = None
    again_read: Frame | None = None  # ... and where the failing loss read it, then
    saved_frames: tuple[Frame, ...] = ()  # the saving op's user frames, innermost first
    previous_backward: Frame | None = None  # the backward call that already used the graph
    previous_backward_frames: tuple[Frame, ...] = ()  # ... its user frames, innermost first
    #: The backward call that ran through the carried graph first and freed it (an
    #: earlier pass of a critic's update, not the actor's call just before the failing one)
    freed_by: Frame | None = None
    stepped: bool = False  # an optimizer stepped between that call and the failing one
    #: The failing call was made inside an optimizer's step: its closure, which L-BFGS
    #: calls again after moving the parameters
    in_step: bool = False
    #: Lines where the weight of a log-probability takes in a graph that reaches
    #: parameters, deepest first: detached there, the estimate is a constant
    #: (``autoclone.estimate``)
    estimate_cuts: tuple[Frame, ...] = ()
    #: The saved tensor is the saving op's own output (``exp``, ``sigmoid``): a clone of
    #: what the op was given cannot help, a clone of its result can
    saved_own_output: bool = False
    #: The failing loss was computed from a derivative taken without ``create_graph``
    #: (``autoclone.derivatives``): the program fits the derivative
    derivative_in_loss: bool = False
    view: Frame | None = None
    view_op: str = ""
    view_of_leaf: bool = False  # the written view's base is a leaf that requires grad
    #: A write refused eagerly took its value from another tensor that requires grad
    written_from_grad: bool = False
    evidence: str = "traceback"  # tracer | anomaly | traceback
    #: A module attribute that carries the graph (``self.model.norm.rms``), as the frame
    #: that called backward (``state_at``) reaches it
    module_state: str = ""
    state_at: Frame | None = None
    #: Every such attribute (``model.layers[0].attention.cache_k``, ``...[1]...``), each
    #: with the user frame that made its carried graph (in the module's own method)
    module_states: tuple[tuple[str, Frame | None], ...] = ()
    #: The loss whose target alone reaches the saved tensor (guessed labels averaged in
    #: place, then the target of ``mse_loss``): the write conflicts only because autograd
    #: differentiates a target
    target_of: Frame | None = None
    target_loss: str = ""  # ... and its name (``mse_loss``)
    #: Every loss (and its name) whose target carried a graph its input did not
    targets: tuple[tuple[Frame, str], ...] = ()
    #: A ``torch.autograd.grad`` call without ``create_graph`` since the last backward
    #: call: it freed the graph the failing call runs into
    grad_call: Frame | None = None
    #: The failing call's user frames, innermost first (a helper taking the derivative,
    #: then the function that called it)
    failing_frames: tuple[Frame, ...] = ()
    #: The leaf was written while a backward call ran a block again: an activation that
    #: ``torch.utils.checkpoint`` (reentrant) made a leaf, not a weight
    recomputed: bool = False
    #: The failing call ran inside a framework's evaluation loop, which runs under
    #: ``torch.inference_mode()`` by default (Lightning's ``trainer.test()``), where no
    #: ``torch.enable_grad()`` in the user's code can record a graph
    inference_loop: bool = False
    #: Grad mode was still off when the error left the script: a global
    #: ``torch.set_grad_enabled(False)`` nothing undid
    grad_off: bool = False
    #: The failing call's loss holds the loss the previous call started from
    #: (``loss.backward()``, then ``(loss + loss_adv).backward()``)
    recounts: bool = False


def as_json(d: Diagnosis) -> dict[str, Any]:
    """The located lines as ``[file, line]`` pairs, for reports and editors."""
    out: dict[str, Any] = {"evidence": d.evidence}
    keys = ("failing", "saved", "mutation", "view", "carry_consumer", "carry_producer",
            "previous_backward", "module_built", "backward_by", "freed_by")  # fmt: skip
    for key in keys:
        frame = getattr(d, key)
        out[key] = list(frame) if frame else None
    out["saved_op"], out["mutation_op"] = op_name(d.saved_op), d.mutation_op
    return out


#: Lightning's evaluation and prediction loops (``inference_mode=True`` unless the Trainer
#: is told otherwise; the validation inside ``fit`` runs under ``no_grad`` instead)
_EVALUATION_LOOP = re.compile(
    r"lightning[/\\](?:pytorch[/\\])?loops[/\\](?:evaluation|prediction)_loop\.py$"
)


def in_inference_loop(frames: Sequence[tuple[str, int]]) -> bool:
    """A stack that passes through a framework's evaluation loop (inference mode)."""
    return any(_EVALUATION_LOOP.search(file) for file, _ in frames)


_FRAMES = ("failing", "backward_by", "saved", "mutation", "module_built", "carry_consumer",
           "carry_producer", "previous_backward", "view", "state_at", "first_read",
           "again_read", "target_of", "grad_call", "freed_by")  # fmt: skip


def relabel(d: Diagnosis, move: Callable[[Frame], Frame]) -> Diagnosis:
    """The diagnosis with every line moved (from a patched file's lines to the original's)."""
    changes: dict[str, Any] = {k: move(getattr(d, k)) for k in _FRAMES if getattr(d, k)}
    changes["carry_frames"] = tuple(move(f) for f in d.carry_frames)
    changes["producer_frames"] = tuple(move(f) for f in d.producer_frames)
    changes["previous_backward_frames"] = tuple(move(f) for f in d.previous_backward_frames)
    changes["saved_frames"] = tuple(move(f) for f in d.saved_frames)
    changes["mutation_frames"] = tuple(move(f) for f in d.mutation_frames)
    changes["estimate_cuts"] = tuple(move(f) for f in d.estimate_cuts)
    changes["failing_frames"] = tuple(move(f) for f in d.failing_frames)
    changes["copied"] = tuple(move(f) for f in d.copied)
    return replace(d, **changes)


def crosses_iterations(d: Diagnosis) -> bool:
    """The failing backward reached into a graph built before an earlier backward call,
    through a value carried from one iteration into the next."""
    carried = d.carry_consumer is not None and not _within_one_iteration(d)
    if d.error_class == cls.BACKWARD_TWICE:
        return carried
    stale = d.saved_epoch is not None and d.mutation_epoch is not None
    return stale and d.saved_epoch < d.mutation_epoch and carried  # type: ignore[operator]


def _within_one_iteration(d: Diagnosis) -> bool:
    """A carried state is read at or above the line that makes it (``h = rnn(x, h)``, read
    in the next iteration); a value made higher up the loop body and read further down,
    with a backward call in between (``d_fake = D(fake)`` ... ``bce(d_fake, ones)`` in a
    GAN), belongs to one iteration: detaching it would silently stop training. Unless the
    backward call that freed the graph is the failing one itself, with an optimizer step
    in between: the same line on an earlier pass of an update loop (a PPO update's old
    log-probabilities, computed once before the update epochs and read by every pass); or
    unless the reading node was itself made passes ago (``consumer_kept``).
    Without a step in between, the passes add gradients for one update (one loss per
    exit of a deeply supervised net): that is one iteration."""
    if d.consumer_kept:
        return False
    made, read = d.carry_producer, d.carry_consumer
    within = made is not None and read is not None and made[0] == read[0] and made[1] < read[1]
    within = within if d.made_first is None else d.made_first
    one_read = d.first_read is None  # every pass reads it on the same lines: a carry
    return within and not (d.stepped and d.previous_backward == d.failing and one_read)


def _reads_apart(carry: Mapping[str, Any], own: Collection[str]) -> tuple[Frame, Frame] | None:
    """Where the first loss read the shared value, when the failing pass did not read it
    there, and where the failing loss read it: the first frames, from the outside in,
    where the two reads' user frames part. Both backward calls can be one line (a trainer's engine,
    Lightning's automatic optimization calling ``backward`` for each optimizer in turn):
    the reads tell two losses sharing one graph (a GAN's ``D(fake)`` in its discriminator
    step, read again in its generator step) from one loss reading it again on every pass,
    on the same lines (PPO's old log-probs, embeddings made once per epoch), or a pass
    that makes the value anew and reads the last pass's (``prev_logits = logits``)."""
    readers, epoch = carry.get("readers") or [], carry.get("consumer_epoch")
    if not carry.get("all_readers") or carry.get("made_again"):
        return None  # not every read was seen; or the pass remade it (``prev = logits``)

    def stack(frames: Sequence[Any]) -> tuple[Frame, ...]:
        return tuple((str(f), int(n)) for f, n in frames if f in own)

    now = {stack(r["frames"]) for r in readers if r["epoch"] == epoch}
    again = stack(carry.get("consumer_frames") or ())
    for read in (stack(r["frames"]) for r in readers if r["epoch"] < epoch):
        if read not in now:
            mine, theirs = _aligned(read, again)
            for a, b in zip(reversed(mine), reversed(theirs), strict=False):
                if a != b:
                    return a, b
    return None


def _aligned(
    a: tuple[Frame, ...], b: tuple[Frame, ...]
) -> tuple[tuple[Frame, ...], tuple[Frame, ...]]:
    """Two stacks (innermost first) cut to the same outermost frame. The tracer keeps a
    few innermost frames, so one read's stack may end deeper in the callers than the
    other's: Dreamer's critic read below ``fit()``, ``main()`` and a wrapper lost the
    outermost frame the actor's read kept, and the two seemed to part at the module's
    line."""
    if a and b and a[-1] != b[-1]:
        if a[-1] in b:
            b = b[: b.index(a[-1]) + 1]
        elif b[-1] in a:
            a = a[: a.index(b[-1]) + 1]
    return a, b


def optimizer_before_backward(d: Diagnosis) -> bool:
    """GAN-style: an optimizer step changed weights that a graph of the same iteration
    saved and had yet to backpropagate through. No single edit makes that correct."""
    return d.optimizer_step and not crosses_iterations(d)


def _targets(noted: Sequence[Any] | None, own: Collection[str]) -> tuple[tuple[Frame, str], ...]:
    """Each noted loss's own line, with its name."""
    out = [(_first_own(t["loss_frames"], own), str(t["loss"])) for t in noted or ()]
    return tuple((frame, loss) for frame, loss in out if frame is not None)


def _own_frames(frames: Sequence[Any] | None, own: Collection[str]) -> tuple[Frame, ...]:
    return tuple((str(f[0]), int(f[1])) for f in frames or () if f[0] in own)


def _first_own(frames: Sequence[Any] | None, own: Collection[str]) -> Frame | None:
    """The innermost frame in the user's files (frames are listed innermost first)."""
    for file, line in frames or ():
        if file in own:
            return (file, int(line))
    return None


def _calls_backward(frame: Frame | None, own: Collection[str]) -> bool:
    """The user's line makes the backward call itself (``loss.backward()``,
    ``self.manual_backward(loss)``, ``accelerator.backward(loss)``), rather than calling
    a framework that makes it for them (``trainer.fit(model)``)."""
    if frame is None or not isinstance(own, Mapping) or frame[0] not in own:
        return True
    lines = getattr(own[frame[0]], "text", "").splitlines()
    text = lines[frame[1] - 1] if 0 < frame[1] <= len(lines) else ""
    return "backward" in text or "autograd.grad" in text or not text


def _up_to_the_loop(frames: Sequence[Any], own: Collection[str]) -> tuple[Frame, ...]:
    """The user's frames of a consuming node, innermost first, up to the outermost one that
    runs in a loop: the loop that carries the value from one pass into the next. Callers
    further out (``main()`` under the ``__main__`` guard, ``trainer.fit()``) carry
    nothing, and attributing the read to them is how the same bug got another answer
    inside ``main()`` than in a flat script."""
    mine = [(str(f), int(n)) for f, n in frames if f in own]
    texts = {f: getattr(own[f], "text", "") for f, _ in mine} if isinstance(own, Mapping) else {}
    looped = [i for i, (f, n) in enumerate(mine) if texts.get(f) and _in_loop(texts[f], n)]
    return tuple(mine[: looped[-1] + 1] if looped else mine)


def _made_first(made: Sequence[Any], read: Sequence[Any], own: Collection[str]) -> bool | None:
    """Whether the value was made above the line that read it, compared where the two
    stacks part (from the outside in) when both lines are in one function: the loop's
    own lines (``outs = self.model(x)`` ... ``loss = f(outs[i])``), wherever the class
    whose ``forward`` made it sits in the file. None where they part in two functions
    (one statement calls both) or the sources are not at hand."""
    if not isinstance(own, Mapping):
        return None
    mine = [(str(f), int(n)) for f, n in made if f in own]
    theirs = [(str(f), int(n)) for f, n in read if f in own]
    for a, b in zip(reversed(mine), reversed(theirs), strict=False):
        if a == b:
            continue
        text = getattr(own[a[0]], "text", "") if a[0] == b[0] else ""
        if not text or _function_of(text, a[1]) != _function_of(text, b[1]):
            return None
        return a[1] < b[1]
    return None


def _function_of(text: str, line: int) -> int:
    """The first line of the innermost function around ``line`` (0: the module)."""
    try:
        node = innermost(text, line, (ast.FunctionDef, ast.AsyncFunctionDef))
    except SyntaxError:
        return -1
    return getattr(node, "lineno", 0)


def _in_loop(text: str, line: int) -> bool:
    try:
        return innermost(text, line, (ast.For, ast.AsyncFor, ast.While)) is not None
    except SyntaxError:
        return False


def _read_by(carry: Mapping[str, Any], own: Collection[str]) -> str:
    """The consumer's expression, where the tracer's innermost user frame is the one the
    diagnosis names (not a frame in a file outside the project)."""
    frames = carry["consumer_frames"]
    inner = tuple(frames[0]) if frames else None
    return str(carry.get("read") or "") if inner == _first_own(frames, own) else ""


def diagnose(first: RunResult, own: Collection[str]) -> Diagnosis:
    """Read the first run: exception, tracer record, or anomaly-mode frames."""
    message = first.error.message if first.error else cls.last_exception_line(first.stderr)
    line = first.error.line if first.error else message
    frames = first.error.frames if first.error else ()
    failing = _first_own(list(reversed(frames)), own)
    traced = first.diagnosis or {}
    called_from = None
    if not _calls_backward(failing, own) and traced.get("loss_frames"):
        called_from, failing = failing, _first_own(traced["loss_frames"], own) or failing
    raised_at_write = cls.classify(message) == cls.LEAF_INPLACE  # the traceback is the write's
    stack = _own_frames(list(reversed(frames)), own)
    base = Diagnosis(cls.classify(message), message, line, failing=failing,
                     backward_by=called_from, failing_frames=stack,
                     mutation_frames=stack if raised_at_write else (),
                     inference_loop=in_inference_loop(frames),
                     grad_off=bool(first.error and first.error.grad_off),
                     copied=_own_frames(list(first.copied), own))  # fmt: skip
    carry = traced.get("carry") or {}
    if carry:
        apart = _reads_apart(carry, own)
        base = replace(
            base,
            carry_consumer=_first_own(carry["consumer_frames"], own),
            carry_producer=_first_own(carry["producer_frames"], own),
            carry_frames=_up_to_the_loop(carry["consumer_frames"], own),
            carry_read=_read_by(carry, own),
            producer_frames=_own_frames(carry["producer_frames"], own),
            made_first=_made_first(carry["producer_frames"], carry["consumer_frames"], own),
            consumer_kept=carry.get("consumer_epoch", 0) < traced.get("epoch", 0),
            carry_trains=carry.get("trains"),
            carry_stepped=bool(carry.get("stepped_trains")),
            carry_loss_term=bool(carry.get("loss_term")),
            first_read=apart[0] if apart else None,
            again_read=apart[1] if apart else None,
            freed_by=_first_own(carry.get("freed_by_frames"), own),
        )
    state = traced.get("module_state") or {}
    if state and state.get("backward_frames"):
        every = tuple((e["expr"], _first_own(e["frames"], own)) for e in state.get("all", ()))
        base = replace(base, module_state=state["expr"], module_states=every,
                       state_at=_first_own(state["backward_frames"], own))  # fmt: skip
    if traced.get("kind") == "inplace_version":
        return replace(base, **_version_evidence(traced, own))
    if traced.get("kind") == "backward_twice":
        previous = _first_own(traced.get("previous_backward_frames"), own)
        if called_from is not None and not _calls_backward(previous, own):
            previous = _first_own(traced.get("previous_loss_frames"), own) or previous
        return replace(base, evidence="tracer", previous_backward=previous,
                       previous_backward_frames=_own_frames(
                           traced.get("previous_backward_frames"), own),
                       stepped=bool(traced.get("stepped")),
                       in_step=bool(traced.get("in_step")),
                       recounts=bool(traced.get("recounts_previous")),
                       grad_call=_first_own(traced.get("grad_frames"), own),
                       derivative_in_loss=bool(traced.get("derivative_in_loss")),
                       target_of=_first_own(traced.get("target_of_frames"), own),
                       target_loss=traced.get("target_loss", ""),
                       targets=_targets(traced.get("targets"), own))  # fmt: skip
    if traced.get("kind") == cls.NO_GRAPH:
        return replace(base, evidence="tracer", derivative_in_loss=True,
                       grad_call=_first_own(traced.get("grad_frames"), own))  # fmt: skip
    if traced.get("kind") in (cls.MULTI_OUTPUT_VIEW, cls.NO_GRAD_VIEW, "view_write"):
        view = traced.get("view") or {}
        written = traced["mutation"]
        return replace(
            base,
            view=_first_own(view.get("frames"), own),
            view_op=view.get("op", ""),
            view_of_leaf=bool(view.get("leaf_base")),
            mutation=_first_own(written["frames"], own) or failing,
            module_built=_first_own(written.get("module_frames"), own),
            written_from_grad=bool(written.get("from_grad")),
            recomputed=bool(traced.get("recomputed")),
            evidence="tracer",
        )
    saved = _first_own(list(reversed(first.forward_frames)), own)
    return replace(
        base, saved=saved, saved_op=first.forward_op, evidence="anomaly" if saved else "traceback"
    )


def _version_evidence(traced: dict[str, Any], own: Collection[str]) -> dict[str, Any]:
    saved, mutation = traced["saved"], traced.get("mutation") or {}
    return {
        "saved": _first_own(saved["frames"], own),
        "saved_frames": tuple((f, int(n)) for f, n in saved["frames"] or () if f in own),
        "saved_op": saved.get("grad_fn") or saved.get("op", ""),
        "saved_own_output": bool(saved.get("grad_fn"))
        and saved.get("producer") == saved.get("grad_fn"),
        "mutation": _first_own(mutation.get("frames"), own),
        "mutation_frames": tuple((f, int(n)) for f, n in mutation.get("frames") or () if f in own),
        "mutation_op": mutation.get("op", ""),
        "mutation_epoch": mutation.get("epoch"),
        "module": mutation.get("module", ""),
        "module_built": _first_own(mutation.get("module_frames"), own),
        "through_view": bool(mutation.get("through_view")),
        "saved_epoch": saved.get("epoch"),
        "optimizer_step": bool(mutation.get("optimizer")),
        "evidence": "tracer",
        "target_of": _first_own(traced.get("target_of_frames"), own),
        "target_loss": traced.get("target_loss", ""),
        "targets": _targets(traced.get("targets"), own),
        "estimate_cuts": _own_frames(traced.get("estimate_cut_frames"), own),
    }


def priority(diagnosis: Diagnosis, sites: Sequence[Site]) -> list[str]:
    """Sites in the order the evidence supports them.

    On the line that wrote in place: the statement rewritten out of place (``x += y`` ->
    ``x = x + y``, what people write), then a clone of the written variable just before
    the write, then the arguments handed to an in-place call (innermost first). Then
    every site on the line that saved the tensor (or made the view), innermost first:
    cloning what an op saves leaves the original free to be written. What an in-place
    method is handed comes after those (``w.sub_(lr * g)`` writes ``w``, never ``g``).
    The saving line goes first when the write went through a view (cloning the view, or
    rewriting the write out of place, would lose the write into its base) and for views
    made under no_grad (a clone made later, with grad on, is itself saved by the next op).

    Only for the clone-fixable classes: a leaf updated in place (``w -= lr * w.grad``)
    is repaired with ``no_grad``, and rewriting it would silently make ``w`` a non-leaf
    that the optimizer no longer updates, so no rewrite is ranked for it.
    """
    write = diagnosis.mutation
    if write is None and diagnosis.error_class != cls.INPLACE_VERSION:
        write = diagnosis.failing
    if diagnosis.error_class == cls.LEAF_INPLACE:
        sites = [s for s in sites if s.fix != OUT_OF_PLACE]
    at_write = _on_line(sites, write, _write_order)
    at_source = _on_line(sites, diagnosis.saved or diagnosis.view, lambda s: -s.depth)
    if diagnosis.saved_own_output:  # ``exp`` saved its result: what took that result first
        at_source = _returned_to(diagnosis, sites) + at_source
    else:
        at_source += _returned_to(diagnosis, sites)
    rewrites = [s for s in at_write if s.fix == OUT_OF_PLACE]
    if write is not None and write == diagnosis.saved:
        ordered = rewrites + at_source  # one line saves and writes: then what it reads
    elif diagnosis.mutation_op == "__setitem__" and diagnosis.through_view:
        # ``x[..., 0::2] = r1`` where views of ``x`` were saved: a clone of ``x`` just
        # before keeps the write (into the copy) and frees every saved view at once
        whole = [s for s in at_write if s.kind == INPLACE]
        ordered = whole + at_source + [s for s in at_write if s not in whole]
    elif diagnosis.through_view or diagnosis.error_class == cls.NO_GRAD_VIEW:
        ordered = at_source + at_write
    else:  # what a method writes is its receiver: the values handed to it after the saver
        written = {s.target for s in at_write if s.kind == INPLACE}
        handed = [s for s in at_write if s.kind in (ARG, OPERAND, SUBSCRIPT) and written
                  and s.target not in written]  # fmt: skip
        ordered = [s for s in at_write if s not in handed] + at_source + handed
    if diagnosis.error_class == cls.CUSTOM_FUNCTION_VIEW and diagnosis.view is None:
        ordered = _function_outputs(sites, write) + ordered  # what the message advises
    # an in-place chain whose result the line reads: its value is what the line means
    ordered = [s for s in at_write if s.kind == VALUE] + ordered
    return list(dict.fromkeys(s.id for s in ordered))


def _returned_to(diagnosis: Diagnosis, sites: Sequence[Site]) -> list[Site]:
    """Where the saving line's function returned to, when it saves in a function of the
    user's (``return torch.exp(...)`` in a kernel's ``forward``): the assignment that
    took the result in its caller (``K = self.kernel(f, f)``), whose clone gives the
    write a tensor of its own where an op saved its own output."""
    outer = [f for f in diagnosis.saved_frames[1:3] if f != diagnosis.saved]
    return [s for f in outer for s in sites if (s.file, s.line) == f and s.kind == ASSIGN]


#: A custom autograd Function called: ``GradReverse.apply(feat, alpha)``
_APPLIED = re.compile(r"\.apply\(")


def _function_outputs(sites: Sequence[Site], failing: Frame | None) -> list[Site]:
    """Clones of a custom Function's output (``GradReverse.apply(feat, alpha)``) in the
    failing file, nearest above the failing line first: where autograd's own message
    says to clone when no traced view names the Function."""
    if failing is None:
        return []
    file, line = failing
    made = [s for s in sites if s.file == file and s.line <= line and s.fix == CLONE
            and s.kind in (ASSIGN, ARG) and _APPLIED.search(s.target)]  # fmt: skip
    return sorted(made, key=lambda s: line - s.line)



def _write_order(site: Site) -> tuple[bool, bool, bool, int]:
    """Rewrite out of place, then clone the target, then the in-place call's arguments."""
    return (site.fix != OUT_OF_PLACE, site.kind != INPLACE, site.kind != ARG, -site.depth)


def _on_line(sites: Sequence[Site], frame: Frame | None, key: Any) -> list[Site]:
    return sorted((s for s in sites if (s.file, s.line) == frame), key=key) if frame else []


def where(frame: Frame | None, lines: Mapping[str, list[str]]) -> str:
    if frame is None:
        return "an unknown line"
    file, line = frame
    source = lines.get(file, [])
    text = source[line - 1].strip() if 0 < line <= len(source) else ""
    return f"{file}:{line} `{text}`" if text else f"{file}:{line}"


def op_name(grad_fn: str) -> str:
    """``ExpBackward0`` -> ``Exp``; ``torch::autograd::CopySlices`` -> ``CopySlices``."""
    name = grad_fn.split("::")[-1]
    return name.removesuffix("0").removesuffix("Backward") if name else ""


def _reading_frame(d: Diagnosis, lines: Mapping[str, list[str]]) -> Frame | None:
    """The innermost of the consuming node's frames that runs in a loop: the line whose
    later pass read the older graph (the ``forward`` below it reads only what it is given)."""
    for file, line in d.carry_frames:
        if _in_loop("\n".join(lines.get(file, [])), line):
            return (file, line)
    if d.backward_by is not None:  # the loop is the framework's: the read is the user's line
        return d.carry_consumer
    return d.carry_frames[-1] if d.carry_frames else d.carry_consumer


def target_refusal(d: Diagnosis, lines: Mapping[str, list[str]]) -> str:
    """Why a conflict on a loss's target gets no patch, and what a person would do."""
    return (
        f"the failing backward call reaches the tensor saved at {where(d.saved, lines)} only "
        f"through the target of the loss at {where(d.target_of, lines)}; a target is a "
        "constant by convention, so the usual cure is to compute it under torch.no_grad() (or "
        ".detach() it where it is made), which changes what is trained; an out-of-place "
        "write or a clone would keep the numbers but train the model to move its own "
        "targets, so autoclone leaves the choice to you"
    )


def explain(d: Diagnosis, lines: Mapping[str, list[str]]) -> str:
    """Plain words for what went wrong, before any repair was tried."""
    at = f"at {where(d.failing, lines)}."
    if d.backward_by is not None:
        at = (f"in the backward call of the loss made at {where(d.failing, lines)}, which "
              f"the framework made for you inside {where(d.backward_by, lines)}.")  # fmt: skip
    parts = [f"What failed: {cls.DESCRIPTIONS.get(d.error_class, d.error_class)}, {at}"]
    if d.saved is not None and d.error_class == cls.NAN_GRADIENT:
        parts.append(
            f"The NaN came from the gradient of {op_name(d.saved_op) or 'the operation'} "
            f"made at {where(d.saved, lines)}: its input was where that gradient is not "
            "finite."
        )
    elif d.saved is not None:
        op = op_name(d.saved_op)
        keeps = SAVES.get(op, "a tensor it needs to compute the gradient")
        parts.append(
            f"Saved for backward at {where(d.saved, lines)}: {op or 'this op'} keeps {keeps}."
        )
    if d.view is not None and d.error_class == cls.NO_GRAD_VIEW:
        parts.append(
            f"View created under no_grad at {where(d.view, lines)} by {d.view_op}(); "
            "writing into it with grad enabled would change a tensor autograd tracks "
            "without autograd seeing the write."
        )
    elif d.error_class == cls.CUSTOM_FUNCTION_VIEW:
        built = f" (built at {where(d.module_built, lines)})" if d.module_built else ""
        parts.append(
            "The tensor written is the output of a custom autograd Function or of a full "
            "backward hook's BackwardHookFunction, which hands its input on as a view; "
            "autograd forbids writing into it in place, as that would bypass the Function's "
            f"backward. A module that writes in place{built} must write into a new tensor, or "
            "the output must be cloned first."
        )
    elif d.view is not None:
        parts.append(
            f"View created at {where(d.view, lines)} by {d.view_op}(), which returns "
            "several views of one tensor; autograd forbids writing into them in place."
        )
    if d.mutation is not None:
        parts.append(_mutation_words(d, lines))
    if d.inference_loop:
        parts.append(
            "The call ran inside Lightning's evaluation loop (trainer.test, validate or "
            "predict), which runs under torch.inference_mode(): no torch.enable_grad() in "
            "the step records a graph there."
        )
    elif d.grad_off:
        parts.append(
            "Grad was still switched off when the error left the script: a "
            "torch.set_grad_enabled(False) that nothing turned back on, so every step after "
            "it ran without autograd."
        )
    elif d.error_class == cls.NO_GRAPH and d.grad_call is not None:
        parts.append(
            f"torch.autograd.grad at {where(d.grad_call, lines)} ran without create_graph, "
            "so the derivative it returned is a constant, and the loss reads the "
            "parameters only through it."
        )
    elif d.error_class == cls.NO_GRAPH:
        parts.append(
            "Nothing between the parameters and this loss kept the graph: an operation with "
            "no gradient (argmax/argmin, a comparison, an integer cast such as .long(), "
            ".item() or float()), a .detach() or .data, a torch.no_grad() block, a "
            "function decorated with @torch.no_grad() or @torch.inference_mode(), or a "
            "reentrant checkpoint whose inputs do not require grad cut it. The last two "
            "have edits of autoclone's kinds (the decorator removed, use_reentrant=False); "
            "a differentiable stand-in (softmax instead of argmax, a soft comparison) is a "
            "modelling choice."
        )
    if d.recomputed:
        parts.append(
            "The write ran inside the backward call: torch.utils.checkpoint ran the block "
            "again on a detached copy of its input, a leaf that requires grad, so a write "
            "that is legal without checkpointing is refused there."
        )
    if d.grad_call is not None and d.error_class != cls.NO_GRAPH:
        parts.append(
            f"torch.autograd.grad at {where(d.grad_call, lines)} ran without create_graph or "
            "retain_graph, so it freed the graph it went through, and the loss reads that "
            "graph again."
        )
    elif d.previous_backward is not None and (
        d.carry_consumer is None or _within_one_iteration(d)
    ):
        parts.append(_freed_words(d, lines) if _freed_elsewhere(d) else _same_graph(d, lines))
    if d.carry_consumer is not None and not _within_one_iteration(d):
        outer = _reading_frame(d, lines)
        inner = d.carry_consumer
        read = f", read at {where(inner, lines)}," if inner is not None and inner != outer else ""
        parts.append(
            f"The graph reaches across iterations: {where(outer, lines)} used a value{read} "
            f"whose graph was built before the previous backward call (at "
            f"{where(d.carry_producer, lines)}), so this backward runs into that older graph "
            "again."
        )
        if d.previous_backward is not None and d.previous_backward == d.failing:
            parts[-1] += (
                " The backward call that freed it is this same line, on an earlier pass of "
                "its loop" + (", with an optimizer step in between." if d.stepped else ".")
            )
    return "\n".join(parts)


def _same_graph(d: Diagnosis, lines: Mapping[str, list[str]]) -> str:
    """Why one iteration's second backward call met a freed graph."""
    previous = where(d.previous_backward, lines)
    if d.recounts:
        return (
            f"The loss of this call contains the loss backpropagated at {previous}, whose "
            "graph that call freed: its gradient is already in .grad, and differentiating it "
            "again would count it twice."
        )
    if d.in_step:
        return (
            f"The same graph was already backpropagated at {previous}, by an earlier call of "
            "the optimizer's closure: the optimizer calls it again after moving the "
            "parameters, and a value made outside it, from the parameters as they were, "
            "carries that freed graph into every call."
        )
    return (
        f"The same graph was already backpropagated at {previous}, which frees what it "
        "saved. If both losses should train the model, add them and call backward once, or "
        "pass retain_graph=True to the first backward call."
    )


def _freed_elsewhere(d: Diagnosis) -> bool:
    """The carried graph was freed by another call than the one just before the failing
    one (a replay buffer's actions, freed by the critic's update on an earlier pass)."""
    return d.freed_by is not None and d.freed_by != d.previous_backward


def _freed_words(d: Diagnosis, lines: Mapping[str, list[str]]) -> str:
    again = "this same line" if d.freed_by == d.failing else where(d.freed_by, lines)
    read = f", read at {where(d.carry_consumer, lines)}," if d.carry_consumer else ""
    return (
        f"The graph that made the value at {where(d.carry_producer, lines)}{read} was "
        f"already backpropagated by {again} on an earlier pass, which freed what it saved; "
        "the value outlived that call (kept, then used again), so this backward call runs "
        "into the freed graph."
    )


def _mutation_words(d: Diagnosis, lines: Mapping[str, list[str]]) -> str:
    text = f"Modified in place at {where(d.mutation, lines)}"
    if d.mutation_op:
        text += f" by {d.mutation_op}"
    if d.through_view:
        text += " through a view (so cloning the view there would lose the write into its base)"
    if d.module and d.module_built is not None and d.mutation_op:
        text += f" inside {d.module} built at {where(d.module_built, lines)}"
    if d.mutation_epoch == 0:
        text += ", before the first backward call"
    elif d.mutation_epoch is not None:
        text += f", after {d.mutation_epoch} backward calls had completed"
    return text + "."


def editor_lines(d: Diagnosis) -> list[str]:
    """``path:line:col: message`` lines an editor's problem matcher can read."""
    out = []
    if d.saved is not None:
        out.append(
            f"{d.saved[0]}:{d.saved[1]}:1: note: tensor saved for backward here "
            f"by {op_name(d.saved_op) or 'an op'}"
        )
    if d.view is not None:
        out.append(
            f"{d.view[0]}:{d.view[1]}:1: note: multi-output view created here by {d.view_op}"
        )
    if d.carry_producer is not None and d.carry_consumer is not None:
        out.append(f"{d.carry_producer[0]}:{d.carry_producer[1]}:1: note: graph built here "
                   "and still used after the backward call that freed it")  # fmt: skip
    freer = d.freed_by or d.previous_backward
    if freer is not None and freer != d.failing:
        out.append(f"{freer[0]}:{freer[1]}:1: note: this backward "
                   "call already went through the graph and freed it")  # fmt: skip
    if d.mutation is not None:
        out.append(f"{d.mutation[0]}:{d.mutation[1]}:1: error: modified in place here: {d.line}")
    elif d.failing is not None:
        out.append(f"{d.failing[0]}:{d.failing[1]}:1: error: {d.line}")
    return out


def warning_lines(
    warnings: Sequence[dict[str, Any]], own: Collection[str], lines: dict[str, list[str]]
) -> tuple[list[str], list[str]]:
    """Writes into saved tensors that autograd cannot see: PyTorch raises nothing and
    backward silently uses the new values. Plain words, and editor lines."""
    words, editor = [], []
    for w in warnings:
        at, saved = _first_own(w.get("frames"), own), _first_own(w.get("saved_frames"), own)
        how = (
            f"a fused optimizer step ({w['op']}) updates tensors without bumping their version"
            if w["kind"] == "fused_optimizer"
            else f"{w['op']} wrote through `.data` or another alias with its own version counter"
        )
        words.append(
            f"Warning: at {where(at, lines)} {how}, while a graph still holds them for backward "
            f"(saved at {where(saved, lines)}): PyTorch raises nothing and the gradients are "
            "computed from the new values."
        )
        if at is not None:
            editor.append(
                f"{at[0]}:{at[1]}:1: warning: silent write into a tensor saved for backward"
            )
    return words, editor
