"""Gradients that reach a loss's labels: an edit that kept the values and not the intent.

A label is a constant by convention: the class indices of a cross-entropy, the soft target
of a quality branch (the IoU of a predicted box with its ground truth, as in GFL and
VarifocalNet), a teacher's distribution under ``kl_div``. When an edit lets autograd
reach the labels (``x1 = x1.clamp(0, 1)`` on the unbound coordinates of boxes whose IoU is
the target, where the program wrote ``x1.clamp_(0, 1)``), every number of the failing step
still matches the reference, and the model then learns to move its own targets: a wrong
patch that no value comparison catches.

In the trial (``install``) the label-taking losses of ``torch.nn.functional`` (the loss
modules call them), and a product with a ``log_softmax`` output (a cross-entropy written
by hand), note each line of the user's where a loss was called, with grad enabled, on a
target that requires grad. In autoclone (``new_label_gradients``) a patched
run that does so on a line where the original run did not is refused. Regression losses
(``mse_loss``, ``l1_loss``, ...) are left out: their two arguments are often both outputs.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

#: The user's files as ``str.startswith`` takes them: one folder, or several
Prefix = str | tuple[str, ...]

#: Losses whose ``target`` is a label: a class, a probability, a distribution.
LABEL_LOSSES = (
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "kl_div",
    "nll_loss",
    "multilabel_soft_margin_loss",
    "poisson_nll_loss",
)

#: Losses whose ``target`` may be an output (two views of one batch), watched only for
#: the tracer's probe: where a target's graph holds what the failing backward call needs.
REGRESSION_LOSSES = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")

Frame = tuple[str, int]


class Seen:
    """Lines of the user's where a loss took a label that requires grad (a handful)."""

    def __init__(self, prefix: Prefix) -> None:
        self.prefix = prefix
        self.lines: list[Frame] = []
        #: the tracer's ``note_target(input, target, loss name)``, in traced runs
        self.probe: Callable[[Any, Any, str], None] | None = None
        self.constant = False  # every target detached where the loss takes it (a reference)

    def note(self) -> None:
        frame: Any = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename.startswith(self.prefix):
                where = (frame.f_code.co_filename, frame.f_lineno)
                if where not in self.lines and len(self.lines) < 20:
                    self.lines.append(where)
                return
            frame = frame.f_back


def install(prefix: Prefix) -> Seen:
    """Wrap the label-taking losses of ``torch.nn.functional``, and the products that make a
    cross-entropy by hand; what they see goes to the returned record. Costs one attribute
    check per loss call, and two per product."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    seen = Seen(prefix)
    for name in LABEL_LOSSES + REGRESSION_LOSSES:
        original = getattr(F, name, None)
        if original is not None:
            setattr(F, name, _watched(original, seen, torch, name in LABEL_LOSSES))
    for owner, name in ((torch.Tensor, "__mul__"), (torch.Tensor, "__rmul__"),
                        (torch.Tensor, "mul"), (torch, "mul")):  # fmt: skip
        setattr(owner, name, _soft_product(getattr(owner, name), seen, torch))
    return seen


#: ``q * F.log_softmax(logits, 1)``, summed: a cross-entropy written by hand (SwAV's
#: swapped prediction, MixMatch's soft labels), whose ``q`` is a target like any other.
SOFT_CROSS_ENTROPY = "soft cross-entropy"


def _soft_product(original: Any, seen: Seen, torch: Any) -> Any:
    @functools.wraps(original)  # the tracer names the call by it
    def product(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        target = None
        if isinstance(b, torch.Tensor) and _log_probs(b) and isinstance(a, torch.Tensor):
            target, logp = a, b
        elif isinstance(a, torch.Tensor) and _log_probs(a) and isinstance(b, torch.Tensor):
            target, logp = b, a
        if (target is not None and target.requires_grad and torch.is_grad_enabled()
                and _distribution(target, logp, torch)):  # fmt: skip
            seen.note()
            if seen.probe is not None:
                seen.probe(logp, target, SOFT_CROSS_ENTROPY)
            if seen.constant:
                a, b = (target.detach(), logp) if target is a else (logp, target.detach())
        return original(a, b, *args, **kwargs)

    return product


def _distribution(target: Any, logp: Any, torch: Any) -> bool:
    """Each row of ``target`` is a distribution over ``logp``'s classes (soft labels, codes):
    not a weight that multiplies log-probabilities on their way to a loss (ASL's focusing
    weight, which is then multiplied by the real targets)."""
    if target.shape != logp.shape or target.numel() == 0:
        return False
    with torch.no_grad():
        rows = target.sum(-1)
        return bool((target >= 0).all()) and bool(((rows - 1).abs() < 1e-3).all())


def _log_probs(tensor: Any) -> bool:
    """Made by ``log_softmax`` (its graph's node says so)."""
    node = grad_node(tensor)
    return node is not None and type(node).__name__ == "LogSoftmaxBackward0"


def grad_node(tensor: Any) -> Any:
    """``tensor.grad_fn``, or None where reading it raises (a view made under ``no_grad``
    whose base was written since): a watcher must never raise where the script would not."""
    try:
        return tensor.grad_fn
    except RuntimeError:
        return None


def graph_nodes(root: Any) -> Iterator[Any]:
    """The nodes of a graph from ``root`` (a ``grad_fn``), each once, depth first; callers
    bound the walk (``itertools.islice``): a watcher looks a few hundred nodes in."""
    todo, seen = [root], set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        todo += [child for child, _ in node.next_functions]


def _watched(original: Any, seen: Seen, torch: Any, label: bool) -> Any:
    @functools.wraps(original)
    def loss(input: Any, target: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        # a distance is symmetric: a prediction given as its ``target`` next to a constant
        # (ParallelWaveGAN's ``l1_loss(log(y_mag), log(x_mag))``) is no target
        swapped = not label and not (isinstance(input, torch.Tensor) and input.requires_grad)
        if (isinstance(target, torch.Tensor) and target.requires_grad and not swapped
                and torch.is_grad_enabled()):  # fmt: skip
            if label:
                seen.note()
            if seen.probe is not None:
                seen.probe(input, target, original.__name__)
            if seen.constant:
                target = target.detach()
        return original(input, target, *args, **kwargs)

    return loss


def new_label_gradients(patched: Iterable[Frame], original: Iterable[Frame]) -> str | None:
    """Why a patched run is refused: the first line where gradient reaches a label and did
    not in the original; None when there is none."""
    before = set(map(tuple, original))
    fresh = [tuple(f) for f in patched if tuple(f) not in before]
    if not fresh:
        return None
    file, line = fresh[0]
    return (
        f"the edit lets gradient reach the labels of the loss at {file}:{line} (its target "
        "requires grad, and did not in the original run): the model would learn to move its "
        "own targets. A value used as a label is detached where it is made"
    )


def labels_beyond(
    baseline: tuple[Frame, ...], seen: Iterable[Frame], reached: Iterable[Frame] | None
) -> tuple[Frame, ...]:
    """The original's label lines, with those a traced run of the script patched so far
    took on lines the original run never executed (``reached``; it failed first): there
    the program as the earlier edits let it run is what the later edits are compared
    with. Lines the original did reach keep the original's evidence."""
    if reached is None:
        return baseline
    ran = set(reached)
    return tuple(dict.fromkeys([*baseline, *(f for f in seen if f not in ran)]))
