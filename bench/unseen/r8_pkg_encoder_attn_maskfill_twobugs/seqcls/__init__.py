from .model import OrderClassifier

__all__ = ["OrderClassifier"]
