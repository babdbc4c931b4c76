"""The result of a repair, as a value: what the CLI prints, maps to an exit code, or writes.

Explanations are written for someone who wants to learn why: which line saved the
tensor, which line changed it, and why the chosen edit makes backward see the values
it saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from autoclone import classify as cls
from autoclone.codemods.sites import Site
from autoclone.isolation import NAMESPACE, Change
from autoclone.patch import SourceFile
from autoclone.trial import RunResult

FIXED = "fixed"
NO_ERROR = "no_error"
UNFIXABLE = "unfixable"
NOT_AUTOGRAD = "not_autograd"
TIMEOUT = "timeout"
BAD_INPUT = "bad_input"

EXIT_CODES = {FIXED: 0, NO_ERROR: 0, UNFIXABLE: 1, NOT_AUTOGRAD: 1, TIMEOUT: 1, BAD_INPUT: 2}


@dataclass(frozen=True)
class Edit:
    """One line of the patch as the report lists it."""

    file: str
    line: int
    kind: str  # the fix: clone, out_of_place, detach, item, no_grad or inplace_false
    code: str
    site: str = ""  # where: assign, subscript, arg, operand, inplace or statement

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "kind": self.kind, "code": self.code,
                "site": self.site}  # fmt: skip


@dataclass
class Report:
    """Everything a repair found out. ``changes`` holds verified new texts for ``fix``."""

    status: str
    summary: str
    error: str = ""
    error_class: str = ""
    patch: str = ""
    patch_bytes: bytes = b""  # the same diff, each file's lines in that file's encoding
    edits: list[Edit] = field(default_factory=list)
    runs: int = 0
    candidates: int = 0
    seconds: float = 0.0
    explanation: str = ""
    reference: str = ""
    steps: dict[str, int] = field(default_factory=dict)
    minimal: bool = False
    notes: list[str] = field(default_factory=list)
    diagnosis: dict[str, Any] = field(default_factory=dict)
    shrunk: list[dict[str, Any]] = field(default_factory=list)  # knobs trials ran small
    #: Paths outside the project the trials wrote or deleted (``path``, ``action``, ``line``)
    outside: list[dict[str, str]] = field(default_factory=list)
    changes: list[tuple[SourceFile, str]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def as_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "summary": self.summary,
            "error": {"class": self.error_class, "message": self.error},
            "patch": self.patch,
            "edits": [e.as_json() for e in self.edits],
            "runs": self.runs,
            "candidates": self.candidates,
            "seconds": round(self.seconds, 3),
            "explanation": self.explanation,
            "reference": self.reference,
            "steps": self.steps,
            "minimal": self.minimal,
            "notes": self.notes,
            "diagnosis": self.diagnosis,
            "shrunk": self.shrunk,
            "outside": self.outside,
        }


def edits_of(sites: Sequence[Site]) -> list[Edit]:
    return [Edit(s.file, s.line, s.fix, s.code, s.kind) for s in sites]


def cpu_note(mapped: int) -> str:
    """The run was a GPU script's, on the CPU: say so, and what that changed."""
    return (
        "verified on the CPU: no usable CUDA device here, so the script's CUDA calls "
        f"({mapped} in the verifying run) ran on the CPU at run time, with autocast('cuda') "
        "off (float32) and GradScaler passing the loss through; the patch does not contain "
        "this mapping"
    )


def first_run_outcome(first: RunResult, timeout: float) -> tuple[str, str] | None:
    """``(status, summary)`` when the first run ended without an error to work on: the
    same words for ``fix`` and ``explain``."""
    if first.status == "timeout":
        return (
            TIMEOUT,
            f"the script neither failed nor finished within {timeout:g} s "
            "(use --timeout to allow longer runs)",
        )
    if first.status in ("completed", "stopped"):
        return NO_ERROR, "the script ran to its end without an error: nothing to fix"
    if first.status == "crash":
        return (
            NOT_AUTOGRAD,
            "the script crashed without a Python error "
            f"(last output: {first.stderr.strip()[-200:]!r})",
        )
    return None


def first_run_verdict(first: RunResult, timeout: float) -> Report | None:
    outcome = first_run_outcome(first, timeout)
    return Report(*outcome) if outcome else None


def not_clone_fixable(kind: str, line: str) -> Report:
    if kind == cls.NOT_AUTOGRAD:
        return Report(NOT_AUTOGRAD, f"not an autograd error: {line}", error=line, error_class=kind)
    why = {
        cls.NO_GRAPH: "the loss does not depend on anything that requires grad through "
        "differentiable operations",
        cls.BACKWARD_TWICE: "two backward calls ran through one graph without a carried "
        "state to detach; summing the losses or retain_graph=True is a choice about what "
        "to train, which autoclone leaves to you",
        cls.INFERENCE_TENSOR: "make the value under torch.no_grad() instead (Lightning: "
        "Trainer(inference_mode=False)) or .clone() it where training uses it; a cache "
        "built while evaluating must be rebuilt when training resumes (tensor.is_inference()"
        "); whether the values made there should train is yours to say",
        cls.UNUSED_INPUT: "the outputs were computed before the input required grad (set "
        "requires_grad_() before the forward that uses it) or from a copy of it; "
        "allow_unused=True would only return None",
        cls.NONLEAF_DEEPCOPY: "deep-copy the module before its first forward, or use "
        "torch.nn.utils.parametrizations.spectral_norm / weight_norm, which copy cleanly; "
        "where the copy is made changes what it holds, so autoclone leaves it to you",
        cls.INPUT_NO_GRAD: "make the tensor require grad where it is made, before the "
        "computation that is differentiated (x = x.requires_grad_()); under an evaluation "
        "loop that runs in inference mode (Lightning's trainer.test/validate), gradients "
        "with respect to inputs also need Trainer(inference_mode=False)",
        cls.CUSTOM_FUNCTION: "write forward(ctx, ...) and backward(ctx, *grads) as "
        "@staticmethods and call the Function through .apply; backward returns one gradient "
        "per forward input (None for a non-tensor), each of that input's shape (sum a "
        "broadcast gradient over the broadcast dimensions); save only tensors with "
        "ctx.save_for_backward and keep numbers as ctx attributes. How the gradient is "
        "defined is the Function's author's to say, so autoclone offers no edit",
        cls.HOOK_NO_GRAD: "the tensor was made where autograd does not record (under "
        "torch.no_grad(), by a frozen module): register the hook only when it requires "
        "grad (if t.requires_grad: t.register_hook(...)), or make the tensor with grad "
        "enabled; which gradients the hook should see is yours to say",
        cls.NONDIFF_ARGUMENT: "pass the argument detached if it is a constant (a class "
        "weight), or apply it outside the op if its gradient is meant (a focal factor: "
        "(w * F.binary_cross_entropy_with_logits(x, y, reduction='none')).sum()); which "
        "one is yours to say",
        cls.ONCE_DIFFERENTIABLE: "remove @once_differentiable where the backward is plain "
        "differentiable torch code of its inputs (create_graph then differentiates it), or "
        "give the Function a backward that is itself a differentiable Function (a custom "
        "kernel's second derivative is its author's to write)",
        cls.OUT_ARGUMENT: "a call that writes into out= records no graph: drop out= and "
        "read the call's result, and have whatever read the buffer read that result "
        "instead (autoclone drops it only where nothing else reads the buffer)",
        cls.SEED_SHAPE: "give each output a gradient of its own shape (torch.ones_like("
        "output) for a sum; autoclone rewrites a seed of torch.ones(...) given for a "
        "named output); reducing the output instead (output.mean()) scales every gradient",
        cls.REENTRANT_GRAD: "pass use_reentrant=False to the checkpoint calls (the same "
        "values; the non-reentrant checkpoint supports torch.autograd.grad), or take the "
        "gradient without checkpointing; autoclone switches calls it finds written out",
        cls.CHECKPOINT_MISMATCH: "something the block reads changed between its forward "
        "and its recomputation: a state it updates in its own forward (a MoE's routing "
        "bias, a running count); update that state outside the block (after the "
        "optimizer step, under torch.no_grad()), or keep its randomness "
        "(preserve_rng_state=True)",
        cls.NO_DERIVATIVE: "write the operation from ones that have a derivative "
        "(torch.cdist as ((a[:, None] - b[None]) ** 2).sum(-1).sqrt()), or keep it out of "
        "the differentiated path; which one keeps your numbers is yours to say",
        cls.NAN_GRADIENT: "an input was outside the operation's domain where its gradient "
        "is taken (sqrt or a norm at 0; log of 0 inside torch.where, whose unused branch "
        "still gets a gradient): clamp that input before the operation (x.clamp_min(eps)) "
        "or mask it in both branches; where to clamp is a choice about the model",
        cls.NUMPY_WITH_GRAD: "NumPy is outside autograd: detach the tensor "
        "(x.detach().numpy()) where the value is only logged or a constant, or compute it "
        "in torch where the loss needs its gradient (np.corrcoef as torch.corrcoef); "
        "detaching a loss term silently stops it training",
        cls.NONSCALAR_BACKWARD: "reduce the loss the way the objective means (a weighted "
        "sum over the weights' sum, a mean, a sum), or pass gradient= of the tensor's "
        "shape; a mean and a sum train differently, so the reduction is yours to say",
        cls.TRANSFORM_MUTATION: "pass the tensor in as an input of the transformed "
        "function, or keep the function from writing it (BatchNorm's running statistics: "
        "track_running_stats=False, or torch.func.replace_all_batch_norm_modules_)",
    }.get(kind, "no edit the evidence supports repairs it")
    return Report(
        UNFIXABLE, f"{kind}: {cls.DESCRIPTIONS[kind]}; {why}", error=line, error_class=kind
    )


#: Paths outside the project named one line each; the rest are counted.
OUTSIDE_SHOWN = 10


def outside_entries(changes: Sequence[Change]) -> list[dict[str, str]]:
    return [{"path": c.path, "action": c.action, "line": c.where} for c in changes]


def outside_notes(changes: Sequence[Change], mode: str) -> list[str]:
    """One note per path outside the project that a trial wrote or deleted, with the line
    that did it, and where the write went: a scratch copy, or (when the user allowed it
    where trials cannot be isolated) the real file."""
    went = ("that went to a scratch copy; your files are unchanged" if mode == NAMESPACE
            else "outside writes were allowed (--allow-outside-writes): it is real")  # fmt: skip
    notes = []
    for c in changes[:OUTSIDE_SHOWN]:
        by = f" ({c.where})" if c.where else ""
        notes.append(f"a trial {c.action} {c.path}{by}, outside the project: {went}")
    if len(changes) > OUTSIDE_SHOWN:
        notes.append(f"and {len(changes) - OUTSIDE_SHOWN} more paths outside the project "
                     "(all in the JSON report's `outside`)")  # fmt: skip
    return notes


def late_note(line: str, limit: int) -> str:
    """The patched run went on past the backward calls it was judged on and then failed
    with an error that is not autograd's: the patch stands, the user hears of it."""
    return (
        f"the patched script ran on past the {limit} backward calls it was checked on, then "
        f"failed with `{line}`: not an autograd error, and past where the original failed, "
        "so it may be a bug of its own"
    )
