import os
from types import SimpleNamespace

import yaml


def load_hparams(path=None):
    path = path or os.path.join(os.path.dirname(__file__), "config.yaml")
    with open(path) as f:
        return SimpleNamespace(**yaml.safe_load(f))
