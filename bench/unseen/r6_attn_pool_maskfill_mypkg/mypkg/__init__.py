from .models import TextClassifier

__all__ = ["TextClassifier"]
