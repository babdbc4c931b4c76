"""qatlite: a tiny quantization-aware-training toolkit (fake quantization with STE)."""
__version__ = "0.3.1"
