import yaml

CONFIG_YAML = """
seed: 0
data: {n: 384, max_len: 10, feat: 8, classes: 3}
model:
  width: 24
  act: relu
  blocks: [post, post, gated]
train: {epochs: 3, batch: 32, lr: 0.01, wd: 0.02, max_norm: 2.0, ema: 0.9, log_every: 8}
"""


def load():
    return yaml.safe_load(CONFIG_YAML)
