import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup
from transformers.utils import logging as hf_logging

hf_logging.set_verbosity_error()


class FGM:
    """Fast Gradient Method on the word embeddings (Miyato et al.), as used in many text-classification repos."""

    def __init__(self, model, epsilon=1.0, emb_name="word_embeddings"):
        self.model = model
        self.epsilon = epsilon
        self.emb_name = emb_name
        self.backup = {}

    def attack(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad and self.emb_name in name:
                self.backup[name] = param.data.clone()
                norm = torch.norm(param.grad)
                if norm != 0 and not torch.isnan(norm):
                    r_at = self.epsilon * param.grad / norm
                    param.data.add_(r_at)

    def restore(self):
        for name, param in self.model.named_parameters():
            if param.requires_grad and self.emb_name in name:
                assert name in self.backup
                param.data = self.backup[name]
        self.backup = {}


def make_dataset(n, seq_len, vocab, gen):
    ids = torch.randint(5, vocab, (n, seq_len), generator=gen)
    ids[:, 0] = 2  # [CLS]
    labels = torch.randint(0, 2, (n,), generator=gen)
    trigger = torch.randint(5, 15, (n,), generator=gen) + 10 * labels
    pos = torch.randint(1, seq_len, (n,), generator=gen)
    ids[torch.arange(n), pos] = trigger
    ids[:, 1:][(ids[:, 1:] >= 5) & (ids[:, 1:] < 25) & (torch.arange(1, seq_len) != pos.view(-1, 1))] += 20
    mask = torch.ones_like(ids)
    return TensorDataset(ids, mask, labels)


class Trainer:
    def __init__(self, model, args, train_ds, eval_ds):
        self.model = model
        self.args = args
        g = torch.Generator().manual_seed(args.seed)
        self.train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, generator=g)
        self.eval_loader = DataLoader(eval_ds, batch_size=128)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
        total = len(self.train_loader) * args.epochs
        self.scheduler = get_linear_schedule_with_warmup(self.optimizer, int(0.1 * total), total)
        self.fgm = FGM(model, epsilon=args.adv_eps) if args.adv else None

    def train_step(self, batch):
        ids, mask, labels = batch
        out = self.model(input_ids=ids, attention_mask=mask, labels=labels)
        loss = out.loss
        if self.fgm is not None:
            loss.backward()
            self.fgm.attack()
            loss_adv = self.model(input_ids=ids, attention_mask=mask, labels=labels).loss
            loss_adv.backward()
            total = loss + loss_adv
            self.fgm.restore()
        else:
            total = loss
            total.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad()
        return total.item()

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        correct, n, loss_sum = 0, 0, 0.0
        for ids, mask, labels in self.eval_loader:
            out = self.model(input_ids=ids, attention_mask=mask, labels=labels)
            loss_sum += out.loss.item() * labels.size(0)
            correct += (out.logits.argmax(-1) == labels).sum().item()
            n += labels.size(0)
        self.model.train()
        return loss_sum / n, correct / n

    def fit(self):
        self.model.train()
        for epoch in range(1, self.args.epochs + 1):
            losses = [self.train_step(b) for b in self.train_loader]
            ev_loss, ev_acc = self.evaluate()
            print(f"epoch {epoch} train_total {sum(losses) / len(losses):.4f} "
                  f"eval_loss {ev_loss:.4f} eval_acc {ev_acc:.4f}")


def main():
    parser = argparse.ArgumentParser(description="Tiny BERT classifier with FGM adversarial training")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--adv", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--adv-eps", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=32, num_labels=2,
                        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    model = BertForSequenceClassification(config)
    gen = torch.Generator().manual_seed(args.seed)
    train_ds = make_dataset(384, 16, 100, gen)
    eval_ds = make_dataset(128, 16, 100, gen)
    Trainer(model, args, train_ds, eval_ds).fit()
    emb = model.bert.embeddings.word_embeddings.weight
    print(f"embedding_norm {emb.norm().item():.4f} "
          f"classifier_checksum {model.classifier.weight.abs().sum().item():.4f}")


if __name__ == "__main__":
    main()
