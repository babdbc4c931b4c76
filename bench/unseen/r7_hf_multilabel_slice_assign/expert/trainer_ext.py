import torch
import torch.nn.functional as F
from transformers import Trainer


class PartialLabelTrainer(Trainer):
    """Multi-label BCE where some label entries are unknown: the prediction for an unknown
    entry is replaced by its (placeholder) target so that entry costs nothing."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        known = inputs.pop("label_mask")
        outputs = model(**inputs)
        probs = torch.sigmoid(outputs.logits)
        probs = torch.where(known, probs, labels)
        loss = F.binary_cross_entropy(probs, labels)
        return (loss, outputs) if return_outputs else loss
