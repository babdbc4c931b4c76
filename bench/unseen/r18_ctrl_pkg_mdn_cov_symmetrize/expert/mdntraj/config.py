import json
from pathlib import Path
from types import SimpleNamespace


def load(name="config.json"):
    with open(Path(__file__).with_name(name)) as fh:
        return SimpleNamespace(**json.load(fh))
