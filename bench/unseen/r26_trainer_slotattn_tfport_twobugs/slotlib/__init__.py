from .model import SlotAttentionAutoEncoder
from .data import make_sprites
