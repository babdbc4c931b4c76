from .config import PromptConfig
from .model import PromptTunedClassifier
from .tasks import TASKS

__all__ = ["PromptConfig", "PromptTunedClassifier", "TASKS"]
