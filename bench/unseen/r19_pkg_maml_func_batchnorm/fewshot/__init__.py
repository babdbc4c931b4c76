"""MAML with torch.func (functional_call + grad) on synthetic few-shot image tasks."""
