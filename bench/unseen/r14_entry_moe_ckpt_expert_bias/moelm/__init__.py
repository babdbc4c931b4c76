from .model import MoELM
from .data import markov_chain, markov_sequences
