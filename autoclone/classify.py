"""Name the autograd error a run ended with, from the exception or from stderr.

The classes follow what users search for; only the first three are repaired by a clone.
"""

from __future__ import annotations

import re

INPLACE_VERSION = "inplace_version"
MULTI_OUTPUT_VIEW = "multi_output_view"
NO_GRAD_VIEW = "no_grad_view"
#: An output of a custom autograd Function (a full backward hook's ``BackwardHookFunction``
#: too) is a view, and is written in place: ``nn.ReLU(inplace=True)`` after a hooked layer
CUSTOM_FUNCTION_VIEW = "custom_function_view"
LEAF_INPLACE = "leaf_inplace"
BACKWARD_TWICE = "backward_twice"
#: ``h.detach_()`` on a view (a slice of a stacked hidden state): "Can't detach views in-place"
DETACH_VIEW = "detach_view"
#: ``target.requires_grad = False`` on a computed tensor (a peer's logits): "you can only
#: change requires_grad flags of leaf variables"
NONLEAF_REQUIRES_GRAD = "nonleaf_requires_grad"
NO_GRAPH = "no_graph"
#: A tensor made under ``torch.inference_mode()`` (a cache built by ``trainer.validate()``,
#: a frozen encoder decorated with it) used where autograd records
INFERENCE_TENSOR = "inference_tensor"
#: ``torch.autograd.grad(out, x)`` where ``out`` was not computed from ``x`` (an R1
#: penalty's ``real.requires_grad_()`` set after the forward that used ``real``)
UNUSED_INPUT = "unused_input"
#: ``copy.deepcopy`` of a module holding a computed tensor (the weight an old-style
#: ``spectral_norm``/``weight_norm`` hook set)
NONLEAF_DEEPCOPY = "nonleaf_deepcopy"
#: ``torch.autograd.grad(out, x)`` where ``x`` does not require grad (diffusion times sampled
#: without ``requires_grad``; an input differentiated inside Lightning's inference-mode test)
INPUT_NO_GRAD = "input_no_grad"
#: A custom ``autograd.Function`` written against its contract: an old-style (non-static)
#: forward, a backward that returns too few gradients or one of the wrong shape, a number
#: passed to ``save_for_backward``
CUSTOM_FUNCTION = "custom_function"
#: ``t.register_hook(...)`` on a tensor made where autograd does not record (under
#: ``torch.no_grad()``, from a frozen encoder)
HOOK_NO_GRAD = "hook_no_grad"
#: A tensor that requires grad given to an argument PyTorch has no derivative for (a focal
#: factor as ``weight=`` of ``binary_cross_entropy_with_logits``)
NONDIFF_ARGUMENT = "nondiff_argument"
#: A custom Function's ``backward`` marked ``@once_differentiable`` differentiated again
#: (an R1 penalty's ``create_graph=True`` through a fused activation)
ONCE_DIFFERENTIABLE = "once_differentiable"
#: The gradient given for an output (``grad_outputs``, a backward seed) has another shape
#: than the output (``torch.ones(real.size())`` for a critic's ``[64, 1]`` scores)
SEED_SHAPE = "seed_shape"
#: A call that writes into ``out=`` given a tensor that requires grad (a "memory-efficient"
#: DenseNet's ``torch.cat(features, 1, out=buf[:, :width])``)
OUT_ARGUMENT = "out_argument"
#: Autograd's refusals no edit of autoclone's repairs, named so the report says what a
#: person would do: no derivative for an op (``_cdist_backward`` under a double-backward
#: penalty), a NaN from a backward function under anomaly detection (``sqrt`` at 0),
#: a tensor with a graph given to NumPy, backward on a tensor of several elements with no
#: gradient for it, a ``torch.func`` transform writing a captured tensor (BatchNorm's
#: running statistics)
NO_DERIVATIVE = "no_derivative"
NAN_GRADIENT = "nan_gradient"
NUMPY_WITH_GRAD = "numpy_with_grad"
NONSCALAR_BACKWARD = "nonscalar_backward"
TRANSFORM_MUTATION = "transform_mutation"
#: A checkpointed block that computed other tensors when run again in backward (a routing
#: bias a MoE layer updates in its own ``forward``)
CHECKPOINT_MISMATCH = "checkpoint_mismatch"
#: A reentrant checkpoint met ``torch.autograd.grad`` (a gradient penalty through
#: checkpointed blocks) or ``backward(inputs=...)``
REENTRANT_GRAD = "reentrant_grad"
NOT_AUTOGRAD = "not_autograd"

#: Error classes a ``.clone()`` can repair.
CLONE_FIXABLE = frozenset({INPLACE_VERSION, MULTI_OUTPUT_VIEW, NO_GRAD_VIEW, CUSTOM_FUNCTION_VIEW})

_PATTERNS = (
    (INPLACE_VERSION, "needed for gradient computation has been modified by an inplace operation"),
    (MULTI_OUTPUT_VIEW, "This view is the output of a function that returns multiple views"),
    (NO_GRAD_VIEW, "A view was created in no_grad mode and"),
    (CUSTOM_FUNCTION_VIEW, "This view was created inside a custom Function"),
    (LEAF_INPLACE, "leaf Variable that requires grad is being used in an in-place operation"),
    (BACKWARD_TWICE, "Trying to backward through the graph a second time"),
    (DETACH_VIEW, "Can't detach views in-place"),
    (NONLEAF_REQUIRES_GRAD, "you can only change requires_grad flags of leaf variables"),
    (NO_GRAPH, "does not require grad and does not have a grad_fn"),
    (INFERENCE_TENSOR, "Inference tensors cannot be saved for backward"),
    (INFERENCE_TENSOR, "Inplace update to inference tensor outside InferenceMode"),
    (UNUSED_INPUT, "appears to not have been used in the graph"),
    (NONLEAF_DEEPCOPY, "support the deepcopy protocol"),
    (INPUT_NO_GRAD, "One of the differentiated Tensors does not require grad"),
    (CUSTOM_FUNCTION, "Legacy autograd function with non-static forward method"),
    (CUSTOM_FUNCTION, "returned an incorrect number of gradients"),
    (CUSTOM_FUNCTION, "returned an invalid gradient at index"),
    (CUSTOM_FUNCTION, "save_for_backward can only save variables"),
    (HOOK_NO_GRAD, "cannot register a hook on a tensor that doesn't require gradient"),
    (NONDIFF_ARGUMENT, "is not differentiable with respect to argument"),
    (ONCE_DIFFERENTIABLE, "differentiate twice a function that was marked with @once_differ"),
    (SEED_SHAPE, "Mismatch in shape: grad_output["),
    (OUT_ARGUMENT, "arguments don't support automatic differentiation, but one of the argu"),
    (NO_DERIVATIVE, "the derivative for '"),
    (NAN_GRADIENT, "returned nan values in its"),
    (NUMPY_WITH_GRAD, "Can't call numpy() on Tensor that requires grad"),
    (NONSCALAR_BACKWARD, "grad can be implicitly created only for scalar outputs"),
    (TRANSFORM_MUTATION, "that would mutate a captured Tensor"),
    (REENTRANT_GRAD, "torch.utils.checkpoint is incompatible with .grad()"),
    (CHECKPOINT_MISMATCH, "torch.utils.checkpoint: "),
)

#: Plain words for each class, used in one-line messages.
DESCRIPTIONS = {
    INPLACE_VERSION: "a tensor saved for backward was modified by an in-place operation",
    MULTI_OUTPUT_VIEW: "an output of a multi-view function (unbind, split, chunk) "
    "was modified in place",
    NO_GRAD_VIEW: "a view created under no_grad was modified in place with grad enabled",
    CUSTOM_FUNCTION_VIEW: "an output of a custom autograd Function (or a backward hook) "
    "was modified in place",
    LEAF_INPLACE: "a leaf tensor that requires grad was modified in place",
    BACKWARD_TWICE: "backward ran a second time through a graph whose buffers were freed",
    DETACH_VIEW: "detach_() was called on a view, which cannot be detached in place",
    NONLEAF_REQUIRES_GRAD: "requires_grad was set on a computed tensor, which only a leaf "
    "allows",
    NO_GRAPH: "backward was called on a tensor that no graph leads to",
    INFERENCE_TENSOR: "a tensor made under torch.inference_mode() was used where autograd "
    "records",
    UNUSED_INPUT: "torch.autograd.grad was asked for the gradient of a tensor the outputs "
    "were not computed from",
    NONLEAF_DEEPCOPY: "copy.deepcopy met a computed tensor (not a leaf) in what it copied",
    INPUT_NO_GRAD: "torch.autograd.grad was asked for the gradient of a tensor that does "
    "not require grad",
    CUSTOM_FUNCTION: "a custom autograd Function breaks its contract with autograd",
    HOOK_NO_GRAD: "a gradient hook was registered on a tensor that does not require grad",
    NONDIFF_ARGUMENT: "a tensor that requires grad was given to an argument PyTorch has no "
    "derivative for",
    ONCE_DIFFERENTIABLE: "a custom Function whose backward is marked @once_differentiable "
    "was differentiated a second time",
    SEED_SHAPE: "the gradient given for an output (grad_outputs, a backward seed) has "
    "another shape than the output",
    OUT_ARGUMENT: "a call that writes into its out= argument was given a tensor that "
    "requires grad",
    NO_DERIVATIVE: "PyTorch has no derivative for an operation the backward call needed "
    "(at this order)",
    NAN_GRADIENT: "a backward function returned NaN (anomaly detection)",
    NUMPY_WITH_GRAD: "a tensor that requires grad was converted to NumPy",
    NONSCALAR_BACKWARD: "backward was called on a tensor of several elements with no gradient "
    "given for it",
    TRANSFORM_MUTATION: "a function under a torch.func transform wrote in place into a "
    "tensor it captured",
    CHECKPOINT_MISMATCH: "a checkpointed block computed other tensors when it ran again "
    "in the backward call",
    REENTRANT_GRAD: "a checkpoint with use_reentrant=True met torch.autograd.grad or "
    "backward(inputs=...)",
    NOT_AUTOGRAD: "the script failed with an error that is not an autograd graph error",
}


def classify(message: str) -> str:
    """The class of an error message (or of a whole stderr text)."""
    for name, needle in _PATTERNS:
        if needle in message:
            return name
    return NOT_AUTOGRAD


def last_exception_line(stderr: str) -> str:
    """The final ``Type: message`` line of the last traceback in a stderr text."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b", line):
            return line.strip()
    return lines[-1].strip() if lines else ""
