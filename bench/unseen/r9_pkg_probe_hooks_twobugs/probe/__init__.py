"""probe: tabular MLP with hook-based noise injection and activation-sparsity regularisation."""
