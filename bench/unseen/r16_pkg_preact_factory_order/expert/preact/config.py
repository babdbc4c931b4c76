import yaml

# Shipped inside the package so that `python -m preact.train` needs no files.
CONFIG_YAML = """
seed: 0
data:
  n: 512
  in_dim: 12
  classes: 3
model:
  stem: 16
  act: lrelu
  stages:
    - {name: s1, block: preact, out: 32}
    - {name: s2, block: preact, out: 32}
    - {name: s3, block: preact, out: 32}
    - {name: s4, block: preact, out: 24}
train:
  epochs: 3
  batch: 64
  lr: 0.05
  momentum: 0.9
  log_every: 6
"""


def load_config():
    return yaml.safe_load(CONFIG_YAML)
