"""Small DenseNet-BC with a shared concatenation buffer (memory-efficient variant)."""
