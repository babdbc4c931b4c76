"""Configuration loading (YAML shipped inside the package)."""
from importlib import resources

import yaml


def load_config(name="config.yaml"):
    text = resources.files(__package__).joinpath(name).read_text()
    return yaml.safe_load(text)
