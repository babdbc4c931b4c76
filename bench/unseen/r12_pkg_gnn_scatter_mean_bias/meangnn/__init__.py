"""Mean-aggregation graph convolution written in the MessagePassing style (no PyG needed)."""
