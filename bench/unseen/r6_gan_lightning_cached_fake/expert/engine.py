class MiniTrainer:
    """A small stand-in for pytorch_lightning.Trainer (automatic optimization)."""

    def __init__(self, max_epochs):
        self.max_epochs = max_epochs

    def fit(self, module, loader, on_epoch_end=None):
        optimizers = module.configure_optimizers()
        for epoch in range(self.max_epochs):
            module.train()
            sums = [0.0] * len(optimizers)
            for batch_idx, batch in enumerate(loader):
                for opt in optimizers:
                    opt.zero_grad()
                for opt_idx, opt in enumerate(optimizers):
                    loss = module.training_step(batch, batch_idx, opt_idx)
                    loss.backward()
                    opt.step()
                    sums[opt_idx] += loss.item()
            means = [s / len(loader) for s in sums]
            if on_epoch_end is not None:
                on_epoch_end(epoch, means)
