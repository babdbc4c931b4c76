from .model import TiedAutoencoder

__all__ = ["TiedAutoencoder"]
