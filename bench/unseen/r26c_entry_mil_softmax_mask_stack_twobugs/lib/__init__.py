from .mil import GatedAttentionMIL
from .data import make_bags
