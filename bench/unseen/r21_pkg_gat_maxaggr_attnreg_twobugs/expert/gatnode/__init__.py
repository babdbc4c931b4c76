"""Node classification with a small graph-attention network (synthetic SBM graph)."""
