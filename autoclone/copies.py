"""Where the script copies a tensor that has a graph into a new one that has none.

``torch.tensor(scores, dtype=torch.float)`` of a tensor (a loss re-wrapping the model's
scores, as PyKEEN's TransE loss once did) reads its numbers into a new leaf: torch warns
"To copy construct from a tensor ...", and a loss made from it has no graph ("element 0
of tensors does not require grad"). In every trial ``install`` wraps ``torch.tensor``
and notes each line of the user's where it was given a tensor that requires grad while
grad mode was on: the evidence ``fixes.copy_construct`` edits, and that a loss without a
graph met after an edit was lost there, not cut by the edit. Runs inside the trial
process: standard library and torch only.
"""

from __future__ import annotations

import functools
from typing import Any

from autoclone.labels import Prefix, Seen


def install(prefix: Prefix) -> Seen:
    """Wrap ``torch.tensor``; one ``isinstance`` check per call. The lines go to a record
    like the label watch's (``labels.Seen``)."""
    import torch

    seen = Seen(prefix)
    original = torch.tensor

    @functools.wraps(original)
    def tensor(data: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(data, torch.Tensor) and data.requires_grad and torch.is_grad_enabled():
            seen.note()
        return original(data, *args, **kwargs)

    torch.tensor = tensor
    return seen
