from .model import TabNet
from .trainer import Trainer

__all__ = ["TabNet", "Trainer"]
