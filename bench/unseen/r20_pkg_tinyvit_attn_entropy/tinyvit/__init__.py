"""tinyvit: a small ViT classifier with an attention-entropy regulariser."""
