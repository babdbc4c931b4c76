"""declite: Deep Embedded Clustering (DEC/IDEC) on a small synthetic dataset."""
