import json
import os
from types import SimpleNamespace


def load_config(path=None):
    path = path or os.path.join(os.path.dirname(__file__), "config.json")
    with open(path) as f:
        return SimpleNamespace(**json.load(f))
