from .model import GPT, GPTConfig
from .lora import LoRALinear, inject_lora, lora_parameters
