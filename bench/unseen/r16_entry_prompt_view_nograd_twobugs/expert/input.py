"""Multi-task soft-prompt tuning of a frozen encoder (only the prompts are trained)."""
import torch
import torch.nn.functional as F

from ptune import PromptConfig, PromptTunedClassifier
from ptune.tasks import sample_batch


def main():
    cfg = PromptConfig()
    model = PromptTunedClassifier(cfg)
    torch.manual_seed(cfg.seed)
    opt = torch.optim.Adam(model.trainable_parameters(), lr=cfg.lr)
    g = torch.Generator().manual_seed(cfg.seed + 7)
    for step in range(1, cfg.steps + 1):
        task = cfg.tasks[step % len(cfg.tasks)]
        tokens, labels = sample_batch(cfg, task, g)
        loss = F.cross_entropy(model(tokens, task), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 5 == 0:
            print(f"step {step:3d} task {task:8s} loss {loss.item():.5f}")
    eval_g = torch.Generator().manual_seed(99)
    with torch.no_grad():
        for task in cfg.tasks:
            tokens, labels = sample_batch(cfg, task, eval_g)
            acc = (model(tokens, task).argmax(1) == labels).float().mean().item()
            print(f"eval {task:8s} acc {acc:.4f}")
        print(f"shared prompt norm {model.prompt.shared.norm().item():.5f} "
              f"delta norm {model.prompt.task_delta.norm().item():.5f}")


if __name__ == "__main__":
    main()
