"""fastattn: a small Transformer encoder using hand-written fused-style autograd Functions."""
