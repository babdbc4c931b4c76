from .model import InfiniLM
from .trainer import SegmentTrainer
from .data import make_sequences

__all__ = ["InfiniLM", "SegmentTrainer", "make_sequences"]
