import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertModel, BertPreTrainedModel
from transformers.modeling_outputs import SequenceClassifierOutput


class CosineHead(nn.Module):
    """Cosine-similarity classifier on a tanh projection of the [CLS] state."""

    def __init__(self, hidden, num_labels, scale):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)
        self.weight = nn.Parameter(torch.randn(num_labels, hidden) * 0.02)
        self.scale = scale

    def forward(self, cls):
        h = torch.tanh(self.proj(cls))
        h = h / h.norm(dim=-1, keepdim=True)
        w = F.normalize(self.weight, dim=-1)
        return self.scale * h @ w.t()


class BertCosineClassifier(BertPreTrainedModel):
    def __init__(self, config, scale=8.0):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.bert = BertModel(config, add_pooling_layer=False)
        self.head = CosineHead(config.hidden_size, config.num_labels, scale)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, labels=None, **kwargs):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask)
        logits = self.head(out.last_hidden_state[:, 0])
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return SequenceClassifierOutput(loss=loss, logits=logits)
