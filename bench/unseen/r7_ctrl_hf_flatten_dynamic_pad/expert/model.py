import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel


class FlatHeadClassifier(nn.Module):
    """Tiny BERT encoder; the head reads every position (flattened token states)."""

    def __init__(self, max_len, num_labels=2):
        super().__init__()
        cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64)
        self.encoder = BertModel(cfg, add_pooling_layer=False)
        self.head = nn.Linear(max_len * cfg.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask=None, labels=None):
        h = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        logits = self.head(h.flatten(1))
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return {"loss": loss, "logits": logits}
