"""charlm: a two-layer LSTM language model trained with truncated BPTT on a synthetic stream."""
