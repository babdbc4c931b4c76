import os

import yaml


def load_config(path=None):
    path = path or os.path.join(os.path.dirname(__file__), "config.yaml")
    with open(path) as f:
        return yaml.safe_load(f)
