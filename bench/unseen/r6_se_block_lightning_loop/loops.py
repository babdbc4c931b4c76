def train(module, train_batches, val_batch, epochs):
    optimizer, scheduler = module.configure_optimizers()
    for epoch in range(epochs):
        module.train()
        running = 0.0
        for batch_idx, batch in enumerate(train_batches):
            loss = module.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
        scheduler.step()
        module.eval()
        val_loss, val_acc = module.validation_step(val_batch, 0)
        print(f"epoch {epoch} train loss {running / len(train_batches):.4f} "
              f"val loss {val_loss:.4f} val acc {val_acc:.4f}")
