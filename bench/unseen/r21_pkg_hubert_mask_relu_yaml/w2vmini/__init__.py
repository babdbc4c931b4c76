"""HuBERT-style masked prediction pre-training of a tiny speech encoder (synthetic audio)."""
