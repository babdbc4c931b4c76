from .data import make_blobs
from .matching import match_loss, class_gradient
from .nets import ConvNet
from .synthetic import SyntheticSet
