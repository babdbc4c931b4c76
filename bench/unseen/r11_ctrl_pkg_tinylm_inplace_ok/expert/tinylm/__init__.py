"""Tiny prompt-tuned LM with a KV cache, an EMA copy and an auxiliary z-loss."""
