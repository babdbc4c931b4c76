import torch
import torch.nn as nn

from .backbone import build_backbone
from .prompt import MultiTaskPrompt


class PromptTunedClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.backbone = build_backbone(cfg)
        self.prompt = MultiTaskPrompt(len(cfg.tasks), cfg.n_prompt, cfg.d_model)
        self.task_index = {name: i for i, name in enumerate(cfg.tasks)}

    def trainable_parameters(self):
        return [p for p in self.parameters() if p.requires_grad]

    def forward(self, tokens, task):
        x = self.backbone.embed(tokens)
        p = self.prompt(self.task_index[task], tokens.shape[0])
        h = torch.cat([p, x], dim=1)
        with torch.no_grad():  # the backbone is frozen: no need to track it
            h = self.backbone.encode(h)
            logits = self.backbone.verbalizer(h[:, 0])
        return logits
