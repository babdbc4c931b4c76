from .data import make_identities
from .losses import BatchHardTripletLoss
from .model import EmbeddingNet
from .sampler import PKSampler

__all__ = ["make_identities", "BatchHardTripletLoss", "EmbeddingNet", "PKSampler"]
