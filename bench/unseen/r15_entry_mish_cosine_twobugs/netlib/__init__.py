from .backbone import SmallResNet
from .heads import CosineClassifier

__all__ = ["SmallResNet", "CosineClassifier"]
