from collections import defaultdict


class GradMonitor:
    """Records the norm of the gradient reaching the *input* of selected modules (full backward hooks)."""

    def __init__(self):
        self.norms = defaultdict(list)
        self.handles = []

    def attach(self, named_modules):
        for name, module in named_modules:
            self.handles.append(module.register_full_backward_hook(self._hook(name)))

    def _hook(self, name):
        def hook(module, grad_input, grad_output):
            if grad_input[0] is not None:
                self.norms[name].append(grad_input[0].norm().item())
        return hook

    def epoch_summary(self):
        out = {name: sum(v) / len(v) for name, v in self.norms.items()}
        self.norms.clear()
        return out

    def detach(self):
        for h in self.handles:
            h.remove()
