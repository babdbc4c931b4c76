"""CoOp-style prompt learning on top of a frozen (toy) CLIP-like dual encoder."""
