"""Tiny text classifier with attention pooling (PyTorch Lightning)."""
