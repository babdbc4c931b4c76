from .layers import Attention, EncoderBlock

__all__ = ["Attention", "EncoderBlock"]
