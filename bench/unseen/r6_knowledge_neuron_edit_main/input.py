"""Knowledge neurons in a small fact-recall model: train, attribute FFN neurons with
integrated gradients, then edit facts by rewriting the value vectors of the top neurons
(Dai et al., "Knowledge Neurons in Pretrained Transformers")."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class FactModel(nn.Module):
    def __init__(self, n_subjects, n_objects, d_model, d_ff):
        super().__init__()
        self.subj = nn.Embedding(n_subjects, d_model)
        self.ffn_in = nn.Linear(d_model, d_ff)
        self.ffn_out = nn.Linear(d_ff, d_model)
        self.norm = nn.LayerNorm(d_model)
        self.obj = nn.Embedding(n_objects, d_model)

    def ffn_activation(self, s):
        return F.gelu(self.ffn_in(self.subj(s)))

    def forward(self, s, act=None):
        h = self.subj(s)
        if act is None:
            act = F.gelu(self.ffn_in(h))
        h = self.norm(h + self.ffn_out(act))
        return h @ self.obj.weight.t()


def integrated_gradients(model, s, o, steps):
    act = model.ffn_activation(s.view(1)).detach()
    alphas = torch.linspace(0, 1, steps + 1)[1:].unsqueeze(1)
    scaled = (alphas * act).requires_grad_(True)
    probs = F.softmax(model(s.expand(steps), scaled), dim=-1)[:, o]
    (grads,) = torch.autograd.grad(probs.sum(), scaled)
    return act.squeeze(0) * grads.mean(0)


@torch.no_grad()
def report(model, subjects, objects, edited, targets, tag):
    pred = model(subjects).argmax(-1)
    keep = torch.ones_like(subjects, dtype=torch.bool)
    keep[edited] = False
    retain = (pred[keep] == objects[keep]).float().mean().item()
    success = (pred[edited] == targets).float().mean().item()
    p_new = F.softmax(model(subjects[edited]), -1).gather(1, targets[:, None]).mean().item()
    print(f"{tag}: retained {retain:.4f} edit success {success:.4f} p(new) {p_new:.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n_subjects", type=int, default=96)
    parser.add_argument("--n_objects", type=int, default=12)
    parser.add_argument("--d_model", type=int, default=32)
    parser.add_argument("--d_ff", type=int, default=512)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--steps_per_epoch", type=int, default=25)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--ig_steps", type=int, default=20)
    parser.add_argument("--top_k", type=int, default=4)
    parser.add_argument("--n_edits", type=int, default=4)
    parser.add_argument("--lambda1", type=float, default=0.05)
    parser.add_argument("--lambda2", type=float, default=0.1)
    args = parser.parse_args()

    torch.manual_seed(0)
    subjects = torch.arange(args.n_subjects)
    objects = torch.randint(0, args.n_objects, (args.n_subjects,))
    model = FactModel(args.n_subjects, args.n_objects, args.d_model, args.d_ff)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        for _ in range(args.steps_per_epoch):
            loss = F.cross_entropy(model(subjects), objects)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")

    edited = torch.randperm(args.n_subjects)[:args.n_edits]
    targets = (objects[edited] + torch.randint(1, args.n_objects, (args.n_edits,))) % args.n_objects
    report(model, subjects, objects, edited, targets, "before edit")

    for s, new_o in zip(edited.tolist(), targets.tolist()):
        s_t = torch.tensor(s)
        attr = integrated_gradients(model, s_t, objects[s].item(), args.ig_steps)
        neurons = attr.topk(args.top_k).indices.tolist()
        ori_pred_emb = model.obj.weight[objects[s]]
        tgt_emb = model.obj.weight[new_o]
        for pos in neurons:
            model.ffn_out.weight[:, pos] -= args.lambda1 * ori_pred_emb
            model.ffn_out.weight[:, pos] += args.lambda2 * tgt_emb

    report(model, subjects, objects, edited, targets, "after edit")
    print(f"checksum {sum(p.sum().item() for p in model.parameters()):.4f}")


if __name__ == "__main__":
    main()
